import OrderedJSON

/// An Appwrite Push message as it arrives over MQTT (APW-4):
/// `{"messageId", "notification": {"title", "body", "image", …}, "data": {…}, "priority"}`.
public struct AppwriteMessage: Sendable, Equatable {
    public var messageID: String
    /// The `notification` object, when the message has one.
    public var notification: JSONObject?
    /// The `data` object's keys in order, values exactly as sent.
    public var data: JSONObject

    public var title: String? { notification?["title"]?.stringValue }
    public var body: String? { notification?["body"]?.stringValue }

    /// The largest payload a device takes (a larger one is dropped and reported).
    public static let maxBytes = 256 * 1024

    /// Parses an MQTT payload, or says why it is not an Appwrite message (APW-7): not
    /// JSON, not an object, no string `messageId`, a `notification` or `data` that is
    /// not an object, or more than `maxBytes`.
    public static func parse(_ payload: [UInt8]) -> Result<AppwriteMessage, Refusal> {
        guard payload.count <= maxBytes else {
            return .failure(Refusal("the payload is \(payload.count) bytes; a device takes at most \(maxBytes)"))
        }
        let value: JSON
        do {
            value = try JSON.parse(payload)
        } catch {
            return .failure(Refusal("the payload is not JSON: \(error)"))
        }
        guard let object = value.objectValue else {
            return .failure(Refusal("the payload is JSON \(value.typeName), not an object"))
        }
        guard case .string(let messageID)? = object["messageId"], !messageID.isEmpty else {
            return .failure(Refusal("the message has no string \"messageId\""))
        }
        var notification: JSONObject?
        switch object["notification"] {
        case nil, .null?: break
        case .object(let value)?: notification = value
        case let other?: return .failure(Refusal("\"notification\" is \(other.typeName), not an object"))
        }
        var data = JSONObject()
        switch object["data"] {
        case nil, .null?: break
        case .object(let value)?: data = value
        case let other?: return .failure(Refusal("\"data\" is \(other.typeName), not an object"))
        }
        return .success(AppwriteMessage(messageID: messageID, notification: notification, data: data))
    }

    /// Why a payload was dropped, in words.
    public struct Refusal: Error, Sendable, Equatable {
        public let message: String
        public init(_ message: String) { self.message = message }
    }
}
