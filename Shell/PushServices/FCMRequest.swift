import OrderedJSON

/// A `POST /v1/projects/{id}/messages:send` body, exactly as sent.
public struct FCMRequest: Sendable {
    public var body: [UInt8]
    /// The body already parsed, when the caller has it; saves parsing it again.
    public var parsedBody: JSON?

    public init(body: [UInt8], parsedBody: JSON? = nil) {
        self.body = body
        self.parsedBody = parsedBody
    }
}

/// Who a message is for.
public enum FCMTarget: Sendable, Hashable {
    case token(String)
    /// A Firebase installation id, where the newer SDKs allow it instead of a token.
    case fid(String)
    case topic(String)
    /// A topic condition, parsed once when the message is validated.
    case condition(FCMCondition.Expression)
}

/// What FCM knows of a registration token (or installation id): the Firebase
/// project of its app, and whether it was retired (uninstall or rotation).
public struct FCMTokenRecord: Sendable, Equatable {
    public var project: String
    public var retired: Bool

    public init(project: String, retired: Bool = false) {
        self.project = project
        self.retired = retired
    }
}

/// A message FCM accepted.
public struct FCMMessage: Sendable, Equatable {
    public var target: FCMTarget
    public var validateOnly = false
    /// `message.data`, then `android.data` keys it did not have.
    public var data: JSONStringMap
    /// Title and body: `android.notification` wins over `notification`.
    public var title: String?
    public var body: String?
    /// `android.notification.tag` (DEL-5).
    public var tag: String?
    public var collapseKey: String?
    /// `HIGH` or `NORMAL`, uppercased; nil when not given.
    public var priority: String?

    /// A notification message has a `notification` or `android.notification` block;
    /// FCM displays it itself when the app is not in the foreground.
    public var isNotificationMessage: Bool
    /// `android.ttl` in seconds: how long FCM keeps it for an offline device (0: now or
    /// never); nil: FCM's default, 4 weeks.
    public var ttlSeconds: Double? = nil
    /// `android.notification.notification_count`: the number the launcher's badge shows
    /// for the app (PH-5); nil when not given.
    public var notificationCount: Int? = nil
    /// `android.notification.channel_id` and `icon` (PH-6).
    public var channelID: String? = nil
    public var icon: String? = nil
}

// The validator and the reader use the memberwise initializer, kept while the body declares
// none: one that assigns the members copies the message it built (Docs/Performance.md, "Copies
// the compiler makes of a large struct").
extension FCMMessage {
    /// A message FCM accepted, as the shell saves an offline phone's queue (`validateOnly`
    /// is false for every message kept).
    public init(
        target: FCMTarget, data: JSONStringMap, title: String?, body: String?, tag: String?, collapseKey: String?,
        priority: String?, isNotificationMessage: Bool, ttlSeconds: Double?, notificationCount: Int?,
        channelID: String?, icon: String?
    ) {
        self.init(
            target: target, validateOnly: false, data: data, title: title, body: body, tag: tag,
            collapseKey: collapseKey, priority: priority, isNotificationMessage: isNotificationMessage,
            ttlSeconds: ttlSeconds, notificationCount: notificationCount, channelID: channelID, icon: icon)
    }
}

extension FCMRequest {
    static let requestFields = ["message", "validate_only"]

    /// A message's members, found in one pass over it (a lookup each passed over it seven
    /// times), with the first name FCM does not know. `name` and the recipient's fields
    /// are known; `target(of:)` reads the recipient.
    struct MessageMembers {
        var data: JSON?
        var notification: JSON?
        var android: JSON?
        var apns: JSON?
        var webpush: JSON?
        var options: JSON?
        var unknown: String?

        init(_ message: JSONObject) {
            for (key, value) in message {
                switch key {
                case "data": data = value
                case "notification": notification = value
                case "android": android = value
                case "apns": apns = value
                case "webpush": webpush = value
                case "fcm_options": options = value
                case "name", "token", "fid", "topic", "condition": break
                default: if unknown == nil { unknown = key }
                }
            }
        }
    }

    static let notificationFields = ["title", "body", "image"]
    static let androidFields = [
        "collapse_key", "priority", "ttl", "restricted_package_name", "data", "notification", "fcm_options",
        "direct_boot_ok", "bandwidth_constrained_ok", "restricted_satellite_ok",
    ]
    static let androidNotificationFields = [
        "title", "body", "icon", "color", "sound", "tag", "click_action", "body_loc_key", "body_loc_args",
        "title_loc_key", "title_loc_args", "channel_id", "ticker", "sticky", "event_time", "local_only",
        "notification_priority", "default_sound", "default_vibrate_timings", "default_light_settings",
        "vibrate_timings", "visibility", "notification_count", "light_settings", "image", "proxy",
    ]
    static let apnsFields = ["headers", "payload", "fcm_options", "live_activity_token"]
    static let webpushFields = ["headers", "data", "notification", "fcm_options"]
    /// The largest message, counting data keys and values and the notification text.
    public static let maxPayloadBytes = 4096
    /// Whether the data's keys and values (`dataBytes` of them) and the notification's text,
    /// counted together, are within `maxPayloadBytes`.
    @inline(__always)
    static func fitsPayload(dataBytes: Int, title: String?, body: String?) -> Bool {
        dataBytes + (title?.utf8.count ?? 0) + (body?.utf8.count ?? 0) <= maxPayloadBytes
    }
    /// Four weeks, FCM's longest time to live.
    public static let maxTTLSeconds = 2_419_200.0

    /// Validates the message as FCM's HTTP v1 API does (see
    /// `../shared/spec/apns-fcm-rules.md`). Words FCM is known to use are used
    /// verbatim; the rest are the shell's, listed in Docs/Shell.md.
    public func validate() -> Result<FCMMessage, FCMError> {
        do {
            return .success(try validated())
        } catch {
            return .failure(error)
        }
    }

    /// Where a valid message goes: the project it is sent in (the path's `{id}`,
    /// `project`, or for a token the token's own), or why FCM refuses it: an unknown
    /// or retired token is 404 `UNREGISTERED`, a token of another project 403
    /// `SENDER_ID_MISMATCH`. Topics and conditions go to `project ?? defaultProject`.
    /// It throws rather than returning a `Result`: a `Result` bound by a `switch` was
    /// copied and freed through its generic witnesses, on every message.
    public static func route(
        _ target: FCMTarget, project: String?, defaultProject: String, tokens: (FCMTarget) -> FCMTokenRecord?
    ) throws(FCMError) -> String {
        switch target {
        case .token, .fid:
            guard let record = tokens(target), !record.retired else { throw .unregistered }
            if let project, project != record.project { throw .senderIDMismatch(project: project) }
            return record.project
        case .topic, .condition:
            return project ?? defaultProject
        }
    }

    /// `validate()` as a throwing call: the message is the caller's as made, where a
    /// `Result`'s payload bound by a `switch` was copied and both then freed (a retain
    /// and a release for each of its strings and collections).
    public func validated() throws(FCMError) -> FCMMessage {
        if parsedBody == nil, let message = body.withUnsafeBufferPointer(FCMMessageReader.message) {
            return message
        }
        let root: JSON
        do {
            root = try parsedBody ?? JSON.parse(body)
        } catch {
            throw .invalidArgument("Invalid JSON payload received. \(error)")
        }
        guard let request = root.objectValue else {
            throw .invalidArgument(
                "Invalid JSON payload received. The request must be an object, not \(root.typeName).")
        }
        try Self.rejectUnknown(in: request, allowed: Self.requestFields, at: nil)
        var validateOnly = false
        if let flag = request["validate_only"] {
            guard case .bool(let value) = flag else { throw Self.wrongType("validate_only", "TYPE_BOOL", flag) }
            validateOnly = value
        }
        guard let messageValue = request["message"] else { throw .invalidArgument("The request has no message.") }
        guard let message = messageValue.objectValue else {
            throw Self.wrongType("message", "TYPE_MESSAGE", messageValue)
        }
        let members = MessageMembers(message)
        if let unknown = members.unknown { throw Self.unknownName(unknown, at: "message") }

        let target = try Self.target(of: message)
        var data = try Self.stringMap(members.data, at: "message.data", reservedKeysChecked: true)
        var title: String?
        var body: String?
        var isNotificationMessage = false
        if let value = members.notification {
            let notification = try Self.object(value, at: "message.notification", allowed: Self.notificationFields)
            title = try Self.string(notification["title"], at: "message.notification.title")
            body = try Self.string(notification["body"], at: "message.notification.body")
            _ = try Self.string(notification["image"], at: "message.notification.image")
            isNotificationMessage = true
        }
        var tag: String?
        var notificationCount: Int?
        var channelID: String?
        var icon: String?
        var collapseKey: String?
        var priority: String?
        var ttlSeconds: Double?
        if let value = members.android {
            let android = try Self.object(value, at: "message.android", allowed: Self.androidFields)
            collapseKey = try Self.string(android["collapse_key"], at: "message.android.collapse_key")
            if let text = try Self.string(android["priority"], at: "message.android.priority") {
                guard ["HIGH", "NORMAL"].contains(text.uppercased()) else {
                    throw .invalidArgument("Invalid value at 'message.android.priority' (TYPE_ENUM), \"\(text)\"")
                }
                priority = text.uppercased()
            }
            if let ttl = try Self.string(android["ttl"], at: "message.android.ttl") {
                try Self.checkTTL(ttl)
                ttlSeconds = Double(ttl.dropLast())
            }
            _ = try Self.string(android["restricted_package_name"], at: "message.android.restricted_package_name")
            for (key, value) in try Self.stringMap(
                android["data"], at: "message.android.data", reservedKeysChecked: true)
            where !data.contains(key) {
                data[key] = value
            }
            if let value = android["notification"] {
                let notification = try Self.object(
                    value, at: "message.android.notification", allowed: Self.androidNotificationFields)
                title = try Self.string(notification["title"], at: "message.android.notification.title") ?? title
                body = try Self.string(notification["body"], at: "message.android.notification.body") ?? body
                tag = try Self.string(notification["tag"], at: "message.android.notification.tag")
                channelID = try Self.string(notification["channel_id"], at: "message.android.notification.channel_id")
                icon = try Self.string(notification["icon"], at: "message.android.notification.icon")
                if let count = notification["notification_count"] {
                    guard let number = count.integerValue, (0...Int64(Int32.max)).contains(number) else {
                        throw Self.wrongType("message.android.notification.notification_count", "TYPE_INT32", count)
                    }
                    notificationCount = Int(number)
                }
                if let color = try Self.string(notification["color"], at: "message.android.notification.color"),
                    !Self.isColor(color)
                {
                    throw .invalidArgument("android.notification.color must be in the form #RRGGBB, got '\(color)'")
                }
                isNotificationMessage = true
            }
            try Self.checkOptions(android["fcm_options"], at: "message.android.fcm_options")
        }
        if let value = members.apns {
            let apns = try Self.object(value, at: "message.apns", allowed: Self.apnsFields)
            _ = try Self.stringMap(apns["headers"], at: "message.apns.headers", reservedKeysChecked: false)
            if let payload = apns["payload"], payload.objectValue == nil {
                throw Self.wrongType("message.apns.payload", "TYPE_MESSAGE", payload)
            }
        }
        if let value = members.webpush {
            let webpush = try Self.object(value, at: "message.webpush", allowed: Self.webpushFields)
            _ = try Self.stringMap(webpush["headers"], at: "message.webpush.headers", reservedKeysChecked: false)
            _ = try Self.stringMap(webpush["data"], at: "message.webpush.data", reservedKeysChecked: false)
            if let link = webpush["fcm_options"]?["link"]?.stringValue, !link.hasPrefix("https://") {
                throw .invalidArgument("webpush.fcm_options.link must be an https URL, got '\(link)'")
            }
        }
        try Self.checkOptions(members.options, at: "message.fcm_options")

        let dataBytes = data.reduce(0) { $0 + $1.key.utf8.count + ($1.value.stringValue?.utf8.count ?? 0) }
        guard Self.fitsPayload(dataBytes: dataBytes, title: title, body: body) else {
            throw .invalidArgument("Android message is too big")
        }

        return FCMMessage(
            target: target, validateOnly: validateOnly, data: JSONStringMap(data), title: title, body: body, tag: tag,
            collapseKey: collapseKey, priority: priority, isNotificationMessage: isNotificationMessage,
            ttlSeconds: ttlSeconds, notificationCount: notificationCount, channelID: channelID, icon: icon)
    }

    /// The fields that name a message's recipient, in the order FCM's error lists them.
    static let recipientFields = ["token", "fid", "topic", "condition"]

    static func target(of message: JSONObject) throws(FCMError) -> FCMTarget {
        // One pass over the members, and no text made until something is wrong: the
        // four names filtered into an array and the field's path interpolated cost
        // ~2,000 instructions of every message.
        var present: UInt8 = 0
        var found: (field: String, value: JSON)?
        for (key, value) in message {
            guard let index = recipientFields.firstIndex(of: key) else { continue }
            present |= 1 << index
            found = (key, value)
        }
        guard let (field, named) = found else { throw .invalidArgument("Recipient of the message is not set.") }
        guard present.nonzeroBitCount == 1 else {
            let named = recipientFields.indices.filter { present & 1 << $0 != 0 }.map { recipientFields[$0] }
            throw .invalidArgument(
                "Exactly one of fid, token, topic or condition must be specified; this message sets \(named.joined(separator: " and "))."
            )
        }
        guard let value = named.stringValue else { throw wrongType("message.\(field)", "TYPE_STRING", named) }
        switch field {
        case "token":
            guard isTokenShaped(value) else {
                throw .invalidArgument("The registration token is not a valid FCM registration token")
            }
            return .token(value)
        case "fid":
            guard isTokenShaped(value) else {
                throw .invalidArgument("The fid is not a valid Firebase installation id")
            }
            return .fid(value)
        case "topic":
            let name = value.hasPrefix("/topics/") ? String(value.dropFirst("/topics/".count)) : value
            guard isTopicName(name) else { throw .invalidArgument("Malformed topic name: '\(value)'") }
            return .topic(name)
        default:
            switch FCMCondition.parse(value) {
            case .failure(let error): throw error
            case .success(let condition): return .condition(condition)
            }
        }
    }

    /// `^[a-zA-Z0-9-_.~%]{1,900}$`.
    public static func isTopicName(_ name: String) -> Bool {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~%".utf8)
        return (1...900).contains(name.utf8.count) && name.utf8.allSatisfy { allowed.contains($0) }
    }

    /// Every message's token passes here (FCM's are 150 bytes or more): its contiguous
    /// bytes are checked, not the generic UTF-8 view.
    /// Printable ASCII other than space, 1 to 4,096 bytes: eight bytes at a time (a
    /// registration token is some 160).
    static func isTokenShaped(_ token: String) -> Bool {
        var token = token
        return token.withUTF8(isTokenShaped)
    }

    /// `isTokenShaped` of a token's bytes, before any text is made of them.
    static func isTokenShaped(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !bytes.isEmpty, bytes.count <= 4096, let base = bytes.baseAddress else { return false }
        var index = 0
        while bytes.count - index >= 8 {
            let word = ByteWord(at: base + index)
            if word.hasHighByte || word.hasByte(below: 0x21) || word.contains(0x7F) { return false }
            index += 8
        }
        return bytes[index...].allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    static func isColor(_ color: String) -> Bool {
        let bytes = Array(color.utf8)
        return bytes.count == 7 && bytes[0] == UInt8(ascii: "#") && bytes.dropFirst().allSatisfy(APNsRequest.isHexDigit)
    }

    static func checkTTL(_ text: String) throws(FCMError) {
        let digits = text.hasSuffix("s") ? String(text.dropLast()) : ""
        let parts = digits.split(separator: ".", omittingEmptySubsequences: false)
        let wellFormed =
            !digits.isEmpty && parts.count <= 2 && parts[0].allSatisfy(\.isASCII) && !parts[0].isEmpty
            && parts.allSatisfy { $0.allSatisfy { $0 >= "0" && $0 <= "9" } }
            && (parts.count == 1 || (1...9).contains(parts[1].count))
        guard wellFormed, let seconds = Double(digits) else {
            throw .invalidArgument(
                "Invalid value at 'message.android.ttl' (type.googleapis.com/google.protobuf.Duration), \"\(text)\"")
        }
        guard seconds <= maxTTLSeconds else {
            throw .invalidArgument("android.ttl must be at most 4 weeks (2419200s), got \(text)")
        }
    }

    static func checkOptions(_ value: JSON?, at path: String) throws(FCMError) {
        guard let value else { return }
        let options = try object(value, at: path, allowed: ["analytics_label"])
        guard let label = try string(options["analytics_label"], at: "\(path).analytics_label") else { return }
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~%".utf8)
        guard (1...50).contains(label.utf8.count), label.utf8.allSatisfy({ allowed.contains($0) }) else {
            throw .invalidArgument("Analytics label must have format matching'^[a-zA-Z0-9-_.~%]{1,50}$")
        }
    }

    static func object(_ value: JSON, at path: String, allowed: [String]) throws(FCMError) -> JSONObject {
        guard let object = value.objectValue else { throw wrongType(path, "TYPE_MESSAGE", value) }
        try rejectUnknown(in: object, allowed: allowed, at: path)
        return object
    }

    static func string(_ value: JSON?, at path: String) throws(FCMError) -> String? {
        guard let value else { return nil }
        guard let text = value.stringValue else { throw wrongType(path, "TYPE_STRING", value) }
        return text
    }

    /// A `map<string, string>`; for `data`, also the reserved keys.
    static func stringMap(_ value: JSON?, at path: String, reservedKeysChecked: Bool) throws(FCMError) -> JSONObject {
        guard let value else { return JSONObject() }
        guard let map = value.objectValue else { throw wrongType(path, "TYPE_MESSAGE", value) }
        for (index, (key, entry)) in map.enumerated() {
            switch entry {
            case .string: break
            case .object:
                throw .invalidArgument(
                    "Invalid JSON payload received. Unknown name \"\(key)\" at '\(path)[\(index)].value': Cannot find field."
                )
            default:
                throw .invalidArgument("Invalid value at '\(path)[\(index)].value' (TYPE_STRING), \(entry.compactText)")
            }
            if reservedKeysChecked, isReservedDataKey(key) {
                throw .invalidArgument("Invalid data payload key: \(key)")
            }
        }
        return map
    }

    /// `from`, `message_type`, and keys starting `google.` or `gcm.` (FCM's docs; the
    /// documented `notification` is accepted by the API, and so it is here).
    public static func isReservedDataKey(_ key: String) -> Bool {
        // One byte tells most keys apart, where `hasPrefix` compares by characters through
        // the runtime (every key of every message is asked).
        switch key.utf8.first {
        case UInt8(ascii: "f"): key == "from"
        case UInt8(ascii: "m"): key == "message_type"
        case UInt8(ascii: "g"): key.hasPrefix("google.") || key.hasPrefix("gcm.")
        default: false
        }
    }

    static func rejectUnknown(in object: JSONObject, allowed: [String], at path: String?) throws(FCMError) {
        guard let unknown = object.lazy.map(\.key).first(where: { !allowed.contains($0) }) else { return }
        throw unknownName(unknown, at: path)
    }

    static func unknownName(_ name: String, at path: String?) -> FCMError {
        let location = path.map { " at '\($0)'" } ?? ""
        return .invalidArgument(
            "Invalid JSON payload received. Unknown name \"\(name)\"\(location): Cannot find field.")
    }

    static func wrongType(_ path: String, _ type: String, _ value: JSON) -> FCMError {
        .invalidArgument("Invalid value at '\(path)' (\(type)), \(value.compactText)")
    }
}
