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
        for index in 0..<2000 {
            let line: [UInt8] =
                index % 2 == 0
                ? (0..<Int.random(in: 0...40, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
                : Array(
                    (0..<Int.random(in: 1...12, using: &generator)).map { _ in
                        ["{", "}", "[", "]", "\"op\":", "\"id\":", ",", "null", "1e400", "\"x\"", "\u{FF}"]
                            .randomElement(using: &generator)!
                    }.joined().utf8)
            let output = session.handle(line: line)
            if line.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
                #expect(output.isEmpty, "a line of white space only is not a request")
            } else {
                expectOneReply(output)
            }
        }
        let after = session.handle(#"{"op":"device","platform":"ios","id":"still here"}"#)
        #expect(
            after == [#"{"reply":"still here","ok":true,"device":"d1","platform":"ios","bundle":"com.example.app"}"#])
    }

    /// Valid requests with exactly one field broken (missing, or of a wrong type): each
    /// is refused with a sentence that names that field, delivers nothing, and changes
    /// nothing (the device's state reads the same before and after).
    @Test func requestsWithOneBrokenFieldAreRefusedByNameAndChangeNothing() throws {
        let templates: [(platform: String, op: String, fields: [(String, String)])] = [
            ("ios", "permission", [("answer", #""deny""#)]),
            ("ios", "call", [("plugin", #""push""#), ("method", #""register""#), ("input", #""""#)]),
            ("ios", "notify", [("plugin", #""push""#), ("method", #""register""#), ("input", #""""#)]),
            (
                "ios", "subscribe",
                [("key", #""k2""#), ("plugin", #""push""#), ("stream", #""events""#), ("input", #""""#)]
            ),
            ("ios", "unsubscribe", [("key", #""push""#)]),
            ("ios", "tap", [("which", #""newest""#)]),
            ("ios", "apns", [("body", #"{"aps":{"alert":"x"}}"#), ("headers", #"{"apns-topic":"com.example.app"}"#)]),
            ("ios", "simctl", [("file", #"{"aps":{"alert":"x"}}"#), ("bundle", #""com.example.app""#)]),
            ("android", "fcm", [("body", #"{"message":{"topic":"t","data":{"k":"v"}}}"#)]),
            ("android", "device", [("platform", #""android""#), ("bundle", #""com.example.app""#)]),
        ]
        let wrongTypes = ["7", "[]", "{}", "true", "null", "1.5"]
        var generator = IDGenerator(seed: 0xB40CE)
        for (platform, op, fields) in templates {
            let session = Session()
            _ = session.handle(#"{"op":"device","platform":"\#(platform)"}"#)
            _ = session.handle(#"{"op":"launch"}"#)
            _ = session.handle(#"{"op":"call","plugin":"push","method":"register","input":""}"#)
            _ = session.handle(#"{"op":"subscribe","key":"push","plugin":"push","stream":"events","input":""}"#)
            for (index, field) in fields.enumerated() {
                for broken in [nil] + wrongTypes.shuffled(using: &generator).prefix(3).map(Optional.some) {
                    // Optional strings may be null, and a JSON "body" may be any value.
                    if broken == "null" && ["input", "bundle", "headers"].contains(field.0) { continue }
                    if ["body", "file"].contains(field.0) && broken != nil { continue }
                    if broken == nil && ["input", "bundle", "headers"].contains(field.0) { continue }
                    var members = fields.map { #""\#($0.0)":\#($0.1)"# }
                    if let broken { members[index] = #""\#(field.0)":\#(broken)"# } else { members.remove(at: index) }
                    let line = #"{"op":"\#(op)""# + members.map { "," + $0 }.joined() + "}"
                    let before = session.handle(#"{"op":"state"}"#)
                    let output = session.handle(line)
                    #expect(output.count == 1, "\(line) delivered \(output.dropLast())")
                    let reply = output.last ?? ""
                    #expect(reply.contains(#""ok":false"#) && reply.contains(#"\"\#(field.0)"#), "\(line) → \(reply)")
                    #expect(session.handle(#"{"op":"state"}"#) == before, "\(line) changed the state")
                }
            }
        }
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

    /// `serve` has each line's lines written as bytes into its output; they must be, byte
    /// for byte, the lines `handle(line:)` gives as text, over every kind of reply: refusals,
    /// deliveries before their reply, escapes and characters past ASCII in what is echoed.
    @Test func linesWrittenAsBytesAreTheLinesGivenAsText() {
        let requests = [
            #"{"op":"device","platform":"ios","id":"é \"quoted\" \u0001"}"#,
            #"{"op":"launch"}"#,
            #"{"op":"call","plugin":"push","method":"register"}"#,
            #"{"op":"subscribe","key":"k","plugin":"push","stream":"events"}"#,
            #"{"op":"apns","headers":{"apns-topic":"com.example.app"},"body":{"aps":{"alert":"ü\n\"x\" 👋"},"n":1.50}}"#,
            #"{"op":"apns","headers":{"apns-topic":"com.example.app"},"body_text":"{\"aps\":{\"alert\":\"t\"}}"}"#,
            #"{"op":"tap","which":"newest"}"#,
            #"{"op":"tap","which":"newest"}"#,
            #"{"op":"device","platform":"android"}"#,
            #"{"op":"launch"}"#,
            #"{"op":"call","plugin":"push","method":"register"}"#,
            #"{"op":"fcm","message":{"notification":{"title":"\u00e9","body":"b"},"data":{"k":"v\t"}}}"#,
            #"{"op":"nope"}"#, "{", "   ", "[1,2]", #"{"op":"apns","body":{}}"#,
        ]
        let asText = Session()
        let asBytes = Session()
        for request in requests {
            let text = asText.handle(line: Array(request.utf8)).map { $0 + "\n" }.joined()
            var output = ByteOutput()
            asBytes.handle(line: Array(request.utf8), writingLinesTo: &output)
            let bytes = output.withBytes { String(decoding: $0, as: UTF8.self) }
            #expect(normalized(bytes) == normalized(text), "\(request)")
            #expect(request.allSatisfy(\.isWhitespace) || !text.isEmpty)
        }
    }

    /// The transcript with tokens, apns-ids and FCM message ids replaced by placeholders.
    func normalized(_ run: ScenarioRun) -> [String] {
        run.exchanges.flatMap { [$0.request] + $0.output }.map(normalized)
    }

    /// `line` with tokens, apns-ids and FCM message ids replaced by placeholders.
    func normalized(_ line: String) -> String {
        let patterns = [
            "[0-9a-f]{64}", "[A-Za-z0-9_-]{22}:APA91b[A-Za-z0-9_-]{134}",
            "[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}", "0:[0-9]+%[A-Za-z0-9_-]{8}",
            #""fid":"[A-Za-z0-9_-]{22}""#,
        ]
        return patterns.reduce(line) { text, pattern in
            text.replacingOccurrences(of: pattern, with: "<generated>", options: .regularExpression)
        }
    }
}
