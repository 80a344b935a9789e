import Foundation
import OrderedJSON

/// An XMTP sync hint posted to the `http` channel's webhook (XM-5): exactly
/// `{"topic", "sequence_id", "recipient_id"}`, checked only after its signature holds.
public struct XMTPHint: Sendable, Equatable {
    /// The body's object, its keys in the order sent: what the event carries.
    public var object: JSONObject

    /// Validates a verified body for `recipient`: exactly the three keys; `topic`
    /// standard base64 of a group topic (`0x00` + 16 bytes) or a welcome topic
    /// (`0x01` + 32 bytes); `sequence_id` decimal text from 1 to 2^64 − 1 without
    /// leading zeros; `recipient_id` this recipient's id.
    public static func validate(_ body: [UInt8], recipient: String) -> Result<XMTPHint, Refusal> {
        let object: JSONObject
        do {
            guard let parsed = try JSON.parse(body).objectValue else {
                return .failure(Refusal("the body must be a JSON object"))
            }
            object = parsed
        } catch {
            return .failure(Refusal("the body is not JSON: \(error)"))
        }
        let keys = Set(object.map(\.0))
        guard keys == ["topic", "sequence_id", "recipient_id"], object.count == 3 else {
            let names = object.map(\.0).joined(separator: ", ")
            return .failure(Refusal("the body must have exactly topic, sequence_id and recipient_id; it has \(names)"))
        }
        guard case .string(let topic)? = object["topic"], let bytes = Data(base64Encoded: topic),
            (bytes.count == 17 && bytes.first == 0x00) || (bytes.count == 33 && bytes.first == 0x01)
        else {
            return .failure(
                Refusal(
                    "\"topic\" must be standard base64 of a group topic (0x00 and 16 bytes) or a welcome topic (0x01 and 32 bytes)"
                ))
        }
        guard case .string(let sequence)? = object["sequence_id"], isSequenceID(sequence) else {
            return .failure(Refusal("\"sequence_id\" must be decimal text from 1 to 18446744073709551615"))
        }
        guard object["recipient_id"] == .string(recipient) else {
            return .failure(Refusal("\"recipient_id\" must be this recipient's id, \(recipient)"))
        }
        return .success(XMTPHint(object: object))
    }

    static func isSequenceID(_ text: String) -> Bool {
        let digits = Array(text.utf8)
        guard !digits.isEmpty, digits.count <= 20, digits.allSatisfy({ (0x30...0x39).contains($0) }),
            digits.first != 0x30
        else { return false }
        return UInt64(text) != nil
    }

    public struct Refusal: Error, Sendable, Equatable {
        public let message: String
        public init(_ message: String) { self.message = message }
    }
}
