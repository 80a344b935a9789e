import CJansson
import CJanssonArena
import Foundation
import Testing

@testable import OrderedJSON

/// jansson's allocations during a parse come from a block each thread reuses
/// (Sources/CJanssonArena): what each parse is served from, and what it leaves behind.
@Suite struct JanssonArenaTests {
    static let requestLine =
        #"{"op":"apns","device":"d1","headers":{"apns-topic":"com.example.app","apns-collapse-id":"c"},"body":{"aps":{"alert":"hi"},"n":7}}"#

    /// About 1 MB of JSON whose tree is far larger than the block (every object is a
    /// node, a table and its members), with keys and escaped strings jansson keeps.
    static func large(members: Int = 20_000) -> String {
        "[" + (0..<members).map { #"{"key\#($0)":"caf\u00e9 \#($0)","k":[\#($0),true,null]}"# }.joined(separator: ",")
            + "]"
    }

    /// jansson's reading alone: a request line as plain as this one is otherwise read
    /// directly (`DirectReader`), and never reaches the arena.
    static func parseByJansson(_ text: String) throws -> JSON {
        try Array(text.utf8).withUnsafeBufferPointer { try JSON.parseContiguous($0, limits: .default, direct: false) }
    }

    @Test func aRequestLineIsServedWhollyByTheArena() throws {
        let before = cx_jansson_arena_counts()
        let value = try Self.parseByJansson(Self.requestLine)
        let after = cx_jansson_arena_counts()
        #expect(value.compactText == Self.requestLine)
        #expect(after.served > before.served)
        #expect(after.spilled == before.spilled)
    }

    @Test func aTreeLargerThanTheBlockSpillsToMallocAndReadsTheSame() throws {
        let text = Self.large()
        let before = cx_jansson_arena_counts()
        let value = try JSON.parse(text: text)
        #expect(cx_jansson_arena_counts().spilled > before.spilled)
        #expect(value.arrayValue?.count == 20_000)
        #expect(value.arrayValue?[19_999]["key19999"]?.stringValue == "café 19999")
        #expect(value.compactText == (try JSON.parse(text: value.compactText)).compactText)
        // The next small parse starts from an empty block again.
        let next = cx_jansson_arena_counts()
        _ = try Self.parseByJansson(Self.requestLine)
        #expect(cx_jansson_arena_counts().spilled == next.spilled)
    }

    /// A spilled parse gives back every block malloc gave it, and so does one refused
    /// as malformed partway.
    @Test func spilledAndRefusedParsesLeaveNothingBehind() throws {
        let text = Self.large(members: 5_000)
        let malformed = String(text.dropLast()) + ",]"
        let before = cx_jansson_arena_counts()
        _ = try JSON.parse(text: text)
        #expect(throws: JSONError.self) { try JSON.parse(text: malformed) }
        let after = cx_jansson_arena_counts()
        #expect(after.spilled > before.spilled)
        #expect(after.outstanding == before.outstanding)
    }

    /// Spilled or not, a malformed input's error is jansson's own: its words and place.
    @Test(arguments: [#"{"op":"apns","device":"d1","n":7,}"#, String(large().dropLast()) + ",]"])
    func malformedInputIsNamedAsJanssonNamesIt(text: String) {
        var expected = json_error_t()
        #expect(json_loadb(text, text.utf8.count, 0, &expected) == nil)
        #expect {
            try JSON.parse(text: text)
        } throws: { error in
            let error = error as? JSONError
            return error?.line == Int(expected.line) && error?.column == Int(expected.column)
                && error?.reason == Self.reason(expected)
        }
    }

    /// A parse inside an arena another caller opened on the same thread allocates in
    /// it and leaves its release to that caller's close; the outer tree stays whole.
    @Test func aParseInsideAnOpenArenaLeavesTheOuterTreeWhole() throws {
        let opened = cx_jansson_arena_open()
        #expect(opened == 1)
        let outer = Self.load(#"{"outer":["a","b"]}"#)
        let inner = try JSON.parse(text: Self.requestLine)
        let more = Self.load(#"{"more":true}"#)
        #expect(inner.compactText == Self.requestLine)
        #expect(Self.dump(outer) == #"{"outer": ["a", "b"]}"#)
        cx_jansson_release(more)
        cx_jansson_release(outer)
        cx_jansson_arena_close(opened)
    }

    /// Thread A holds a tree in its open arena while thread B parses (opening and closing
    /// its own), then A allocates more and reads its tree: B's work touched neither A's
    /// block nor A's counts.
    @Test func eachThreadsArenaIsItsOwn() throws {
        let loaded = DispatchSemaphore(value: 0)
        let parsed = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        // What thread A saw: its tree as jansson writes it, and its counts unchanged.
        let results = ResultBox()
        let a = Thread {
            let opened = cx_jansson_arena_open()
            let tree = Self.load(#"{"mine":["x","y","z"],"n":1}"#)
            let counts = cx_jansson_arena_counts()
            loaded.signal()
            parsed.wait()
            let unchanged = cx_jansson_arena_counts().served == counts.served
            let more = Self.load(#"{"after":["p","q","r","s","t","u","v","w"]}"#)
            results.append(Self.dump(tree) == #"{"mine": ["x", "y", "z"], "n": 1}"#)
            results.append(unchanged)
            cx_jansson_release(more)
            cx_jansson_release(tree)
            cx_jansson_arena_close(opened)
            finished.signal()
        }
        a.start()
        loaded.wait()
        let parsedHere = try JSON.parse(text: Self.requestLine)
        parsed.signal()
        finished.wait()
        #expect(parsedHere.compactText == Self.requestLine)
        #expect(results.values == [true, true])
    }

    static func reason(_ error: json_error_t) -> String {
        withUnsafeBytes(of: error.text) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
    }

    static func load(_ text: String) -> UnsafeMutablePointer<json_t>? {
        var error = json_error_t()
        return json_loadb(text, text.utf8.count, 0, &error)
    }

    /// jansson's own text (its default separators), so the tree is read by jansson
    /// itself and not by the code under test.
    static func dump(_ tree: UnsafeMutablePointer<json_t>?) -> String {
        var output = [CChar](repeating: 0, count: 256)
        let length = json_dumpb(tree, &output, output.count, 0)
        return String(decoding: output.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
