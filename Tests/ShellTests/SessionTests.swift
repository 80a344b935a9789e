import Foundation
import OrderedJSON
import ShellKit
import Testing

@testable import SimulatedDevice

@Suite struct SessionTests {
    /// Every line gets exactly one reply, last, whose first key is "reply".
    func expectOneReply(_ output: [String]) {
        guard let last = output.last, let reply = try? JSON.parse(text: last).objectValue else {
            Issue.record("no reply in \(output)")
            return
        }
        #expect(reply.orderedKeys.first == "reply")
        #expect(reply["ok"] == true || reply["ok"] == false)
        for line in output.dropLast() {
            #expect((try? JSON.parse(text: line).objectValue?.orderedKeys.first) == "delivery")
        }
    }

    @Test func thousandsOfRandomLinesNeverStopTheShell() {
        let session = Session()
        var generator = IDGenerator(seed: 0x5EED)  // replayable
        let ops = ["device", "launch", "kill", "tap", "apns", "fcm", "simctl", "call", "subscribe", "state", "nope"]
        let fragments = [
            "{", "}", "[", "]", "\"op\":", "\"id\":", ",", "null", "1e400", "-0", "\"\\u0000\"", "\"platform\":\"ios\"",
            "\"body\":", "{\"aps\":{}}", "\"headers\":", "true", "99999999999999999999", "\u{FF}", "\"which\":",
        ]
        for index in 0..<3000 {
            var line: [UInt8]
            switch index % 3 {
            case 0:
                line = (0..<Int.random(in: 0...40, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
            case 1:
                line = Array(
                    (0..<Int.random(in: 1...12, using: &generator)).map { _ in
                        fragments.randomElement(using: &generator)!
                    }.joined().utf8)
            default:
                let op = ops.randomElement(using: &generator)!
                let field = fragments.randomElement(using: &generator)!
                line = Array(
                    #"{"op":"\#(op)","platform":"android","which":"newest","id":\#(index),"x":\#(field)}"#.utf8)
            }
            expectOneReply(session.handle(line: line))
        }
        let after = session.handle(#"{"op":"device","platform":"ios","id":"still here"}"#)
        #expect(after == [#"{"reply":"still here","ok":true,"platform":"ios","bundle":"com.example.app"}"#])
    }

    @Test func anOversizedLineIsRefusedWithItsSize() {
        let line = [UInt8](repeating: UInt8(ascii: "a"), count: Session.maxLineBytes + 1)
        let output = Session().handle(line: line)
        #expect(output == [#"{"reply":null,"ok":false,"error":"the line is 1048577 bytes; the limit is 1048576"}"#])
    }

    @Test func deepNestingIsRefusedClearly() throws {
        let line = String(repeating: "[", count: 100_000)
        let reply = try #require(Session().handle(line).last)
        #expect(reply.contains("nesting is deeper than \(JSONLimits.defaultMaxDepth) levels"))
    }

    @Test func theSameScenarioGivesTheSameTranscriptApartFromGeneratedValues() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Scenarios")
        for name in ["ios-seed-checks.cxs", "android-seed-checks.cxs", "token-rotation.cxs"] {
            let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            let scenario = try Scenario(name: name, text: text)
            let first = normalized(ScenarioRunner.run(scenario))
            #expect(!first.isEmpty)
            #expect(normalized(ScenarioRunner.run(scenario)) == first)
        }
    }

    /// The transcript with tokens, apns-ids and FCM message ids replaced by placeholders.
    func normalized(_ run: ScenarioRun) -> [String] {
        let patterns = [
            "[0-9a-f]{64}", "[A-Za-z0-9_-]{22}:APA91b[A-Za-z0-9_-]{134}",
            "[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}", "0:[0-9]+%[A-Za-z0-9_-]{8}",
        ]
        return run.exchanges.flatMap { [$0.request] + $0.output }.map { line in
            patterns.reduce(line) { text, pattern in
                text.replacingOccurrences(of: pattern, with: "<generated>", options: .regularExpression)
            }
        }
    }
}
