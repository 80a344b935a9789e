import OrderedJSON
import PushPlugin
import Testing

@Suite struct PayloadTests {
    func ios(_ text: String, _ action: NotificationAction = .opened) -> String {
        PushEvent.ios(userInfo: object(text), action: action).compactText
    }

    @Test func PAY_1_keysExceptApsInOrderThenTitleBodyThenMobilerPush() {
        #expect(
            ios(#"{"z":1,"aps":{"alert":{"body":"b","title":"t","subtitle":"s"}},"a":{"y":1,"x":2}}"#)
                == #"{"z":1,"a":{"y":1,"x":2},"title":"t","body":"b","mobiler_push":"opened"}"#)
    }

    @Test func PAY_1_aStringAlertIsTheBody() {
        #expect(ios(#"{"aps":{"alert":"hello"}}"#, .received) == #"{"body":"hello","mobiler_push":"received"}"#)
    }

    @Test func PAY_1_noApsOrNoAlertAddsNothing() {
        #expect(ios(#"{"k":"v"}"#) == #"{"k":"v","mobiler_push":"opened"}"#)
        #expect(ios(#"{"aps":{"badge":3}}"#) == #"{"mobiler_push":"opened"}"#)
    }

    @Test func PAY_1_valuesAreKeptExactly() {
        let text =
            #"{"big":9223372036854775807,"neg":-9223372036854775808,"precise":9007199254740993,"price":9.99,"nested":{"b":[1,{"d":null,"c":true}],"a":"é😀\u0000"}}"#
        #expect(ios(text) == String(text.dropLast()) + #","mobiler_push":"opened"}"#)
    }

    @Test func PAY_2_dataKeysInOrderThenNotificationTitleAndBody() {
        let event = PushEvent.android(
            data: object(#"{"type":"x","id":"1"}"#), notificationTitle: "T", notificationBody: "B", action: .received)
        #expect(event.compactText == #"{"type":"x","id":"1","title":"T","body":"B","mobiler_push":"received"}"#)
    }

    /// The text a posted notification keeps and the event spliced from it are written from
    /// `data` with no event built: each must be, byte for byte, what the built event writes.
    /// Random messages: keys Android or the plugin reserves among the sender's, `title` and
    /// `body` in the data or not, strings that need escaping and characters past ASCII, other
    /// values than strings (a payload a test builds), notification fields or none.
    @Test func PAY_2_theMessagesTextIsTheBuiltEventsTextWithNoEventBuilt() {
        let keys = [
            "title", "body", "a", "type", "from", "collapse_key", "message_type", "google.sent_time", "gcm.n.e",
            "googl", "mobiler_push", "mobiler_action", "mobiler_input", "fromage", "k\"q", "é", "\u{1F600}", "",
        ]
        let strings = ["", "x", "a\"b\\c", "line\nbreak\u{0}", "é😀", String(repeating: "long ", count: 20)]
        let values: [JSON] =
            strings.map(JSON.string) + [.null, .bool(true), .number(JSONNumber(text: "1.50")!), .array([])]
        // PAY-2 and PAY-4's keys, as the contract lists them.
        for key in keys + ["google", "gcm", "gcm.", "google.", "mobiler_pushes", "m", "g", "c", "f"] {
            let android =
                key.hasPrefix("google.") || key.hasPrefix("gcm.") || key == "from" || key == "collapse_key"
                || key == "message_type"
            #expect(PushEvent.isAndroidReserved(key) == android, "\(key)")
            #expect(PushEvent.isReserved(key) == ["mobiler_push", "mobiler_action", "mobiler_input"].contains(key))
        }
        var generator = SystemRandomNumberGenerator()
        var plainForms = 0
        for _ in 0..<5_000 {
            var data = JSONObject()
            for _ in 0..<Int.random(in: 0...8, using: &generator) {
                data[keys.randomElement(using: &generator)!] = values.randomElement(using: &generator)!
            }
            let title = Bool.random(using: &generator) ? strings.randomElement(using: &generator) : nil
            let body = Bool.random(using: &generator) ? strings.randomElement(using: &generator) : nil
            let built = PushEvent.androidMessage(data: data, notificationTitle: title, notificationBody: body)
            let text = PushEvent.androidMessageText(
                data: JSONStringMap(data), notificationTitle: title, notificationBody: body)
            let message = "data \(data.compactText), title \(title ?? "nil"), body \(body ?? "nil")"
            #expect(text == built.compactText, "\(message)")
            // The same data kept as its text, as the shell reads most senders' data.
            if let plain = JSONStringMap(plainText: data.compactText) {
                plainForms += 1
                #expect(
                    PushEvent.androidMessageText(data: plain, notificationTitle: title, notificationBody: body)
                        == text, "plain \(message)")
            }
            for action in [NotificationAction.received, .opened] {
                #expect(
                    PushEvent.android(messageText: text, action: action)
                        == PushEvent.android(built, action: action).compactText, "\(message)")
            }
        }
        #expect(plainForms > 500, "the data's plain form was met \(plainForms) times")
    }

    @Test func PAY_3_titleAndBodyNeverOverwriteThePayloadsOwnKeys() {
        #expect(
            ios(#"{"title":"mine","aps":{"alert":{"title":"t","body":"b"}}}"#)
                == #"{"title":"mine","body":"b","mobiler_push":"opened"}"#)
        let event = PushEvent.android(
            data: object(#"{"body":"mine"}"#), notificationTitle: "T", notificationBody: "B", action: .opened)
        #expect(event.compactText == #"{"body":"mine","title":"T","mobiler_push":"opened"}"#)
    }

    @Test func PAY_4_aPayloadsOwnMobilerPushIsRemovedAndOursIsLast() {
        #expect(
            ios(#"{"mobiler_push":"forged","a":1,"aps":{"alert":"x"}}"#)
                == #"{"a":1,"body":"x","mobiler_push":"opened"}"#)
        let event = PushEvent.android(
            data: object(#"{"mobiler_push":"x","b":"2"}"#), notificationTitle: nil, notificationBody: nil,
            action: .received)
        #expect(event.compactText == #"{"b":"2","mobiler_push":"received"}"#)
        #expect(
            PushEvent.with(.opened, object(#"{"a":1,"mobiler_push":"received","b":2}"#)).compactText
                == #"{"a":1,"b":2,"mobiler_push":"opened"}"#)
    }

    @Test func TAP_3_theBufferBoundIsThirtyTwoAndCountsDrops() {
        var buffer = TapBuffer()
        for index in 0..<100 { buffer.addOpened(String(index)) }
        buffer.setTokenRefresh("t")
        #expect(buffer.count == 33 && buffer.droppedTaps == 68)
        let drained = buffer.flush { _ in true }
        #expect(drained.first == .opened("68") && drained.last == .tokenRefresh(token: "t"))
        #expect(buffer.isEmpty && buffer.droppedTaps == 68)
    }

    @Test func TAP_4_aFlushThatIsRefusedKeepsTheRestInOrderAndCounted() {
        var buffer = TapBuffer()
        for index in 0..<32 { buffer.addOpened(String(index)) }
        var accepted = 0
        let delivered = buffer.flush { _ in
            accepted += 1
            return accepted <= 10
        }
        #expect(delivered == (0..<10).map { .opened(String($0)) })
        #expect(buffer.entries == (10..<32).map { .opened(String($0)) })
        // The bound still counts only what is really held: 10 more fit before a drop.
        for index in 32..<42 { buffer.addOpened(String(index)) }
        #expect(buffer.count == 32 && buffer.droppedTaps == 0)
        buffer.addOpened("42")
        #expect(buffer.droppedTaps == 1 && buffer.entries.first == .opened("11"))
    }
}
