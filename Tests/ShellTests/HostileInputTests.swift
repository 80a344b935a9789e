import OrderedJSON
import ShellKit
import Testing

/// Hostile and malformed inputs across the protocol, APNs, simctl and FCM. Each must
/// be refused with a sentence that names the problem, change nothing, and leave the
/// shell serving.
@Suite struct HostileInputTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let line: [UInt8]
        /// A phrase the refusal must contain.
        let expected: String
        var testDescription: String { name }

        init(_ name: String, _ line: String, _ expected: String) {
            self.init(name, Array(line.utf8), expected)
        }

        init(_ name: String, _ line: [UInt8], _ expected: String) {
            self.name = name
            self.line = line
            self.expected = expected
        }
    }

    static let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
    static let topic = #""apns-topic":"com.example.app""#

    static let protocolCases: [Case] = [
        Case("empty object", "{}", #"the request has no \"op\""#),
        Case("not JSON", "{{{", "the line is not JSON"),
        Case("NUL bytes", [0x7B, 0x00, 0x00, 0x7D], "the line is not JSON"),
        Case("invalid UTF-8", [0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x7D], "the line is not JSON"),
        Case("10 MB line", [UInt8](repeating: UInt8(ascii: "a"), count: 10 << 20), "the limit is 1048576"),
        Case("100,000-deep nesting", deep, "nesting is deeper than \(JSONLimits.defaultMaxDepth) levels"),
        Case("a bare NaN", #"{"op":NaN}"#, "the line is not JSON"),
        Case("a number with a leading zero", #"{"op":"state","id":01}"#, "the line is not JSON"),
        Case("an op that is a number past double", #"{"op":1e999}"#, #"\"op\" must be a string, not number"#),
        Case(
            "an id past 64 bits is echoed exactly", #"{"op":"state","id":123456789012345678901234567890}"#,
            #"{"reply":123456789012345678901234567890,"ok":false"#),
        Case(
            "a refused line keeps its readable id", #"{"op":"state","id":"mine","x":[1,]}"#,
            #"{"reply":"mine","ok":false,"error":"the line is not JSON"#),
        Case("duplicate keys", #"{"op":"state","op":"tray"}"#, "duplicate object key"),
        Case("op of the wrong type", #"{"op":["device"]}"#, #"\"op\" must be a string, not array"#),
        Case("an unknown op", #"{"op":"reboot"}"#, "unknown op 'reboot'"),
        Case(
            "platform of the wrong type", #"{"op":"device","platform":7}"#,
            #"\"platform\" must be a string, not integer"#),
        Case("an empty bundle", #"{"op":"device","platform":"ios","bundle":""}"#, #"\"bundle\" must not be empty"#),
        Case("a platform in capitals", #"{"op":"device","platform":"IOS"}"#, "must be ios, android or web"),
    ]

    static let iosCases: [Case] = [
        Case(
            "call with a numeric plugin", #"{"op":"call","plugin":1,"method":"register"}"#,
            #"\"plugin\" must be a string, not integer"#),
        Case(
            "call with a null method", #"{"op":"call","plugin":"push","method":null}"#,
            #"\"method\" must be a string, not null"#),
        Case(
            "call with an object input", #"{"op":"call","plugin":"push","method":"register","input":{}}"#,
            #"\"input\" must be a string, not object"#),
        Case(
            "subscribe without a key", #"{"op":"subscribe","plugin":"push","stream":"events"}"#,
            #"subscribe needs a string field \"key\""#),
        Case("tap with a number", #"{"op":"tap","which":3}"#, #"\"which\" must be a string, not integer"#),
        Case("tap on an empty tray", #"{"op":"tap","which":"newest"}"#, "the tray is empty"),
        Case("permission yes", #"{"op":"permission","answer":"yes"}"#, "must be grant or deny"),
        Case(
            "apns body_text not text", #"{"op":"apns","body_text":[1]}"#, #"\"body_text\" must be a string, not array"#),
        Case("apns body and body_text", #"{"op":"apns","body":{},"body_text":"{}"}"#, "not both"),
        Case(
            "apns headers as an array", #"{"op":"apns","headers":[],"body":{}}"#,
            #"\"headers\" must be an object, not array"#),
        Case(
            "apns header value an object", #"{"op":"apns","headers":{"apns-priority":{}},"body":{}}"#,
            "must be a string, not object"),
        Case(
            "apns priority with junk",
            #"{"op":"apns","headers":{\#(topic),"apns-priority":"10abc"},"body":{"aps":{}}}"#, "BadPriority"),
        Case(
            "apns collapse id of 65 bytes",
            #"{"op":"apns","headers":{\#(topic),"apns-collapse-id":"\#(String(repeating: "x", count: 65))"},"body":{"aps":{}}}"#,
            "BadCollapseId"),
        Case(
            "apns token with a NUL", #"{"op":"apns","headers":{\#(topic)},"token":"ab\u0000d","body":{"aps":{}}}"#,
            "BadDeviceToken"),
        Case(
            "apns body with a raw NUL", #"{"op":"apns","headers":{\#(topic)},"body_text":"{\"aps\":\u0000}"}"#,
            "BadPayload"),
        Case(
            "apns body with a bare Infinity",
            #"{"op":"apns","headers":{\#(topic)},"body_text":"{\"aps\":{},\"x\":Infinity}"}"#, "BadPayload"),
        Case(
            "apns body nested 3000 deep",
            #"{"op":"apns","headers":{\#(topic)},"body_text":"\#(String(repeating: "[", count: 3000))"}"#,
            "nesting is deeper than \(JSONLimits.defaultMaxDepth) levels"),
        Case("apns body cut short", #"{"op":"apns","headers":{\#(topic)},"body_text":"{\"aps\":"}"#, "BadPayload"),
        Case(
            "apns body over 4096 bytes",
            #"{"op":"apns","headers":{\#(topic)},"body":{"aps":{},"pad":"\#(String(repeating: "x", count: 5000))"}}"#,
            "PayloadTooLarge"),
        Case(
            "apns expiration in exponent form",
            #"{"op":"apns","headers":{\#(topic),"apns-expiration":"1e9"},"body":{"aps":{}}}"#, "BadExpirationDate"),
        Case(
            "apns id not a UUID", #"{"op":"apns","headers":{\#(topic),"apns-id":"🙂"},"body":{"aps":{}}}"#,
            "BadMessageId"),
        Case("simctl file a number", #"{"op":"simctl","bundle":"com.example.app","file":7}"#, "NotAnObject"),
        Case("simctl empty file", #"{"op":"simctl","bundle":"com.example.app","file_text":""}"#, "PayloadEmpty"),
        Case(
            "simctl bundle a number", #"{"op":"simctl","bundle":5,"file":{"aps":{}}}"#,
            #"\"bundle\" must be a string, not integer"#),
        Case("simctl without aps", #"{"op":"simctl","bundle":"com.example.app","file":{"x":1}}"#, "MissingAps"),
        Case(
            "fcm to a token no app was issued", #"{"op":"fcm","body":{"message":{"token":"abc"}}}"#,
            #""errorCode":"UNREGISTERED""#),
    ]

    static let androidCases: [Case] = [
        Case("fcm body a string", #"{"op":"fcm","body":"message"}"#, "The request must be an object, not string"),
        Case(
            "fcm message an array", #"{"op":"fcm","body":{"message":[]}}"#, "Invalid value at 'message' (TYPE_MESSAGE)"),
        Case(
            "fcm data value an object", #"{"op":"fcm","body":{"message":{"topic":"t","data":{"k":{}}}}}"#,
            "Cannot find field"),
        Case(
            "fcm token a number", #"{"op":"fcm","body":{"message":{"token":5}}}"#,
            "Invalid value at 'message.token' (TYPE_STRING), 5"),
        Case("fcm topic with spaces", #"{"op":"fcm","body":{"message":{"topic":"a b"}}}"#, "Malformed topic name"),
        Case(
            "fcm condition unbalanced", #"{"op":"fcm","body":{"message":{"condition":"('a' in topics"}}}"#,
            "Invalid condition: missing )"),
        Case(
            "fcm negative ttl", #"{"op":"fcm","body":{"message":{"topic":"t","android":{"ttl":"-5s"}}}}"#,
            "google.protobuf.Duration"),
        Case(
            "fcm priority a number", #"{"op":"fcm","body":{"message":{"topic":"t","android":{"priority":1}}}}"#,
            "message.android.priority' (TYPE_STRING)"),
        Case(
            "fcm legacy registration_ids", #"{"op":"fcm","body":{"message":{"registration_ids":["a"]}}}"#,
            #"Unknown name \"registration_ids\""#),
        Case(
            "fcm data over 4096 bytes",
            #"{"op":"fcm","body":{"message":{"topic":"t","data":{"pad":"\#(String(repeating: "x", count: 5000))"}}}}"#,
            "Android message is too big"),
        Case(
            "fcm reserved key prefix",
            #"{"op":"fcm","body":{"message":{"topic":"t","data":{"gcm.notification.title":"x"}}}}"#,
            "Invalid data payload key"),
        Case("apns to an Android device", #"{"op":"apns","body":{"aps":{}}}"#, "apns sends to an iOS device"),
    ]

    func expectRefused(_ session: Session, _ hostile: Case) {
        let output = session.handle(line: hostile.line)
        #expect(output.count == 1, "a refused request delivers nothing")
        let reply = output.last ?? ""
        #expect(reply.contains(#""ok":false"#), "\(hostile.name): \(reply.prefix(300))")
        #expect(reply.contains(hostile.expected), "\(hostile.name): \(reply.prefix(300))")
    }

    @Test(arguments: protocolCases)
    func protocolInputsAreRefused(_ hostile: Case) {
        let session = Session()
        expectRefused(session, hostile)
        #expect(session.handle(#"{"op":"device","platform":"web"}"#).last?.contains(#""ok":true"#) == true)
    }

    @Test func iosAndAndroidInputsAreRefusedAndTheShellKeepsServing() {
        let session = Session()
        _ = session.handle(#"{"op":"device","platform":"ios"}"#)
        _ = session.handle(#"{"op":"launch"}"#)
        let before = session.handle(#"{"op":"state"}"#)
        for hostile in Self.iosCases { expectRefused(session, hostile) }
        // Nothing changed: the same state, apart from nothing.
        #expect(session.handle(#"{"op":"state"}"#) == before)
        _ = session.handle(#"{"op":"device","platform":"android"}"#)
        for hostile in Self.androidCases { expectRefused(session, hostile) }
        let state = session.handle(#"{"op":"state"}"#).last ?? ""
        #expect(state.contains(#""ok":true,"state":"not_running","platform":"android""#))
    }
}
