import OrderedJSON
import PushServices
import Testing

@Suite struct FCMRequestTests {
    func validate(_ text: String) -> Result<FCMMessage, FCMError> {
        FCMRequest(body: Array(text.utf8)).validate()
    }

    func message(_ result: Result<FCMMessage, FCMError>) -> String? {
        if case .failure(let error) = result { error.message } else { nil }
    }

    @Test func aDataMessageKeepsItsKeysInOrder() throws {
        let message = try validate(#"{"message":{"token":"tok","data":{"z":"1","a":"2"}}}"#).get()
        #expect(message.data.object.orderedKeys == ["z", "a"])
        #expect(!message.isNotificationMessage)
        #expect(message.target == .token("tok"))
    }

    @Test func androidNotificationOverridesTheNotificationBlock() throws {
        let message = try validate(
            #"{"message":{"token":"tok","notification":{"title":"a","body":"b"},"android":{"notification":{"title":"c","tag":"t"},"data":{"x":"1"}}}}"#
        ).get()
        #expect(message.title == "c" && message.body == "b" && message.tag == "t" && message.isNotificationMessage)
        #expect(message.data.object.orderedKeys == ["x"])
    }

    @Test func routingFindsTheTokensProjectOrSaysWhyNot() throws {
        let records: [FCMTarget: FCMTokenRecord] = [
            .token("mine"): FCMTokenRecord(project: "p1"), .token("gone"): FCMTokenRecord(project: "p1", retired: true),
            .fid("f1"): FCMTokenRecord(project: "p1"),
        ]
        func route(_ target: FCMTarget, _ project: String?) throws(FCMError) -> String {
            try FCMRequest.route(target, project: project, defaultProject: "cxshell") { records[$0] }
        }
        #expect(try route(.token("mine"), nil) == "p1")
        #expect(try route(.token("mine"), "p1") == "p1")
        #expect(try route(.fid("f1"), nil) == "p1")
        #expect(try route(.topic("t"), nil) == "cxshell")
        #expect(try route(.topic("t"), "p2") == "p2")
        let unregistered = FCMError(
            code: 404, status: "NOT_FOUND", message: "Requested entity was not found.", errorCode: "UNREGISTERED")
        for target in [FCMTarget.token("never"), .token("gone"), .fid("f9")] {
            #expect(throws: unregistered) { try route(target, nil) }
        }
        #expect(throws: FCMError.senderIDMismatch(project: "p2")) { try route(.token("mine"), "p2") }
        #expect(FCMError.senderIDMismatch(project: "p2").code == 403)
        #expect(FCMError.senderIDMismatch(project: "p2").status == "PERMISSION_DENIED")
        #expect(message(validate(#"{"message":{}}"#)) == "Recipient of the message is not set.")
    }

    @Test(arguments: [
        (
            #"{"message":{"token":"tok","data":{"a":true}}}"#,
            "Invalid value at 'message.data[0].value' (TYPE_STRING), true"
        ),
        (#"{"message":{"token":"tok","data":{"gcm.x":"1"}}}"#, "Invalid data payload key: gcm.x"),
        (#"{"message":{"token":"tok","android":{"data":{"from":"1"}}}}"#, "Invalid data payload key: from"),
        (
            #"{"message":{"token":"tok","android":{"nope":1}}}"#,
            #"Invalid JSON payload received. Unknown name "nope" at 'message.android': Cannot find field."#
        ),
        (
            #"{"message":{"token":"tok","android":{"ttl":"1.1234567890s"}}}"#,
            #"Invalid value at 'message.android.ttl' (type.googleapis.com/google.protobuf.Duration), "1.1234567890s""#
        ),
        (
            #"{"message":{"token":"tok","fcm_options":{"analytics_label":"has space"}}}"#,
            "Analytics label must have format matching'^[a-zA-Z0-9-_.~%]{1,50}$"
        ),
        (
            #"{"message":{"token":"tok","webpush":{"fcm_options":{"link":"http://x"}}}}"#,
            "webpush.fcm_options.link must be an https URL, got 'http://x'"
        ),
        (#"{"message":{"topic":""}}"#, "Malformed topic name: ''"),
        (#"{"message":"x"}"#, #"Invalid value at 'message' (TYPE_MESSAGE), "x""#),
    ])
    func invalidMessagesAreNamed(text: String, expected: String) {
        #expect(message(validate(text)) == expected)
    }

    @Test func conditionsAreParsedAndEvaluatedPerDevice() throws {
        let condition = try FCMCondition.parse("'a' in topics && ('b' in topics || !('c' in topics))").get()
        #expect(condition.matches(["a"]))
        #expect(condition.matches(["a", "b", "c"]))
        #expect(!condition.matches(["a", "c"]))
        #expect(!condition.matches(["b"]))
        #expect(try FCMCondition.parse(#""x" in topics"#).get() == .topic("x"))
        for bad in ["", "a in topics", "'a' in topic", "('a' in topics", "'a' in topics ||", "'a b' in topics"] {
            #expect(throws: FCMError.self) { try FCMCondition.parse(bad).get() }
        }
    }

    @Test func ttlAcceptsDurationsUpToFourWeeks() throws {
        for ttl in ["0s", "3.5s", "2419200s", "0.000000001s"] {
            _ = try validate(#"{"message":{"token":"tok","android":{"ttl":"\#(ttl)"}}}"#).get()
        }
        #expect(message(validate(#"{"message":{"token":"tok","android":{"ttl":"2419200.5s"}}}"#)) != nil)
    }
}

/// The token's shape is checked eight bytes at a time: every ASCII byte, at every place
/// in a word and in the tail, judged as printable-and-not-space is judged a byte at a time.
@Suite struct FCMTokenShapeTests {
    static func body(token: String) -> String {
        let message: JSON = ["message": ["token": .string(token)]]
        return message.compactText
    }

    @Test func everyByteAtEveryPlaceIsJudgedAsOneAtATime() {
        let token = Array("abcdefghijklmnopqrstuvwxyz:_-0123456789".utf8)  // four words and a tail
        for place in token.indices {
            for byte in UInt8(0)...UInt8(0x7F) {
                var bytes = token
                bytes[place] = byte
                let text = String(decoding: bytes, as: UTF8.self)
                let body = Self.body(token: text)
                let refused: Bool
                if case .failure(let error) = FCMRequest(body: Array(body.utf8)).validate() {
                    refused = error.message == "The registration token is not a valid FCM registration token"
                } else {
                    refused = false
                }
                #expect(refused == !(byte > 0x20 && byte < 0x7F), "byte \(byte) at \(place)")
            }
        }
        let accented = String(decoding: token.prefix(8) + [0xC3, 0xA9] + token.dropFirst(10), as: UTF8.self)
        let body = Self.body(token: accented)
        if case .failure(let error) = FCMRequest(body: Array(body.utf8)).validate() {
            #expect(error.message == "The registration token is not a valid FCM registration token")
        } else {
            Issue.record("a token with a byte past ASCII was taken")
        }
    }
}
