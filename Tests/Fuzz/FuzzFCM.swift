import OrderedJSON
import PushServices

/// FCM validation. The input is an `fcm` request's fields (`{"body":…}`) or the raw
/// body. An accepted message must have string data values, no reserved keys, and
/// stay within the size limit; a rejection must use FCM's envelope; a body's bytes are
/// judged as its tree is.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFCM(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    var request = FCMRequest(body: input)
    if let fields = (try? JSON.parse(input))?.objectValue, let body = fields["body"] {
        request = FCMRequest(body: body.compactBytes, parsedBody: body)
    }
    // The world judges a body from its bytes (FCM's common message with no tree, read by
    // FCMMessageReader); that is judged as its tree is.
    if let tree = request.parsedBody ?? (try? JSON.parse(input)) {
        let bytes = request.body
        precondition(FCMRequest(body: bytes).validate() == FCMRequest(body: bytes, parsedBody: tree).validate())
    }
    switch request.validate() {
    case .failure(let error):
        precondition(error.code == 400 && error.status == "INVALID_ARGUMENT" && !error.message.isEmpty)
    case .success(let message):
        var bytes = (message.title?.utf8.count ?? 0) + (message.body?.utf8.count ?? 0)
        for (key, value) in message.data.object {
            guard let text = value.stringValue else { fatalError("a data value is not a string") }
            precondition(!FCMRequest.isReservedDataKey(key))
            bytes += key.utf8.count + text.utf8.count
        }
        precondition(bytes <= FCMRequest.maxPayloadBytes)
        if case .condition(let condition) = message.target {
            // An accepted condition evaluates on any device's topics without trapping.
            _ = condition.matches(["a", "b"])
        }
    }
    return 0
}
