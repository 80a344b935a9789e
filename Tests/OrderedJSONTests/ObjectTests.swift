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

    @Test func reparsingSerializedOutputGivesTheSameValue() throws {
        let value: JSON = ["x": ["deep": ["deeper": [1, "two", 3.25, true, nil]]], "y": .integer(.min)]
        #expect(try JSON.parse(text: value.compactText) == value)
    }
}
