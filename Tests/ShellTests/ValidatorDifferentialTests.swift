import Foundation
import Testing

@testable import OrderedJSON
@testable import PushServices

/// The APNs and FCM validators as the world runs them (an FCM message read by
/// `FCMMessageReader` when it can, the body read by `DirectReader` when it can) against the
/// same validators given the body as jansson alone reads it (the
/// reference; where jansson refuses it, the answer each service gives a body it cannot
/// read, with jansson's words): over every APNs and FCM body the scenarios send, and seeded
/// random payloads and their mutations, both answer the same notification or message, or
/// the same refusal.
@Suite struct ValidatorDifferentialTests {
    static let token = String(repeating: "ab", count: 32)
    static let records = [token: APNsTokenRecord(bundleID: "com.example.app")]

    /// jansson's reading of `body` alone: its value, or its error.
    static func reference(_ body: [UInt8]) -> Result<JSON, JSONError> {
        body.withUnsafeBufferPointer { buffer in
            do throws(JSONError) {
                return .success(try JSON.parseContiguous(buffer, limits: .default, direct: false))
            } catch {
                return .failure(error)
            }
        }
    }

    static func expectSameAPNs(_ body: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        func validate(_ parsed: JSON?) -> Result<APNsNotification, APNsRejection> {
            APNsRequest(
                headers: ["apns-topic": "com.example.app"], body: body, parsedBody: parsed, token: token
            ).validate { records[$0] }
        }
        let direct = validate(nil)
        let expected: Result<APNsNotification, APNsRejection>
        switch reference(body) {
        case .success(let value): expected = validate(value)
        // An empty or oversized body is refused before it is read, whoever reads it.
        case .failure where body.isEmpty || body.count > 4096: expected = validate(nil)
        case .failure(let error):
            expected = .failure(
                APNsRejection(status: 400, reason: "BadPayload", detail: "the payload is not JSON: \(error)"))
        }
        #expect(
            direct == expected, "body: \(String(decoding: body, as: UTF8.self).debugDescription)",
            sourceLocation: sourceLocation)
    }

    static func expectSameFCM(_ body: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let direct = FCMRequest(body: body).validate()
        let expected: Result<FCMMessage, FCMError> =
            switch reference(body) {
            case .success(let value): FCMRequest(body: body, parsedBody: value).validate()
            case .failure(let error): .failure(.invalidArgument("Invalid JSON payload received. \(error)"))
            }
        #expect(
            direct == expected, "body: \(String(decoding: body, as: UTF8.self).debugDescription)",
            sourceLocation: sourceLocation)
    }

    /// The messages `FCMMessageReader` reads without a tree, and the ones beside them it
    /// leaves to the tree: each judged as the tree judges it.
    @Test func theMessagesReadWithoutATreeAreJudgedTheSame() {
        let largest = String(repeating: "v", count: FCMRequest.maxPayloadBytes - 1)
        func keys(_ count: Int) -> String { (0..<count).map { #""k\#($0)":"v""# }.joined(separator: ",") }
        let read = [
            #"{"message":{"token":"fcm-token","data":{ "a" : "1" ,"b":"2"\#t}}}"#,
            #"{"message":{"token":"fcm-token","data":{\#(keys(JSONStringMap.maxPlainMembers))}}}"#,
            #"{"message":{"token":"fcm-token","data":{"n":"1"}}}"#,
            " { \"message\" :\n{ \"data\" : { } ,\t\"token\" : \"fcm-token\" }\r } ",
            #"{"message":{"token":"fcm-token","notification":{"title":"t","body":"b"},"data":{"a":"1","b":""}}}"#,
            #"{"message":{"token":"fcm-token","notification":{}}}"#,
            #"{"message":{"notification":{"body":"only"},"token":"fcm-token"}}"#,
            #"{"message":{"token":"fcm-token","data":{"k":"\#(largest)"}}}"#,
        ]
        let left = [
            #"{"message":{"token":"fcm-token","data":{"k":"\#(largest)v"}}}"#,
            #"{"message":{"token":"fcm-token","data":{\#(keys(JSONStringMap.maxPlainMembers + 1))}}}"#,
            #"{"message":{"token":"fcm-token","data":{"k":"\#(largest)"},"notification":{"title":"t"}}}"#,
            #"{"message":{"token":"fcm-token","data":{"from":"x"}}}"#,
            #"{"message":{"token":"fcm-token","data":{"google.x":"x"}}}"#,
            #"{"message":{"token":"fcm-token","data":{"a":"1","a":"2"}}}"#,
            #"{"message":{"token":"fcm-token","token":"fcm-token"}}"#,
            #"{"message":{"token":"fcm-token","notification":{"title":"a","title":"b"}}}"#,
            #"{"message":{"token":"fcm token"}}"#,
            #"{"message":{"token":""}}"#,
            #"{"message":{"token":7}}"#,
            #"{"message":{"token":"fcm-token","data":{"n":1}}}"#,
            #"{"message":{"token":"fcm-token","data":[]}}"#,
            #"{"message":{"token":"fcm-token","notification":{"title":"t","image":"https://x"}}}"#,
            #"{"message":{"token":"fcm-token"},"validate_only":true}"#,
            #"{"message":{"token":"fcm-token","data":{"n":"é"}}}"#,
            #"{"message":{"token":"fcm-token","data":{"n":"a\"b"}}}"#,
            #"{"message":{"token":"fcm-token","data":{"n":"\#u{7F}"}}}"#,
            #"{"message":{"topic":"news"}}"#,
            #"{"message":{}}"#,
            #"{"message":{"token":"fcm-token"}} x"#,
            #"{"message":{"token":"fcm-token"}"#,
            #"{"message":{"token":"fcm-token",}}"#,
            #"{"message":{"token":"fcm-token"},"message":{"token":"fcm-token"}}"#,
        ]
        for (bodies, reads) in [(read, true), (left, false)] {
            for text in bodies {
                let body = Array(text.utf8)
                let message = body.withUnsafeBufferPointer(FCMMessageReader.message)
                #expect((message != nil) == reads, "body: \(text.debugDescription)")
                Self.expectSameFCM(body)
            }
        }
    }

    /// Every `apns` and `fcm` line's body in the scenarios, as sent.
    @Test func theScenariosBodiesAreJudgedTheSame() throws {
        let scenarios = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Scenarios")
        var bodies = (apns: 0, fcm: 0)
        for file in try FileManager.default.contentsOfDirectory(atPath: scenarios.path) where file.hasSuffix(".cxs") {
            let text = try String(contentsOf: scenarios.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") {
                let isAPNs = line.hasPrefix("apns ")
                guard isAPNs || line.hasPrefix("fcm "), let brace = line.firstIndex(of: "{"),
                    let body = (try? JSON.parse(text: String(line[brace...])))?["body"]
                else { continue }
                let bytes = body.compactBytes.replacing(Array("{{token}}".utf8), with: Array("fcm-token".utf8))
                if isAPNs {
                    Self.expectSameAPNs(bytes)
                    bodies.apns += 1
                } else {
                    Self.expectSameFCM(bytes)
                    bodies.fcm += 1
                }
            }
        }
        #expect(bodies.apns > 20 && bodies.fcm > 10)
    }

    /// Payloads shaped as backends send them, with the values the rules read (alert
    /// strings and objects, badge, sound, content-available, FCM's target and blocks)
    /// drawn at random, then each mutated a few times.
    @Test func randomPayloadsAndTheirMutationsAreJudgedTheSame() {
        var random = SplitMix(seed: 0x5EED_0041)
        var accepted = (apns: 0, fcm: 0)
        func pick<T>(_ choices: [T]) -> T { choices[Int(random.next() % UInt64(choices.count))] }
        let texts: [JSON] = ["hi", "", "é 😀", "tab\there", "q\"uote", .null, 7, ["loc-key": "K"], [], true]
        for _ in 0..<1_500 {
            var aps = JSONObject()
            if random.next() % 4 != 0 {
                aps["alert"] = pick([pick(texts), ["title": pick(texts), "body": pick(texts)]] as [JSON])
            }
            if random.next() % 3 == 0 { aps["badge"] = pick([1, 0, -1, "2", 1.5] as [JSON]) }
            if random.next() % 3 == 0 { aps["sound"] = pick(["default", ["name": "x", "volume": 0.5], 3] as [JSON]) }
            if random.next() % 4 == 0 { aps["content-available"] = pick([1, 0, "1"] as [JSON]) }
            if random.next() % 5 == 0 { aps["category"] = pick(["REPLY", 1] as [JSON]) }
            var apns = JSONObject()
            apns["aps"] = .object(aps)
            if random.next() % 2 == 0 { apns[pick(["n", "deep", "custom"])] = pick(texts) }
            var message = JSONObject()
            message[pick(["token", "topic", "condition"])] = .string(pick(["fcm-token", "news", "'a' in topics", ""]))
            if random.next() % 2 == 0 { message["data"] = ["k": pick(["v", 1, "é"] as [JSON])] }
            if random.next() % 2 == 0 { message["notification"] = ["title": pick(texts), "body": pick(texts)] }
            if random.next() % 3 == 0 {
                message["android"] = ["ttl": pick(["60s", "1.5s", "x", 3] as [JSON]), "priority": "high"]
            }
            let fcm: JSON = ["message": .object(message)]
            for (body, isAPNs) in [(JSON.object(apns).compactBytes, true), (fcm.compactBytes, false)] {
                if isAPNs {
                    Self.expectSameAPNs(body)
                    if case .success = APNsRequest(
                        headers: ["apns-topic": "com.example.app"], body: body, token: Self.token
                    ).validate(tokens: { Self.records[$0] }) {
                        accepted.apns += 1
                    }
                } else {
                    Self.expectSameFCM(body)
                    if case .success = FCMRequest(body: body).validate() { accepted.fcm += 1 }
                }
                for _ in 0..<3 {
                    var mutated = body
                    let at = Int(random.next() % UInt64(mutated.count))
                    switch random.next() % 3 {
                    case 0: mutated[at] = pick(Array(#"{}[]:,"\0a1 é"#.utf8) + [0x01, 0xFF])
                    case 1: mutated.remove(at: at)
                    default: mutated.insert(mutated[at], at: at)
                    }
                    if isAPNs { Self.expectSameAPNs(mutated) } else { Self.expectSameFCM(mutated) }
                }
            }
        }
        // Enough of each is accepted that the notifications and messages are compared too.
        #expect(accepted.apns > 300 && accepted.fcm > 100)
    }
}
