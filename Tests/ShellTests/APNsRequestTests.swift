import HTTPMessage
import OrderedJSON
import PushServices
import Testing

@Suite struct APNsRequestTests {
    let token = String(repeating: "ab", count: 32)
    /// The world's tokens as APNs knows them: this app's, one retired at 1234, one
    /// issued in development, one of another app.
    static let records: [String: APNsTokenRecord] = [
        String(repeating: "ab", count: 32): APNsTokenRecord(bundleID: "com.example.app"),
        "cd": APNsTokenRecord(bundleID: "com.example.app", retiredAt: 1234),
        "de": APNsTokenRecord(bundleID: "com.example.app", environment: .development),
        "ef": APNsTokenRecord(bundleID: "com.other.app"),
    ]

    func validate(
        _ headers: [String: String], body: String = #"{"aps":{"alert":"x"}}"#, token: String? = nil,
        environment: APNsEnvironment = .production
    ) -> Result<APNsNotification, APNsRejection> {
        var headers = headers
        if headers["apns-topic"] == nil { headers["apns-topic"] = "com.example.app" }
        if headers["apns-topic"] == "" { headers["apns-topic"] = nil }
        return APNsRequest(
            headers: headers, body: Array(body.utf8), token: token ?? self.token, environment: environment
        ).validate { Self.records[$0] }
    }

    func reason(_ result: Result<APNsNotification, APNsRejection>) -> String? {
        if case .failure(let rejection) = result { "\(rejection.status) \(rejection.reason)" } else { nil }
    }

    @Test func acceptsAPlainAlertAndReportsItsHeaders() throws {
        let result = validate(["apns-collapse-id": "c", "apns-priority": "5", "apns-push-type": "alert"])
        let notification = try result.get()
        #expect(notification.collapseID == "c" && notification.priority == 5 && notification.pushType == "alert")
        #expect(notification.payload.orderedKeys == ["aps"])
    }

    @Test func defaultPriorityIsTen() throws {
        #expect(try validate([:]).get().priority == 10)
    }

    @Test func eachRuleAnswersWithAppleStatusAndReason() {
        #expect(reason(validate(["apns-id": "123"])) == "400 BadMessageId")
        #expect(reason(validate([":method": "PUT"])) == "405 MethodNotAllowed")
        #expect(reason(validate(["apns-topic": ""])) == "400 MissingTopic")
        #expect(reason(validate(["apns-collapse-id": String(repeating: "é", count: 33)])) == "400 BadCollapseId")
        #expect(reason(validate(["apns-priority": "0"])) == "400 BadPriority")
        #expect(reason(validate(["apns-push-type": "Alert"])) == "400 InvalidPushType")
        #expect(reason(validate([":path": "/3/devices/x"])) == "404 BadPath")
        #expect(reason(validate([:], token: "")) == "400 MissingDeviceToken")
        #expect(reason(validate([:], token: "abc")) == "400 BadDeviceToken")
        #expect(reason(validate([:], token: "zz")) == "400 BadDeviceToken")
        #expect(reason(validate([:], token: "cd")) == "410 Unregistered")
        #expect(reason(validate([:], token: "0123")) == "400 BadDeviceToken")  // never issued
        #expect(reason(validate([:], token: "de")) == "400 BadDeviceToken")  // development token, production host
        #expect(reason(validate([:], token: "de", environment: .development)) == nil)
        #expect(reason(validate([:], token: "ef")) == "400 DeviceTokenNotForTopic")
        #expect(reason(validate(["apns-topic": "com.example.other"])) == "400 DeviceTokenNotForTopic")
        #expect(reason(validate(["apns-expiration": "-1"])) == "400 BadExpirationDate")
        #expect(reason(validate([:], body: "")) == "400 PayloadEmpty")
        #expect(reason(validate([:], body: "[]")) == "400 BadPayload")
    }

    @Test func checksRunInPushysOrder() {
        // A request wrong in every way is answered for the first check only.
        let result = validate(["apns-id": "x", ":method": "GET", "apns-priority": "9"], body: "")
        #expect(reason(result) == "400 BadMessageId")
        #expect(reason(validate([":method": "GET", "apns-priority": "9"])) == "405 MethodNotAllowed")
        #expect(reason(validate(["apns-priority": "9", "apns-push-type": "nope"])) == "400 BadPriority")
    }

    @Test func aRetiredTokenCarriesItsTimestamp() {
        guard case .failure(let rejection) = validate([:], token: "cd") else {
            Issue.record("expected a rejection")
            return
        }
        #expect(rejection.timestamp == 1234)
    }

    /// "APNs device tokens are of variable length": every even length is a
    /// well-formed token, in either case; every odd length and every non-hex digit is not.
    @Test func tokensAreCaseInsensitiveHexOfAnyEvenLength() throws {
        let digits = Array("0123456789abcdef")
        for length in 1...200 {
            let issued = String((0..<length).map { digits[($0 * 7 + length) % 16] })
            for spelling in [issued, issued.uppercased()] {
                let result = APNsRequest(
                    headers: ["apns-topic": "com.example.app"], body: Array(#"{"aps":{}}"#.utf8), token: spelling
                ).validate { $0 == issued ? APNsTokenRecord(bundleID: "com.example.app") : nil }
                if length % 2 == 0 {
                    #expect((try? result.get()) != nil, "length \(length)")
                } else {
                    #expect(reason(result) == "400 BadDeviceToken", "length \(length)")
                }
            }
        }
        _ = try validate([":path": "/3/device/\(token)"]).get()
        #expect(reason(validate([:], token: String(token.dropLast()) + "g")) == "400 BadDeviceToken")
    }

    @Test func pushTypesNeedTheirTopicSuffix() throws {
        #expect(reason(validate(["apns-push-type": "voip"])) == "400 DeviceTokenNotForTopic")
        _ = try validate(["apns-push-type": "voip", "apns-topic": "com.example.app.voip"]).get()
        _ = try validate(["apns-push-type": "liveactivity", "apns-topic": "com.example.app.push-type.liveactivity"])
            .get()
    }

    @Test func theSizeLimitCountsBytesAndVoipAllowsMore() {
        func body(_ total: Int) -> String {
            let frame = #"{"aps":{},"p":""}"#
            let room = total - frame.utf8.count
            let padding = String(repeating: "é", count: room / 2) + (room % 2 == 1 ? "a" : "")
            return #"{"aps":{},"p":""# + padding + #""}"#
        }
        #expect(body(4096).utf8.count == 4096)
        #expect(reason(validate([:], body: body(4096))) == nil)
        #expect(reason(validate([:], body: body(4098))) == "413 PayloadTooLarge")
        #expect(
            reason(validate(["apns-push-type": "voip", "apns-topic": "com.example.app.voip"], body: body(5120))) == nil)
    }

    @Test func aPayloadWithoutApsIsAccepted() throws {
        #expect(try validate([:], body: #"{"mdm":"x"}"#).get().payload["mdm"] == "x")
    }

    @Test func headerNamesAreCaseInsensitive() throws {
        _ = try APNsRequest(headers: ["APNS-TOPIC": "com.example.app"], body: Array("{}".utf8), token: token)
            .validate { Self.records[$0] }.get()
    }

    /// A token the caller read from a device's path stands for that path: the answer is
    /// the one the path gives, with no path among the headers.
    @Test func aNormalizedPathTokenStandsForItsPath() throws {
        func validate(path: String?, hint: String?) -> Result<APNsNotification, APNsRejection> {
            var headers = ["apns-topic": "com.example.app"]
            headers[":path"] = path
            var request = APNsRequest(headers: headers, body: Array(#"{"aps":{}}"#.utf8), token: nil)
            request.normalizedPathToken = hint
            return request.validate { Self.records[$0] }
        }
        let upper = "/3/device/" + String(repeating: "AB", count: 32)
        #expect(try validate(path: nil, hint: token).get() == validate(path: upper, hint: nil).get())
        #expect(try validate(path: nil, hint: token).get().token == token)
        #expect(reason(validate(path: nil, hint: "ab")) == reason(validate(path: "/3/device/ab", hint: nil)))
        #expect(reason(validate(path: nil, hint: nil)) == "400 MissingDeviceToken")
    }
}

/// The token check reads eight bytes at a time: every byte value, at every place in a
/// word and in the tail, against the check a byte at a time.
@Suite struct TokenNormalizationTests {
    static func reference(_ token: [UInt8]) -> String? {
        guard token.count % 2 == 0,
            token.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) })
        else { return nil }
        return String(decoding: token.map { (0x41...0x46).contains($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
    }

    @Test func everyByteAtEveryPlaceIsJudgedAsOneAtATime() {
        let valid = Array("0123456789abcdef0123456789ABCDEF0123".utf8)  // 36: four words and a tail
        for place in valid.indices {
            for byte in UInt8.min...UInt8.max {
                var token = valid
                token[place] = byte
                // From a path's bytes, which need not be UTF-8.
                #expect(
                    token.withUnsafeBufferPointer { APNsRequest.normalizedToken(bytes: $0) } == Self.reference(token),
                    "byte \(byte) at \(place)")
                guard let text = String(validating: token, as: UTF8.self) else { continue }
                #expect(
                    APNsRequest.normalizedToken(text) == Self.reference(token), "byte \(byte) at \(place)")
            }
        }
        for place in 0..<valid.count - 1 {
            var token = valid
            token.replaceSubrange(place...place + 1, with: [0xC3, 0xA9])  // é: two bytes past ASCII
            #expect(APNsRequest.normalizedToken(String(decoding: token, as: UTF8.self)) == nil)
        }
        #expect(APNsRequest.normalizedToken("") == "")
        #expect(APNsRequest.normalizedToken("abc") == nil)
        #expect(APNsRequest.normalizedToken(String(repeating: "AB", count: 32)) == String(repeating: "ab", count: 32))
        let mixed = Array(String(repeating: "aB0f", count: 16).utf8)
        #expect(
            mixed.withUnsafeBufferPointer { APNsRequest.normalizedToken(bytes: $0) }
                == String(repeating: "ab0f", count: 16))
        #expect([UInt8]().withUnsafeBufferPointer { APNsRequest.normalizedToken(bytes: $0) } == "")
    }

    /// The network's fields are read in one pass, with literals for the common values:
    /// they must read as the line protocol's dictionary of the same fields does, every
    /// value (common or not) as sent, and a repeated name's first value.
    @Test func theFieldsOfARequestReadAsTheSameFieldsGivenByName() {
        let values: [(name: String, values: [String])] = [
            (":method", ["POST", "GET", "post"]),
            (":path", ["/3/device/ab"]),
            ("apns-id", ["123e4567-e89b-12d3-a456-426614174000", ""]),
            ("apns-topic", ["com.example.app", "com.example.app.voip"]),
            ("apns-collapse-id", ["c", String(repeating: "x", count: 65)]),
            ("apns-priority", ["10", "5", "1", "", "100", "é"]),
            ("apns-push-type", ["alert", "background", "voip", "alerts", ""]),
            ("apns-expiration", ["0", "1700000000", "-1"]),
        ]
        for (name, values) in values {
            for value in values {
                let fields = [(name: "user-agent", value: "x"), (name: name, value: value)]
                var expected = APNsHeaders.empty
                for field in fields { expected.take(name: field.name, value: field.value) }
                let request = HTTPRequest(headers: fields, body: [], serverName: nil, tls: false, http2: true)
                #expect(APNsHeaders(request) == expected, "\(name): \(value)")
                let repeated = HTTPRequest(
                    headers: fields + [(name: name, value: "second")], body: [], serverName: nil, tls: false,
                    http2: true)
                #expect(APNsHeaders(repeated) == expected, "\(name): \(value), then again")
            }
        }
        #expect(
            APNsHeaders(HTTPRequest(headers: [], body: [], serverName: nil, tls: false, http2: true)) == .empty)
    }
}
