import OrderedJSON
import PushServices
import Testing

@Suite struct FCMRequestTests {
    func validate(_ text: String, token: String? = "tok") -> Result<FCMMessage, FCMError> {
        FCMRequest(body: Array(text.utf8)).validate(deviceToken: token)
    }

    func message(_ result: Result<FCMMessage, FCMError>) -> String? {
        if case .failure(let error) = result { error.message } else { nil }
    }

    @Test func aDataMessageKeepsItsKeysInOrder() throws {
        let message = try validate(#"{"message":{"token":"tok","data":{"z":"1","a":"2"}}}"#).get()
        #expect(message.data.orderedKeys == ["z", "a"])
        #expect(!message.isNotificationMessage)
        #expect(message.target == .token("tok"))
    }

    @Test func androidNotificationOverridesTheNotificationBlock() throws {
        let message = try validate(
            #"{"message":{"token":"tok","notification":{"title":"a","body":"b"},"android":{"notification":{"title":"c","tag":"t"},"data":{"x":"1"}}}}"#
        ).get()
        #expect(message.title == "c" && message.body == "b" && message.tag == "t" && message.isNotificationMessage)
        #expect(message.data.orderedKeys == ["x"])
    }

    @Test func errorsUseFCMsEnvelope() {
        guard case .failure(let error) = validate(#"{"message":{"token":"other"}}"#) else {
            Issue.record("expected UNREGISTERED")
            return
        }
        #expect(error == FCMError(code: 404, status: "UNREGISTERED", message: "Requested entity was not found."))
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

    @Test func conditionsAreParsed() throws {
        #expect(
            try FCMCondition.topics(in: "'a' in topics && ('b' in topics || !('c' in topics))").get() == [
                "a", "b", "c",
            ])
        #expect(try FCMCondition.topics(in: #""x" in topics"#).get() == ["x"])
        for bad in ["", "a in topics", "'a' in topic", "('a' in topics", "'a' in topics ||", "'a b' in topics"] {
            #expect(throws: FCMError.self) { try FCMCondition.topics(in: bad).get() }
        }
    }

    @Test func ttlAcceptsDurationsUpToFourWeeks() throws {
        for ttl in ["0s", "3.5s", "2419200s", "0.000000001s"] {
            _ = try validate(#"{"message":{"token":"tok","android":{"ttl":"\#(ttl)"}}}"#).get()
        }
        #expect(message(validate(#"{"message":{"token":"tok","android":{"ttl":"2419200.5s"}}}"#)) != nil)
    }
}
