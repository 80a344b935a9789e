import CXHost
import OrderedJSON
import SimulatedDevice
import Testing

@testable import ShellKit

/// The core's delivery lines, written straight into bytes, are the same text the
/// `JSONObject` of their members serializes to, escapes and all.
@Suite struct CoreEndpointTests {
    static let pieces = [
        "", "a", "events", "d12", #"{"event":"received","payload":{"aps":{"alert":"x"}}}"#, "quote \" and \\ back",
        "line\nbreak\ttab\r\u{08}\u{0C}", "\u{01}\u{1F}\u{7F}", "é ü 東京 🚀", "/slash",
        String(repeating: "z", count: 300),
    ]

    @Test func itemAndEndLinesAreTheirObjectsCompactText() {
        var generator = IDGenerator(seed: 0xC0DE)  // replayable
        for _ in 0..<500 {
            let key = Self.pieces.randomElement(using: &generator)! + Self.pieces.randomElement(using: &generator)!
            let device = Self.pieces.randomElement(using: &generator)!
            let output = (0..<3).map { _ in Self.pieces.randomElement(using: &generator)! }.joined()
            let ok = Bool.random(using: &generator)
            let item = JSONObject([
                ("delivery", .string(key)), ("device", .string(device)), ("ok", .bool(ok)), ("output", .string(output)),
            ])
            let response = PluginResponse(ok: ok, output: output)
            #expect(CoreEndpoint.itemLine(key: key, device: device, response: response) == item.compactText)
            let end = JSONObject([("delivery", .string(key)), ("device", .string(device)), ("end", true)])
            #expect(CoreEndpoint.endLine(key: key, device: device) == end.compactText)
        }
    }

    @Test func anItemLineReadsBackAsItsMembers() throws {
        let response = PluginResponse.success(#"{"event":"opened","id":"a\"b"}"#)
        let line = CoreEndpoint.itemLine(key: "k\n", device: "d1", response: response)
        let object = try #require(try JSON.parse(text: line).objectValue)
        #expect(object.orderedKeys == ["delivery", "device", "ok", "output"])
        #expect(object["delivery"] == "k\n" && object["device"] == "d1" && object["ok"] == true)
        #expect(object["output"] == .string(#"{"event":"opened","id":"a\"b"}"#))
    }
}
