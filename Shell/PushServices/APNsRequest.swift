import HTTPMessage
import OrderedJSON

/// A request a backend sends to APNs (`POST /3/device/<token>`): the headers APNs reads
/// and its body bytes, exactly as sent.
public struct APNsRequest: Sendable {
    public var headers: APNsHeaders
    public var body: [UInt8]
    /// The body already parsed, when the caller has it (it must be what `body` says);
    /// saves parsing it a second time.
    public var parsedBody: JSON?
    /// The device token, when not given by a `:path` header.
    public var token: String?
    /// The token of a `:path` the caller read already and found `/3/device/<token>`, the
    /// token an even number of hex digits, as `normalizedToken` gives it (`pathToken(of:)`).
    /// It stands for the path: `headers.path` is not read then, so that a caller holding
    /// the path's bytes need not make text of them (~0.4k instructions a push). Nil: the
    /// path, if any, is `headers.path`, checked and cut here.
    public var normalizedPathToken: String?
    /// Which APNs host the request went to.
    public var environment: APNsEnvironment
}

// Initializers delegate to the memberwise one, kept while the body declares none: one that
// assigns the members copies the request it built (Docs/Performance.md, "Copies the compiler
// makes of a large struct").
extension APNsRequest {
    /// Headers by name in any case (the line protocol's `headers` object).
    public init(
        headers: [String: String], body: [UInt8], parsedBody: JSON? = nil, token: String?,
        environment: APNsEnvironment = .production
    ) {
        var read = APNsHeaders()
        for (name, value) in headers { read.take(name: name.lowercased(), value: value) }
        self.init(headers: read, body: body, parsedBody: parsedBody, token: token, environment: environment)
    }

    /// A push as it came over the network. `pathToken`, from `pathToken(of:)`, stands
    /// for the path when given (`normalizedPathToken`), and the path is then not made text.
    public init(network request: borrowing HTTPRequest, pathToken: String?, environment: APNsEnvironment) {
        self.init(
            headers: APNsHeaders(request, readingPath: pathToken == nil), body: request.body, parsedBody: nil,
            token: nil, normalizedPathToken: pathToken, environment: environment)
    }

    /// The path of a push to a device, before its token.
    public static let devicePath: StaticString = "/3/device/"

    /// The device token of a request's `/3/device/<token>`, lowercased as APNs compares it;
    /// and, when the path is that and the token an even number of hex digits, the token as
    /// `normalizedToken` gives it (`init(network:pathToken:environment:)`'s `pathToken`).
    /// Cut from the path's bytes and judged before any text is made of them.
    public static func pathToken(of request: borrowing HTTPRequest) -> (lowercased: String, normalized: String?) {
        request.withPath { path in
            let bytes = path ?? UnsafeBufferPointer(start: nil, count: 0)
            // Decoded, not cut as characters: a path that does not start with the device
            // path may put the cut inside a character, where the cut text is no String
            // (the fuzzer's find).
            let token = UnsafeBufferPointer(rebasing: bytes[min(devicePath.utf8CodeUnitCount, bytes.count)...])
            if let normalized = normalizedToken(bytes: token) {
                return (normalized, bytes.hasBytePrefix(devicePath) ? normalized : nil)
            }
            return (String(decoding: token, as: UTF8.self).lowercased(), nil)
        }
    }

    public init(
        headers: APNsHeaders, body: [UInt8], parsedBody: JSON? = nil, token: String?,
        environment: APNsEnvironment = .production
    ) {
        self.init(
            headers: headers, body: body, parsedBody: parsedBody, token: token, normalizedPathToken: nil,
            environment: environment)
    }
}

/// The headers APNs reads, from a request's headers taken one by one (names lowercase);
/// any other header is ignored, and a header taken twice keeps its last value.
public struct APNsHeaders: Sendable, Equatable {
    public var method: String?
    public var path: String?
    public var id: String?
    public var topic: String?
    public var collapseID: String?
    public var priority: String?
    public var pushType: String?
    public var expiration: String?
}

extension APNsHeaders {
    /// The fields APNs reads, from a request's headers, `:path` among them.
    public init(_ request: borrowing HTTPRequest) { self.init(request, readingPath: true) }

    /// No header read yet: what `take(name:value:)` fills. (The type declares no
    /// initializer of its own, so that it keeps its memberwise one.)
    public static var empty: APNsHeaders { APNsHeaders() }

    /// The fields APNs reads, from a request's headers; the first of each name. Only
    /// these become text, in one pass over the fields (a lookup each passed over them
    /// seven times), and the values most requests send are the program's own literals.
    /// `readingPath: false` leaves `path` nil, for a request whose path's token stands for
    /// it (`APNsRequest.init(network:pathToken:environment:)`).
    init(_ request: borrowing HTTPRequest, readingPath: Bool) {
        // Read into locals and handed to the memberwise initializer: a value the
        // closure wrote into was copied (Docs/Performance.md, "Copies the compiler makes").
        var method: String?
        var id: String?
        var topic: String?
        var collapseID: String?
        var priority: String?
        var pushType: String?
        var expiration: String?
        request.headers.forEachField { name, value in
            func named(_ literal: StaticString) -> Bool { name.equalsBytes(of: literal) }
            func valueIs(_ literal: StaticString) -> Bool { value.equalsBytes(of: literal) }
            func text() -> String { SmallASCII.string(value) }
            switch name.count {
            case 7:
                if method == nil && named(":method") {
                    method = valueIs("POST") ? "POST" : text()
                } else if id == nil && named("apns-id") {
                    id = text()
                }
            case 10: if topic == nil && named("apns-topic") { topic = text() }
            case 13:
                if priority == nil && named("apns-priority") {
                    priority = valueIs("10") ? "10" : valueIs("5") ? "5" : text()
                }
            case 14:
                if pushType == nil && named("apns-push-type") {
                    pushType = valueIs("alert") ? "alert" : valueIs("background") ? "background" : text()
                }
            case 15: if expiration == nil && named("apns-expiration") { expiration = text() }
            case 16: if collapseID == nil && named("apns-collapse-id") { collapseID = text() }
            default: break
            }
        }
        self.init(
            method: method, path: readingPath ? request.path : nil, id: id, topic: topic, collapseID: collapseID,
            priority: priority, pushType: pushType, expiration: expiration)
    }

    /// One header as the line protocol or a dictionary gives it (the last of a name
    /// wins): its length picks the one or two names it can be before any text is compared.
    public mutating func take(name: String, value: String) {
        switch name.utf8.count {
        case 5: if name == ":path" { path = value }
        case 7:
            if name == ":method" { method = value } else if name == "apns-id" { id = value }
        case 10: if name == "apns-topic" { topic = value }
        case 13:
            if name == "apns-priority" { priority = value }
        case 14: if name == "apns-push-type" { pushType = value }
        case 15: if name == "apns-expiration" { expiration = value }
        case 16: if name == "apns-collapse-id" { collapseID = value }
        default: break
        }
    }
}

/// What APNs answers a request it refuses: the HTTP status and the `reason`.
public struct APNsRejection: Error, Sendable, Equatable, CustomStringConvertible {
    public let status: Int
    public let reason: String
    /// A sentence for people; APNs itself sends only the reason.
    public let detail: String
    /// For 410 answers: when the token stopped being valid, in milliseconds.
    public let timestamp: Int64?

    public init(status: Int, reason: String, detail: String, timestamp: Int64? = nil) {
        self.status = status
        self.reason = reason
        self.detail = detail
        self.timestamp = timestamp
    }

    public var description: String { "\(status) \(reason): \(detail)" }
}

/// The APNs host a request was sent to: `api.push.apple.com` or
/// `api.sandbox.push.apple.com`. A token works only in the environment that issued it.
public enum APNsEnvironment: String, Sendable, CaseIterable {
    case production, development
}

/// What APNs knows of a device token: the app (bundle) it was issued to, in which
/// environment, and whether it still is the app's (nil) or was retired by an
/// uninstall or a rotation, and when (ms since 1970).
public struct APNsTokenRecord: Sendable, Equatable {
    public var bundleID: String
    public var environment: APNsEnvironment
    public var retiredAt: Int64?
    /// The developer team that owns the app (what a provider token must name).
    public var team: String

    public init(
        bundleID: String, environment: APNsEnvironment = .production, retiredAt: Int64? = nil,
        team: String = "TEAM000001"
    ) {
        self.bundleID = bundleID
        self.environment = environment
        self.retiredAt = retiredAt
        self.team = team
    }
}

/// A request APNs accepted, ready for the device that holds `token`.
public struct APNsNotification: Sendable, Equatable {
    /// The device token, lowercase.
    public var token: String
    /// The `apns-id` header when the sender gave one; APNs makes one up otherwise.
    public var apnsID: String?
    public var pushType: String?
    public var priority: Int
    public var collapseID: String?
    public var payload: JSONObject
    /// `apns-expiration` (UNIX seconds): until when APNs stores it for an offline device;
    /// 0: tried once, never stored; nil: stored as APNs's storage policy says.
    public var expiration: Int64? = nil
}

extension APNsNotification {
    /// A notification read back from the shell's state document, as `APNsRequest.validate`
    /// made it. A factory, not an initializer: the type declares none, so that it keeps
    /// its memberwise one (Docs/Performance.md, "Copies the compiler makes").
    public static func restored(
        token: String, apnsID: String?, pushType: String?, priority: Int, collapseID: String?, payload: JSONObject,
        expiration: Int64?
    ) -> APNsNotification {
        APNsNotification(
            token: token, apnsID: apnsID, pushType: pushType, priority: priority, collapseID: collapseID,
            payload: payload, expiration: expiration)
    }

    /// Where iOS hands an accepted push of this type: nil for the app's notification
    /// callbacks (alert, background, or no type), else the system framework that
    /// takes it, which the push plugin does not handle (no `events` item).
    public var systemHandler: String? {
        switch pushType {
        case "voip", "pushtotalk": "PushKit (\(pushType!))"
        case "liveactivity": "ActivityKit (a Live Activity update)"
        case "complication": "ClockKit (the watch complication)"
        case "fileprovider": "the File Provider extension"
        case "location": "the Location Push Service extension"
        case "widgets": "WidgetKit (a widget reload)"
        case "mdm": "the device's MDM agent"
        default: nil
        }
    }
}

extension APNsRequest {
    public static let pushTypes = [
        "alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity",
        "pushtotalk", "widgets",
    ]

    /// The topic suffix some push types require (APNSwift's push-type docs).
    static let topicSuffixes = [
        "voip": ".voip", "complication": ".complication", "fileprovider": ".pushkit.fileprovider",
        "location": ".location-query", "liveactivity": ".push-type.liveactivity", "pushtotalk": ".voip-ptt",
        "widgets": ".push-type.widgets",
    ]

    /// Validates as APNs does, in the order of pushy's mock server: apns-id, method,
    /// topic, collapse id, priority, push type, path and token, the token's record
    /// (never issued or of the other environment: `BadDeviceToken`; another app's:
    /// `DeviceTokenNotForTopic`; retired: 410 `Unregistered` with its time), expiration,
    /// empty body, size. Then the body must be a JSON object (APNs documents no reason
    /// for that; see Docs/Shell.md). A push without `aps` passes. `tokens` looks a
    /// lowercase token up in the world, as APNs does; it is the only outside input.
    ///
    /// `authorize`, when given, runs where pushy's mock checks authentication (after the
    /// token and topic, before the payload) with the token's record, and its refusal
    /// answers.
    public func validate(
        tokens: (String) -> APNsTokenRecord?, authorize: (APNsTokenRecord) -> APNsRejection? = { _ in nil }
    ) -> Result<APNsNotification, APNsRejection> {
        func reject(_ status: Int, _ reason: String, _ detail: String) -> Result<APNsNotification, APNsRejection> {
            .failure(APNsRejection(status: status, reason: reason, detail: detail))
        }
        if let id = headers.id, !Self.isCanonicalUUID(id) {
            return reject(400, "BadMessageId", "apns-id '\(id)' is not a canonical UUID (8-4-4-4-12 hex digits)")
        }
        if let method = headers.method, method != "POST" {
            return reject(405, "MethodNotAllowed", "the method must be POST, got \(method)")
        }
        guard let topic = headers.topic, !topic.isEmpty else {
            return reject(400, "MissingTopic", "apns-topic is required (token-based authentication)")
        }
        if let collapse = headers.collapseID, collapse.utf8.count > 64 {
            return reject(
                400, "BadCollapseId", "apns-collapse-id is \(collapse.utf8.count) bytes; at most 64 are allowed")
        }
        var priority = 10
        if let text = headers.priority {
            guard let value = Int(text), [10, 5, 1].contains(value) else {
                return reject(400, "BadPriority", "apns-priority must be 10, 5 or 1, got '\(text)'")
            }
            priority = value
        }
        let pushType = headers.pushType
        if let pushType, !Self.pushTypes.contains(pushType) {
            return reject(
                400, "InvalidPushType",
                "apns-push-type '\(pushType)' is not one of \(Self.pushTypes.joined(separator: ", "))")
        }
        var token = self.token ?? ""
        var known: String?
        if let normalizedPathToken {
            (token, known) = (normalizedPathToken, normalizedPathToken)
        } else if let path = headers.path {
            // As bytes: Character by Character, the prefix test and the cut were over
            // 1,000 instructions of every push. The prefix is ASCII, so the cut is a
            // character's edge.
            let prefix = Self.devicePath
            guard path.hasBytePrefix(prefix) else {
                return reject(404, "BadPath", "the path must be /3/device/<token>, got \(path)")
            }
            token = String(path[path.utf8.index(path.startIndex, offsetBy: prefix.utf8CodeUnitCount)...])
        }
        if token.isEmpty { return reject(400, "MissingDeviceToken", "the device token is empty") }
        guard let normalized = known ?? Self.normalizedToken(token) else {
            return reject(400, "BadDeviceToken", "the device token must be an even number of hex digits")
        }
        guard let record = tokens(normalized) else {
            return reject(400, "BadDeviceToken", "no app was ever issued this token")
        }
        guard record.environment == environment else {
            return reject(
                400, "BadDeviceToken",
                "the token was issued in the \(record.environment.rawValue) environment; this request went to \(environment.rawValue)"
            )
        }
        let expectedTopic = record.bundleID + (pushType.flatMap { Self.topicSuffixes[$0] } ?? "")
        if topic != expectedTopic {
            return reject(
                400, "DeviceTokenNotForTopic", "the token belongs to topic \(expectedTopic), not \(topic)")
        }
        if let refusal = authorize(record) { return .failure(refusal) }
        if let retired = record.retiredAt {
            return .failure(
                APNsRejection(
                    status: 410, reason: "Unregistered",
                    detail:
                        "the token is no longer active for the topic (the app was uninstalled or its token rotated)",
                    timestamp: retired))
        }
        if let expiration = headers.expiration, Int64(expiration) == nil || expiration.hasPrefix("-") {
            return reject(
                400, "BadExpirationDate", "apns-expiration must be a UNIX epoch in seconds, got '\(expiration)'")
        }
        if body.isEmpty { return reject(400, "PayloadEmpty", "the body is empty") }
        let limit = pushType == "voip" ? 5120 : 4096
        if body.count > limit {
            return reject(413, "PayloadTooLarge", "the payload is \(body.count) bytes; the limit is \(limit)")
        }
        let payload: JSONObject
        switch Self.payloadObject(body, parsed: parsedBody) {
        case .success(let object): payload = object
        case .failure(let rejection): return .failure(rejection)
        }
        return .success(
            APNsNotification(
                token: normalized, apnsID: headers.id, pushType: pushType, priority: priority,
                collapseID: headers.collapseID, payload: payload,
                expiration: headers.expiration.flatMap { Int64($0) }))
    }

    /// The body as a JSON object whose `aps`, if any, is an object. APNs documents no
    /// answer for anything else; the shell answers 400 `BadPayload` with the reason.
    static func payloadObject(_ body: [UInt8], parsed: JSON?) -> Result<JSONObject, APNsRejection> {
        let value: JSON
        do {
            value = try parsed ?? JSON.parse(body)
        } catch {
            return .failure(
                APNsRejection(status: 400, reason: "BadPayload", detail: "the payload is not JSON: \(error)"))
        }
        guard let object = value.objectValue else {
            return .failure(
                APNsRejection(
                    status: 400, reason: "BadPayload",
                    detail: "the payload must be a JSON object, not \(value.typeName)"))
        }
        if let aps = object["aps"], aps.objectValue == nil {
            return .failure(
                APNsRejection(status: 400, reason: "BadPayload", detail: "aps must be an object, not \(aps.typeName)"))
        }
        return .success(object)
    }

    /// A device token as APNs compares it (lowercase), or nil when it is not an even
    /// number of hex digits. Every push asks this of its 64 or more digits: eight bytes at
    /// a time, and a copy only when some digit is uppercase.
    public static func normalizedToken(_ token: String) -> String? {
        var token = token
        let (valid, uppercase) = token.withUTF8(judge)
        guard valid else { return nil }
        return uppercase ? token.lowercased() : token
    }

    /// `normalizedToken` of the token the bytes hold, made a `String` once (lowercased as it
    /// is made): a push's token is read from its path's bytes, where a `String` cut from the
    /// path and then judged was ~0.5k instructions more.
    public static func normalizedToken(bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let (valid, uppercase) = judge(bytes)
        guard valid else { return nil }
        guard uppercase else { return String(decoding: bytes, as: UTF8.self) }
        return String(unsafeUninitializedCapacity: bytes.count) { text in
            for (index, byte) in bytes.enumerated() { text[index] = byte >= 0x41 && byte <= 0x46 ? byte + 0x20 : byte }
            return bytes.count
        }
    }

    /// Whether `bytes` are an even number of hex digits, and whether one is uppercase.
    private static func judge(_ bytes: UnsafeBufferPointer<UInt8>) -> (valid: Bool, uppercase: Bool) {
        guard bytes.count % 2 == 0 else { return (false, false) }
        guard let base = bytes.baseAddress else { return (true, false) }
        var uppercase = false
        var index = 0
        while bytes.count - index >= 8 {
            let word = HexWord(ByteWord(at: base + index).bits)
            guard word.isAllHex else { return (false, false) }
            uppercase = uppercase || word.hasUppercase
            index += 8
        }
        for byte in bytes[index...] {
            guard isHexDigit(byte) else { return (false, false) }
            uppercase = uppercase || byte >= 0x41 && byte <= 0x46
        }
        return (true, uppercase)
    }

    /// Eight bytes of a token, tested at once. Each test adds to every byte a bias that
    /// carries into its top bit exactly when the byte is in range; no byte overflows into
    /// the next, because a byte past ASCII fails first.
    struct HexWord {
        let bits: UInt64
        private static let ones: UInt64 = 0x0101_0101_0101_0101
        private static let highs: UInt64 = 0x8080_8080_8080_8080

        init(_ bits: UInt64) { self.bits = bits }

        /// The top bit of each byte of `word` that lies in `low...high` (both below 0x80).
        private static func inRange(_ word: UInt64, _ low: UInt8, _ high: UInt8) -> UInt64 {
            (word &+ ones &* UInt64(0x80 - low)) & ~(word &+ ones &* UInt64(0x7F - high)) & highs
        }

        /// Every byte is `0-9`, `a-f` or `A-F`.
        var isAllHex: Bool {
            guard bits & Self.highs == 0 else { return false }
            let lowered = bits | Self.ones &* 0x20
            return Self.inRange(bits, 0x30, 0x39) | Self.inRange(lowered, 0x61, 0x66) == Self.highs
        }

        /// Some byte is `A-F` (asked only of a word that `isAllHex`).
        var hasUppercase: Bool { Self.inRange(bits, 0x41, 0x46) != 0 }
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        byte &- 0x30 < 10 || (byte | 0x20) &- 0x61 < 6
    }

    static func isCanonicalUUID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                if byte != UInt8(ascii: "-") { return false }
            } else if !isHexDigit(byte) {
                return false
            }
        }
        return true
    }
}
