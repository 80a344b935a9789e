import OrderedJSON
import PushPlugin

/// The install's channel registrations as a state document keeps them (Docs/Install.md):
/// each Appwrite Push registration, the `http` channel's, the install's client ids and the
/// Appwrite messages it handled (APW-6). Connections are not kept: the app's next process
/// makes them again when the core subscribes (APW-5), as after a reboot.
public struct SavedChannels: Sendable, Equatable {
    var appwrite: [AppwriteRegistration] = []
    var webhook: WebhookRegistration?
    var appwriteClientID: String?
    var recipientID: String?
    var handled: [String] = []

    public init() {}

    init(_ channels: DeviceChannels) {
        appwrite = channels.appwrite
        webhook = channels.webhook
        appwriteClientID = channels.appwriteClientID
        recipientID = channels.recipientID
        handled = channels.handled.inOrder
    }

    func apply(to channels: inout DeviceChannels) {
        channels.appwrite = appwrite
        channels.webhook = webhook
        channels.appwriteClientID = appwriteClientID
        channels.recipientID = recipientID
        channels.handled = RecentIDs(capacity: DeviceChannels.handledLimit)
        for id in handled { _ = channels.handled.insert(id) }
    }

    public var json: JSON {
        var object = JSONObject()
        object["appwrite"] = .array(
            appwrite.map { r in
                .object(
                    JSONObject([
                        ("client_id", .string(r.clientID)), ("endpoint", .string(r.endpoint)),
                        ("user", .string(r.user)),
                        ("topics", .array(r.topics.map(JSON.string))), ("retry", .bool(r.retry)),
                        ("background", .bool(r.background)), ("title", r.title.map(JSON.string) ?? .null),
                        ("credential", r.credential.map(JSON.string) ?? .null),
                        ("project", r.project.map(JSON.string) ?? .null),
                    ]))
            })
        object["http"] =
            webhook.map { w in
                .object(
                    JSONObject([
                        ("recipient", .string(w.recipientID)), ("key", .string(Hex.encode(w.key))),
                        ("url", .string(w.url)),
                    ]))
            } ?? .null
        object["appwrite_client_id"] = appwriteClientID.map(JSON.string) ?? .null
        object["recipient_id"] = recipientID.map(JSON.string) ?? .null
        object["handled"] = .array(handled.map(JSON.string))
        return .object(object)
    }

    /// Reads `json` back; `follow` maps a saved broker endpoint to where that broker is now.
    /// A sentence names what is wrong.
    public static func parse(_ json: JSON, follow: (String) -> String) -> Result<SavedChannels, DeviceRefusal> {
        guard let object = json.objectValue else { return .failure(DeviceRefusal("must be an object")) }
        func string(_ value: JSON?, _ name: String) -> Result<String?, DeviceRefusal> {
            switch value {
            case nil, .null?: .success(nil)
            case .string(let text)?: .success(text)
            default: .failure(DeviceRefusal("\(name) must be a string or null"))
            }
        }
        var saved = SavedChannels()
        for (index, item) in (object["appwrite"]?.arrayValue ?? []).enumerated() {
            guard let r = item.objectValue, let clientID = r["client_id"]?.stringValue,
                let endpoint = r["endpoint"]?.stringValue, let user = r["user"]?.stringValue,
                let topics = r["topics"]?.arrayValue?.compactMap(\.stringValue),
                case .bool(let retry)? = r["retry"], case .bool(let background)? = r["background"],
                case .success(let title) = string(r["title"], "title"),
                case .success(let credential) = string(r["credential"], "credential"),
                case .success(let project) = string(r["project"], "project")
            else {
                return .failure(
                    DeviceRefusal(
                        "appwrite[\(index)] must have client_id, endpoint, user, topics, retry and background"))
            }
            let now = follow(endpoint)
            guard let (host, port) = Device.parseEndpoint(now) else {
                return .failure(DeviceRefusal("appwrite[\(index)].endpoint must be mqtt://HOST:PORT"))
            }
            saved.appwrite.append(
                AppwriteRegistration(
                    clientID: clientID, endpoint: now, host: host, port: port, user: user, topics: topics, retry: retry,
                    background: background, title: title, credential: credential, project: project))
        }
        if let w = object["http"]?.objectValue {
            guard let recipient = w["recipient"]?.stringValue, let key = w["key"]?.stringValue,
                let url = w["url"]?.stringValue, key.count % 2 == 0, key.allSatisfy(\.isHexDigit)
            else { return .failure(DeviceRefusal("http must have recipient, key (hex) and url")) }
            saved.webhook = WebhookRegistration(recipientID: recipient, key: Hex.decode(key), url: url)
        }
        guard case .success(let clientID) = string(object["appwrite_client_id"], "appwrite_client_id"),
            case .success(let recipientID) = string(object["recipient_id"], "recipient_id")
        else { return .failure(DeviceRefusal("appwrite_client_id and recipient_id must be strings or null")) }
        saved.appwriteClientID = clientID
        saved.recipientID = recipientID
        saved.handled = (object["handled"]?.arrayValue ?? []).compactMap(\.stringValue)
        return .success(saved)
    }
}
