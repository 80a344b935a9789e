import Testing

@testable import OrderedJSON

@Suite struct ParsingTests {
    @Test func objectKeysKeepTheirOrder() throws {
        let text = #"{"zeta":1,"alpha":2,"mid":{"b":1,"a":2},"0":null}"#
        let value = try JSON.parse(text: text)
        #expect(value.objectValue?.orderedKeys == ["zeta", "alpha", "mid", "0"])
        #expect(value["mid"]?.objectValue?.orderedKeys == ["b", "a"])
        #expect(value.compactText == text)
    }

    @Test func sixtyFourBitExtremesAreExact() throws {
        let text = #"[9223372036854775807,-9223372036854775808,9007199254740993,0,-1]"#
        let value = try JSON.parse(text: text)
        #expect(value == [.integer(.max), .integer(.min), .integer(9_007_199_254_740_993), 0, -1])
        #expect(value.compactText == text)
    }

    @Test(arguments: ["9223372036854775808", "-9223372036854775809", #"{"id":123456789012345678901234567890}"#])
    func integerBeyondSixtyFourBitsIsAClearError(text: String) {
        #expect {
            _ = try JSON.parse(text: text)
        } throws: { error in
            let error = error as! JSONError
            return error.kind == .integerOverflow && error.description.contains("64 bits")
                && error.description.contains("line 1, column")
        }
    }

    @Test func realsRoundTripInShortestForm() throws {
        let value = try JSON.parse(text: "[9.99,0.1,1.5,-0.0,1e300,5e-324,1E2,2.5e-7]")
        #expect(value.compactText == "[9.99,0.1,1.5,-0.0,1e+300,5e-324,100.0,2.5e-07]")
        let again = try JSON.parse(text: value.compactText)
        #expect(again == value)
    }

    @Test func escapesAndNulSurviveByteForByte() throws {
        let text = #"{"s":"a\u0000b\"c\\d\n\t\r\b\f\u001f/é😀","k":1}"#
        let value = try JSON.parse(text: text)
        let string = try #require(value["s"]?.stringValue)
        #expect(Array(string.utf8) == Array("a\u{0}b\"c\\d\n\t\r\u{8}\u{c}\u{1f}/é😀".utf8))
        #expect(value.compactText == text)
    }

    @Test func nulInAnObjectKeyIsAClearError() {
        // jansson stores keys as C strings; it refuses rather than truncating.
        #expect {
            _ = try JSON.parse(text: #"{"k\u0000x":1}"#)
        } throws: { error in
            let error = error as! JSONError
            return error.description.contains("NUL byte in object key") && error.line == 1
        }
    }

    @Test func unicodeEscapesDecodeToUTF8() throws {
        let value = try JSON.parse(text: #""\u00e9\ud83d\ude00""#)
        #expect(value == .string("é😀"))
        #expect(value.compactText == "\"é😀\"")
    }

    @Test func invalidUTF8IsRejectedWithPosition() {
        let bytes: [UInt8] = Array(#"{"a":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        #expect {
            _ = try JSON.parse(bytes)
        } throws: { error in
            let error = error as! JSONError
            return error.kind == .invalidUTF8 && error.line == 1 && error.description.contains("column")
        }
    }

    @Test(arguments: [#"{"a":"#, #"{"a":[1,2"#, #"["#, #""abc"#])
    func truncatedInputIsRejected(text: String) {
        #expect {
            _ = try JSON.parse(text: text)
        } throws: { error in
            (error as! JSONError).kind == .truncated
        }
    }

    @Test func trailingGarbageIsRejectedWithLineAndColumn() {
        #expect {
            _ = try JSON.parse(text: "{\"a\":1}\n  x")
        } throws: { error in
            let error = error as! JSONError
            return error.kind == .trailingGarbage && error.line == 2 && error.column >= 3
                && error.description.hasPrefix("invalid JSON at line 2, column")
        }
    }

    @Test func nestingPastTheLimitIsRejected() throws {
        let okay = String(repeating: "[", count: 2048) + String(repeating: "]", count: 2048)
        _ = try JSON.parse(text: okay)
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect {
            _ = try JSON.parse(text: deep)
        } throws: { error in
            let error = error as! JSONError
            return error.kind == .tooDeep && error.description.contains("2048")
        }
    }

    @Test(arguments: ["", "   ", "\n\t"])
    func emptyInputIsRejected(text: String) {
        #expect(throws: JSONError(kind: .empty, line: 1, column: 1, reason: "the input is empty")) {
            _ = try JSON.parse(text: text)
        }
    }

    @Test func oversizedInputIsRejectedBeforeParsing() {
        let text = "\"" + String(repeating: "a", count: 100) + "\""
        #expect {
            _ = try JSON.parse(text: text, limits: JSONLimits(maxBytes: 64))
        } throws: { error in
            let error = error as! JSONError
            return error.kind == .tooLarge(bytes: 102, limit: 64) && error.description.contains("102 bytes")
        }
    }

    @Test func duplicateKeysAreRejectedRatherThanLosingAValue() {
        #expect {
            _ = try JSON.parse(text: #"{"a":1,"b":2,"a":3}"#)
        } throws: { error in
            let error = error as! JSONError
            return error.kind == .duplicateKey && error.description.contains("line 1")
        }
    }

    @Test(arguments: [#"{"a":}"#, "[1,]", "nul", "{'a':1}", "01"])
    func syntaxErrorsNameLineAndColumn(text: String) {
        #expect {
            _ = try JSON.parse(text: text)
        } throws: { error in
            let error = error as! JSONError
            return error.line == 1 && error.column > 0 && error.description.contains("line 1, column")
        }
    }

    @Test func scalarsAreAcceptedAtTheRoot() throws {
        #expect(try JSON.parse(text: "true") == true)
        #expect(try JSON.parse(text: "null") == nil)
        #expect(try JSON.parse(text: " 42 ") == 42)
        #expect(try JSON.parse(text: #""x""#) == "x")
    }
}
