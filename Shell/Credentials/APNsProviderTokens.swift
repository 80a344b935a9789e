import Foundation

/// APNs provider-token authentication (front-door.md, "Provider tokens"): the keys
/// registered with `apns_key`, and the check of one request's `authorization`.
public struct APNsProviderTokens: Sendable {
    public struct Key: Sendable {
        public let keyID: String
        public let team: String
        public let publicKey: PublicKey

        public init(keyID: String, team: String, publicKey: PublicKey) {
            self.keyID = keyID
            self.team = team
            self.publicKey = publicKey
        }
    }

    public private(set) var keys: [String: Key] = [:]
    /// Tokens that passed, by header and team: a backend sends the same token for up to
    /// an hour, and checking it again (base64, JSON, a signature) is most of a push's
    /// cost. Only their expiry is checked again. A new key forgets them all.
    private var accepted: [String: Accepted] = [:]
    /// The last token that passed, with its team: a backend's pushes all carry the same
    /// one, so `lastAccepted` compares it with the header's bytes before any text is made.
    private var last: (authorization: String, team: String, accepted: Accepted)?

    public init() {}

    /// Registers (or replaces) the ES256 public key for `keyID`, owned by `team`.
    public mutating func register(_ key: Key) {
        keys[key.keyID] = key
        accepted.removeAll()
        last = nil
    }

    /// A refusal: Apple's reason (all are 403) and a sentence.
    public struct Refusal: Error, Equatable {
        public let reason: String
        public let detail: String
    }

    /// A token that passed: when it was issued (it expires an hour later), and whether
    /// its signature was checked (while no key is registered it is not).
    public struct Accepted: Sendable, Equatable {
        public let issuedAt: Double
        public let signatureChecked: Bool
    }

    /// Checks a push's `authorization` header for an app of `team` at `now` (seconds
    /// since 1970). A token that passed is remembered (at most 1,024) until it expires.
    public mutating func check(authorization: String?, team: String, now: Double) -> Result<Accepted, Refusal> {
        let cacheKey = (authorization ?? "") + "\u{0}" + team
        if let known = accepted[cacheKey], Self.stillValid(known, now: now) {
            last = (authorization ?? "", team, known)
            return .success(known)
        }
        let result = verify(authorization: authorization, team: team, now: now)
        if case .success(let passed) = result {
            if accepted.count >= 1024 { accepted.removeAll() }
            accepted[cacheKey] = passed
            last = (authorization ?? "", team, passed)
        }
        return result
    }

    /// The token that passed last, when `authorization` (a header's bytes) is that token
    /// for `team` and it is still valid at `now`; otherwise nil, and `check` decides. A
    /// backend sends the same ~250-byte token on every push: compared as bytes, no text
    /// is made of it.
    public func lastAccepted(authorization: UnsafeBufferPointer<UInt8>, team: String, now: Double) -> Accepted? {
        guard let last, last.team == team, Self.stillValid(last.accepted, now: now) else { return nil }
        let same = last.authorization.utf8.withContiguousStorageIfAvailable { known in
            guard known.count == authorization.count else { return false }
            guard let knownBase = known.baseAddress, let base = authorization.baseAddress else { return true }
            return memcmp(knownBase, base, known.count) == 0
        }
        return same == true ? last.accepted : nil
    }

    static func stillValid(_ known: Accepted, now: Double) -> Bool {
        !hasExpired(issuedAt: known.issuedAt, now: now) && !isFromTheFuture(issuedAt: known.issuedAt, now: now)
    }

    /// Apple refuses a token issued more than an hour ago.
    static func hasExpired(issuedAt: Double, now: Double) -> Bool { now - issuedAt > 3600 }

    /// A token issued more than 5 minutes ahead of the clock would never expire.
    public static func isFromTheFuture(issuedAt: Double, now: Double) -> Bool { issuedAt - now > 300 }

    private func verify(authorization: String?, team: String, now: Double) -> Result<Accepted, Refusal> {
        func refuse(_ reason: String, _ detail: String) -> Result<Accepted, Refusal> {
            .failure(Refusal(reason: reason, detail: detail))
        }
        guard let authorization else {
            return refuse("MissingProviderToken", "no authorization header: APNs needs a provider token")
        }
        guard authorization.lowercased().hasPrefix("bearer ") else {
            return refuse("InvalidProviderToken", "the authorization header is not 'bearer <JWT>'")
        }
        let jwt: JWT
        do {
            jwt = try JWT(String(authorization.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces))
        } catch {
            return refuse("InvalidProviderToken", "the provider token is not a JWT: \(error)")
        }
        guard jwt.header["alg"] == "ES256" else {
            return refuse("InvalidProviderToken", "the provider token's alg must be ES256")
        }
        guard let keyID = jwt.header["kid"]?.stringValue else {
            return refuse("InvalidProviderToken", "the provider token has no kid")
        }
        guard let issuer = jwt.claims["iss"]?.stringValue else {
            return refuse("InvalidProviderToken", "the provider token has no iss (the team id)")
        }
        guard let issuedAt = jwt.seconds("iat") else {
            return refuse("InvalidProviderToken", "the provider token has no numeric iat")
        }
        guard jwt.signature.count == 64 else {
            return refuse("InvalidProviderToken", "an ES256 signature is 64 bytes, not \(jwt.signature.count)")
        }
        if Self.hasExpired(issuedAt: issuedAt, now: now) {
            return refuse("ExpiredProviderToken", "the provider token was issued more than an hour ago")
        }
        if Self.isFromTheFuture(issuedAt: issuedAt, now: now) {
            return refuse("InvalidProviderToken", "the provider token's iat is more than 5 minutes ahead of the clock")
        }
        var checked = false
        if !keys.isEmpty {
            guard let key = keys[keyID] else {
                return refuse("InvalidProviderToken", "no key is registered with id \(keyID)")
            }
            guard key.team == issuer else {
                return refuse("InvalidProviderToken", "key \(keyID) belongs to team \(key.team), not \(issuer)")
            }
            guard key.publicKey.verifies(jwt) else {
                return refuse("InvalidProviderToken", "the provider token's signature does not match key \(keyID)")
            }
            checked = true
        }
        guard issuer == team else {
            return refuse("InvalidProviderToken", "team \(issuer) does not own the topic's app (team \(team))")
        }
        return .success(Accepted(issuedAt: issuedAt, signatureChecked: checked))
    }
}
