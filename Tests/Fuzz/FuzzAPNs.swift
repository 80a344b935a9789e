import OrderedJSON
import PushPlugin
import PushServices

/// APNs validation and payload → event. The input is an `apns` request's fields
/// (`{"headers":{…},"body":…}`) or, when it is not, the raw body. Every accepted
/// push must become an event whose text parses, ends with mobiler_push, and keeps
/// every non-aps key of the payload in order, each value byte for byte.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAPNs(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    var headers = ["apns-topic": "com.example.app"]
    var body = input
    var parsed: JSON?
    if let fields = (try? JSON.parse(input))?.objectValue, let value = fields["body"] {
        for (name, header) in fields["headers"]?.objectValue ?? JSONObject() {
            if let text = header.stringValue { headers[name] = text }
        }
        body = value.compactBytes
        parsed = value
    }
    let token = String(repeating: "ab", count: 32)
    let request = APNsRequest(headers: headers, body: body, parsedBody: parsed, token: token)
    let record = APNsTokenRecord(bundleID: "com.example.app")
    guard case .success(let notification) = request.validate(tokens: { $0 == token ? record : nil }) else { return 0 }
    for action in [NotificationAction.opened, .received] {
        let event = PushEvent.ios(userInfo: notification.payload, action: action)
        guard let reparsed = try? JSON.parse(text: event.compactText).objectValue else {
            fatalError("event text does not parse")
        }
        precondition(reparsed.orderedKeys.last == "mobiler_push")
        let kept = notification.payload.orderedKeys.filter { $0 != "aps" && $0 != "mobiler_push" }
        precondition(Array(reparsed.orderedKeys.prefix(kept.count)) == kept, "payload key order changed")
        for key in kept {
            // Values compare by exact text, numbers included: no digit may change.
            precondition(reparsed[key] == notification.payload[key], "a payload value changed")
        }
    }
    return 0
}
