import Testing

@testable import OrderedJSON

@Suite struct ObjectTests {
    @Test func settingAnExistingKeyReplacesInPlace() {
        var object = JSONObject([("a", 1), ("b", 2)])
        object["a"] = 3
        object["c"] = 4
        #expect(object.orderedKeys == ["a", "b", "c"])
        #expect(object["a"] == 3)
    }

    @Test func settingNilRemovesTheMember() {
        var object = JSONObject([("a", 1), ("b", 2), ("c", 3)])
        object["b"] = nil
        object["missing"] = nil
        #expect(object.orderedKeys == ["a", "c"])
        #expect(object.compactText == #"{"a":1,"c":3}"#)
    }

    @Test func iterationFollowsOrder() {
        let object = JSONObject([("z", "1"), ("a", "2")])
        #expect(object.map(\.key) == ["z", "a"])
        #expect(object.map(\.value) == ["1", "2"])
    }

    @Test func serializationEscapesControlCharactersAndQuotes() {
        let value: JSON = ["k\"ey": "line\nbreak\u{1}", "n": nil, "b": false, "a": [1, 2.5]]
        #expect(value.compactText == #"{"k\"ey":"line\nbreak\u0001","n":null,"b":false,"a":[1,2.5]}"#)
    }

    /// `compactText` writes into room found from the lengths alone; text where every byte
    /// takes six (`\u00XX`), everywhere a string can be, fills it exactly.
    @Test func textOfOnlyEscapedBytesFillsTheWorstCase() {
        let worst = String(repeating: "\u{1}", count: 40)
        let escaped = String(repeating: #"\u0001"#, count: 40)
        let value = JSON.object(
            JSONObject([
                (
                    worst,
                    .array([.string(worst), .object(JSONObject([(worst, .string(worst))])), [], [:], nil, true, false])
                ),
                ("", ""),
            ]))
        let text = #"{"\#(escaped)":["\#(escaped)",{"\#(escaped)":"\#(escaped)"},[],{},null,true,false],"":""}"#
        #expect(value.compactText == text)
        #expect(value.compactBytes == Array(text.utf8))
        #expect(value.sizeBound >= text.utf8.count)
        // Past the room it takes for a worst case, the text is measured exactly instead.
        let large = JSON.array([.string(String(repeating: "\u{1}a\"", count: 4_000)), value])
        #expect(large.sizeBound > JSON.largestRoomForTheWorstCase)
        #expect(large.compactText == String(decoding: large.compactBytes, as: UTF8.self))
        #expect(large.compactText.utf8.count == 4_000 * 9 + 2 + 1 + text.utf8.count + 2)
        for small: JSON in [nil, true, false, 0, "", [], [:], -1.5e300] {
            #expect(small.sizeBound >= small.compactBytes.count, "\(small)")
        }
    }

    @Test func reparsingSerializedOutputGivesTheSameValue() throws {
        let value: JSON = ["x": ["deep": ["deeper": [1, "two", 3.25, true, nil]]], "y": .integer(.min)]
        #expect(try JSON.parse(text: value.compactText) == value)
    }

    /// `write(to:)` appends, in place, the same bytes `compactBytes` makes, after what the
    /// output held: for seeded random values (escapes, non-ASCII, nesting, every kind of
    /// value), the worst case's text, and a value past the room `compactText` takes.
    @Test func appendingWritesTheCompactBytesAfterWhatTheOutputHeld() {
        var random = SeededRandom(seed: 0xA99E_0D)
        let worst = String(repeating: "\u{1}", count: 40)
        var values = (0..<2_000).map { _ in DirectReaderTests.randomValue(&random, depth: 0) }
        values += [
            .object(JSONObject([(worst, .array([.string(worst), [], [:], nil, true, false, .integer(.min)]))])),
            .array([.string(String(repeating: "\u{1}a\"", count: 4_000))]),
        ]
        for value in values {
            let held = Array("held\n".utf8)
            var output = ByteOutput()
            output.append(held)
            value.write(to: &output)
            #expect(output.bytes == held + value.compactBytes, "\(value)")
            if case .object(let object) = value {
                var objectOutput = ByteOutput()
                objectOutput.append(held)
                object.write(to: &objectOutput)
                #expect(objectOutput.bytes == output.bytes)
            }
        }
    }
}
