import Credentials
import Foundation
import PushServices

/// The channels' parsers on any bytes: Appwrite's MQTT payloads (APW-7: anything that is
/// not a message is refused, never trusted), XMTP hints (XM-5), and Standard Webhooks
/// verification (XM-3): the input is `id\ntimestamp\nsignatures\nbody`. Whatever the
/// input, a delivery signed with the key verifies, and one byte changed in its body
/// does not.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzChannels(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if case .success(let message) = AppwriteMessage.parse(bytes) {
        precondition(!message.messageID.isEmpty && bytes.count <= AppwriteMessage.maxBytes)
    }
    if case .success(let hint) = XMTPHint.validate(bytes, recipient: "00ff") {
        precondition(hint.object.count == 3 && hint.object["recipient_id"] == "00ff")
    }
    let parts = bytes.split(separator: 0x0A, maxSplits: 3, omittingEmptySubsequences: false)
    let text = parts.map { String(decoding: $0, as: UTF8.self) }
    let body = parts.count > 3 ? Array(parts[3]) : []
    let key: [UInt8] = Array("0123456789abcdef".utf8)
    let now: Int64 = 1_764_470_000
    // Any headers: an answer, never a crash.
    _ = StandardWebhook.verify(
        key: key, id: text.first, timestamp: text.count > 1 ? text[1] : nil, signatures: text.count > 2 ? text[2] : nil,
        body: body, now: now)
    // Signed with the key: accepted; with one body byte changed: refused.
    let id = text.first.map { $0.isEmpty ? "msg" : $0 } ?? "msg"
    let signature =
        "v1,"
        + Data(StandardWebhook.signature(key: key, id: id, timestamp: String(now), body: body)).base64EncodedString()
    guard
        case .success = StandardWebhook.verify(
            key: key, id: id, timestamp: String(now), signatures: signature, body: body, now: now)
    else { fatalError("a correctly signed delivery was refused") }
    var changed = body
    if changed.isEmpty { changed = [0] } else { changed[0] ^= 0x01 }
    guard
        case .failure = StandardWebhook.verify(
            key: key, id: id, timestamp: String(now), signatures: signature, body: changed, now: now)
    else { fatalError("a changed body was accepted") }
    return 0
}
