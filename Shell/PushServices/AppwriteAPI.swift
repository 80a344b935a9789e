import OrderedJSON

/// An Appwrite API error: the status and the body Appwrite answers with,
/// `{"message", "code", "type", "version"}`, `type` as Appwrite names it (APW-9).
public struct AppwriteError: Error, Sendable, Equatable {
    public let status: Int
    public let type: String
    public let message: String

    public init(_ status: Int, _ type: String, _ message: String) {
        self.status = status
        self.type = type
        self.message = message
    }

    /// The Appwrite server version the answers speak for.
    public static let version = "1.8.0"

    public var body: JSONObject {
        JSONObject([
            ("message", .string(message)), ("code", .integer(Int64(status))), ("type", .string(type)),
            ("version", .string(Self.version)),
        ])
    }

    public static func invalid(_ message: String) -> AppwriteError {
        AppwriteError(400, "general_argument_invalid", message)
    }
}

/// Appwrite's custom ids: at most 36 of a-z A-Z 0-9 `.` `-` `_`, not starting with a
/// special character; `unique()` (what `ID.unique()` sends) asks the server for one.
public enum AppwriteID {
    /// The id `given` names, or a new one from `make` for `unique()`; a bad id is refused
    /// with Appwrite's words, naming the parameter.
    public static func resolve(_ given: String, parameter: String, make: () -> String) -> Result<String, AppwriteError>
    {
        if given == "unique()" { return .success(make()) }
        let special: Set<Character> = [".", "-", "_"]
        guard (1...36).contains(given.count),
            given.allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || special.contains($0) }),
            let first = given.first, !special.contains(first)
        else {
            return .failure(
                .invalid(
                    "Invalid `\(parameter)` param: Parameter must contain at most 36 chars. Valid chars are a-z, A-Z, 0-9, period, hyphen, and underscore. Can't start with a special char"
                ))
        }
        return .success(given)
    }
}

/// `POST /v1/messaging/messages/push`'s parameters, checked as Appwrite does (APW-12).
/// A pure value: what to send and to whom; sending is the service's.
public struct AppwritePush: Sendable, Equatable {
    public var messageID: String
    public var title: String?
    public var body: String?
    public var users: [String]
    public var topics: [String]
    public var targets: [String]
    public var data: JSONObject
    /// The notification's other fields the SDK sends (`image`, `icon`, `sound`, …), in order.
    public var extras: JSONObject
    public var priority: String
    public var draft: Bool

    public static let maxTitle = 256
    public static let maxBody = 64_230
    /// The notification fields Appwrite's message JSON carries beside title and body.
    static let notificationFields = [
        ("image", "image"), ("icon", "icon"), ("color", "color"), ("sound", "sound"), ("tag", "tag"),
        ("channelId", "channelId"), ("badge", "badge"), ("action", "action"), ("contentAvailable", "contentAvailable"),
        ("critical", "critical"),
    ]
    static let known: Set = [
        "messageId", "title", "body", "topics", "users", "targets", "data", "action", "image", "icon", "sound",
        "color", "tag", "badge", "draft", "scheduledAt", "contentAvailable", "critical", "priority", "channelId",
    ]

    /// Checks a request body; `messageID` is already resolved (`unique()` made one).
    public static func parse(_ object: JSONObject, messageID: String) -> Result<AppwritePush, AppwriteError> {
        if let unknown = object.map(\.0).first(where: { !known.contains($0) }) {
            return .failure(.invalid("Param \"\(unknown)\" is not expected."))
        }
        func text(_ name: String, max: Int) -> Result<String?, AppwriteError> {
            switch object[name] {
            case nil, .null?: return .success(nil)
            case .string(let value)? where value.count <= max: return .success(value)
            case .string?:
                return .failure(
                    .invalid("Invalid `\(name)` param: Value must be a valid string and no longer than \(max) chars"))
            default:
                return .failure(
                    .invalid("Invalid `\(name)` param: Value must be a valid string and no longer than \(max) chars"))
            }
        }
        func ids(_ name: String) -> Result<[String], AppwriteError> {
            switch object[name] {
            case nil, .null?: return .success([])
            case .array(let items)?:
                var list: [String] = []
                for item in items {
                    guard case .string(let id) = item, !id.isEmpty else {
                        return .failure(.invalid("Invalid `\(name)` param: Value must a valid array of ids"))
                    }
                    if !list.contains(id) { list.append(id) }
                }
                return .success(list)
            default: return .failure(.invalid("Invalid `\(name)` param: Value must a valid array of ids"))
            }
        }
        do {
            let title = try text("title", max: maxTitle).get()
            let body = try text("body", max: maxBody).get()
            let users = try ids("users").get()
            let topics = try ids("topics").get()
            let targets = try ids("targets").get()
            var data = JSONObject()
            switch object["data"] {
            case nil, .null?: break
            case .object(let value)?: data = value
            default: return .failure(.invalid("Invalid `data` param: Value must be a valid object"))
            }
            var extras = JSONObject()
            for (parameter, field) in notificationFields {
                if let value = object[parameter], value != .null { extras[field] = value }
            }
            var priority = "high"
            if case .string(let value)? = object["priority"] {
                guard value == "normal" || value == "high" else {
                    return .failure(.invalid("Invalid `priority` param: Value must be one of (normal, high)"))
                }
                priority = value
            }
            let draft = object["draft"] == .bool(true)
            if !draft && users.isEmpty && topics.isEmpty && targets.isEmpty {
                return .failure(
                    AppwriteError(
                        400, "message_missing_target",
                        "Message with the requested ID has no recipients (topics or users or targets)."))
            }
            return .success(
                AppwritePush(
                    messageID: messageID, title: title, body: body, users: users, topics: topics, targets: targets,
                    data: data, extras: extras, priority: priority, draft: draft))
        } catch {
            return .failure(error)
        }
    }

    /// Appwrite's message JSON, as Appwrite Push publishes it (APW-4).
    public var mqttPayload: [UInt8] {
        var notification = JSONObject()
        if let title { notification["title"] = .string(title) }
        if let body { notification["body"] = .string(body) }
        for (key, value) in extras { notification[key] = value }
        return JSON.object(
            JSONObject([
                ("messageId", .string(messageID)), ("notification", .object(notification)), ("data", .object(data)),
                ("priority", .string(priority)),
            ])
        ).compactBytes
    }
}
