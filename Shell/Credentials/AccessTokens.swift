import Foundation

/// The OAuth access tokens the token endpoint issued (front-door.md, "OAuth 2 token
/// endpoint"): each with when it expires and the project it belongs to. A token is
/// forgotten once it has expired, and at most `capacity` live at once, the oldest going
/// first, so memory stays bounded however many are asked for.
public struct AccessTokens: Sendable {
    public struct Grant: Sendable, Equatable {
        /// Milliseconds since 1970.
        public let expires: Int64
        /// The service account's project; nil for a token issued while no key was
        /// registered, which may send to any project.
        public let project: String?

        public init(expires: Int64, project: String?) {
            self.expires = expires
            self.project = project
        }
    }

    public let capacity: Int
    private var grants: [String: Grant] = [:]
    /// Tokens in the order they were issued; every token lives as long, so this is
    /// also the order they expire in. Entries before `head` are gone.
    private var issued: [String] = []
    private var head = 0
    /// The token `grant(forBytes:now:)` last found live, as its bytes, and its grant: a
    /// client sends one token for its hour, and comparing bytes spares making text of
    /// it and hashing it on every message. Cleared whenever `grants` changes.
    private var last: (token: [UInt8], grant: Grant)?

    public init(capacity: Int = 100_000) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    /// The tokens not yet forgotten, oldest first, with their grants (a world's state file
    /// keeps them; some may have expired since).
    public var issuedInOrder: [(token: String, grant: Grant)] {
        issued[head...].compactMap { token in grants[token].map { (token, $0) } }
    }

    /// How many tokens are live (issued, and not yet found expired or pushed out).
    public var count: Int { grants.count }

    /// Remembers `token` until it expires, forgetting the expired and the oldest first.
    public mutating func issue(_ token: String, _ grant: Grant, now: Int64) {
        last = nil
        forget(now: now, making: 1)
        grants[token] = grant
        issued.append(token)
    }

    /// Makes a new token as Google's look (`ya29.` and random base64url), remembers it for
    /// `project` until `now + lifetime` (milliseconds), and returns it.
    public mutating func issue(project: String?, lifetime: Int64, now: Int64) -> String {
        var random = SystemRandomNumberGenerator()
        let token = "ya29.cx-" + JWT.base64URLEncode((0..<24).map { _ in UInt8.random(in: 0...255, using: &random) })
        issue(token, Grant(expires: now + lifetime, project: project), now: now)
        return token
    }

    /// The grant of a live token; nil for a token never issued, expired or pushed out.
    public mutating func grant(for token: String, now: Int64) -> Grant? {
        guard let grant = grants[token] else { return nil }
        guard grant.expires > now else {
            grants[token] = nil
            last = nil
            return nil
        }
        return grant
    }

    /// `grant(for:now:)` of a token as the request's bytes (decoded as UTF-8 when made text).
    public mutating func grant(forBytes token: UnsafeBufferPointer<UInt8>, now: Int64) -> Grant? {
        if let last, last.grant.expires > now, Self.same(last.token, token) { return last.grant }
        guard let grant = grant(for: String(decoding: token, as: UTF8.self), now: now) else { return nil }
        last = (Array(token), grant)
        return grant
    }

    private static func same(_ known: [UInt8], _ token: UnsafeBufferPointer<UInt8>) -> Bool {
        known.withUnsafeBufferPointer { known in
            guard known.count == token.count else { return false }
            guard let knownBase = known.baseAddress, let base = token.baseAddress else { return true }
            return memcmp(knownBase, base, known.count) == 0
        }
    }

    /// Drops tokens from the oldest on while they have expired or `room` new ones would
    /// pass the capacity.
    private mutating func forget(now: Int64, making room: Int) {
        while head < issued.count {
            let oldest = issued[head]
            if let grant = grants[oldest], grant.expires > now, grants.count + room <= capacity { break }
            grants[oldest] = nil
            head += 1
        }
        if head > 1024 && head * 2 > issued.count {
            issued.removeFirst(head)
            head = 0
        }
    }
}
