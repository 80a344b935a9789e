import Foundation
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

    /// Numbers that a double or an Int64 would change: each must come out exactly as
    /// it went in, at the root, in an array and in an object.
    static let awkwardNumbers = [
        "0", "-0", "-0.0", "0.0", "1.50", "1E2", "1e2", "1E+2", "1e-2", "1.5e300", "1.5E-300", "5e-324",
        "2.5e-7", "9.99", "0.1", "100", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
        "-9223372036854775809", "18446744073709551615", "18446744073709551616", "123456789012345678901234567890",
        "123456789012345678.0", "9007199254740993", "9007199254740993.0", "1e400", "-1e400", "1e-400",
        "0.30000000000000004", "3.141592653589793238462643383279502884197", "1" + String(repeating: "0", count: 400),
    ]

    @Test(arguments: awkwardNumbers)
    func numbersKeepTheirExactText(number: String) throws {
        for text in [number, "[\(number)]", #"{"k":\#(number),"n":[\#(number),\#(number)]}"#, " \(number) "] {
            let value = try JSON.parse(text: text)
            #expect(value.compactText == text.trimmingCharacters(in: .whitespaces), "\(text)")
        }
    }

    /// Plain string values (printable ASCII, no escape) reach jansson as `""` and are
    /// read from the input; every other string, and every key, is jansson's own. Mixed
    /// together in any order, each value must come out as written.
    @Test func stringValuesOfEveryKindAreReadInDocumentOrder() throws {
        let text =
            #"{"token":"Qc9qG9VptdEVv6XMCKXSdg:APA91bNn_I0X4nGmH7U6up","n":12,"s":"tab\there","e":"é and 😀","#
            + #""a":["one","",2,"th\"ree",{"k":"plain value, long enough to span words"},"x"],"k2":"v2","z":""}"#
        let value = try JSON.parse(text: text)
        #expect(value.compactText == text)
        #expect(value["token"] == "Qc9qG9VptdEVv6XMCKXSdg:APA91bNn_I0X4nGmH7U6up")
        #expect(value["s"] == "tab\there")
        #expect(value["e"] == "é and 😀")
        #expect(value["a"]?.arrayValue?[3] == "th\"ree")
        #expect(value["a"]?.arrayValue?[4]["k"] == "plain value, long enough to span words")
        #expect(value.objectValue?.orderedKeys == ["token", "n", "s", "e", "a", "k2", "z"])
        // A string at the root, plain and not.
        #expect(try JSON.parse(text: #"  "just a string"  "#) == "just a string")
        #expect(try JSON.parse(text: #""line\nbreak""#) == "line\nbreak")
    }

    /// The text jansson sees leaves plain strings out, so its places differ from the
    /// input's: an error is named where it is in the input (jansson's own words and place
    /// for the same text, read with a program over libjansson).
    @Test func anErrorPastALongStringIsNamedWhereItIsInTheInput() throws {
        let cases: [(String, Int)] = [
            (#"{"token": "abcdefghijklmnopqrstuvwxyz", "n": 12, "x" 1}"#, 54),
            (#"{"a": "plain string here", "a": "again"}"#, 30),
            (#"["one", "two", 3,]"#, 18),
        ]
        for (text, column) in cases {
            #expect(throws: JSONError.self) { try JSON.parse(text: text) }
            do {
                _ = try JSON.parse(text: text)
            } catch {
                #expect(error.line == 1 && error.column == column, "\(text): \(error)")
            }
        }
        #expect(throws: JSONError.self) { try JSON.parse(text: #"{"a": "unterminated}"#) }
        #expect(throws: JSONError.self) { try JSON.parse(text: "{\"a\": \"raw \u{1} control\"}") }
    }

    @Test func numbersAreReadInDocumentOrderAcrossNesting() throws {
        let text = #"{"a":[1,{"b":2.0,"c":[3e3,{"d":-4}]},5],"e":"6 7 -8","f":{"g":9,"h":[10.10]},"i":11}"#
        let value = try JSON.parse(text: text)
        #expect(value.compactText == text)
        #expect(value["a"]?.arrayValue?[1]["c"]?.arrayValue?[0] == .number(JSONNumber(text: "3e3")!))
        #expect(value["e"] == "6 7 -8")
    }

    @Test func integersInSixtyFourBitsAreStillReadableAsIntegers() throws {
        let value = try JSON.parse(text: #"[9223372036854775807,-9223372036854775808,1.0,18446744073709551615]"#)
        let numbers = try #require(value.arrayValue).map { $0.numberValue }
        #expect(numbers[0]?.int64Value == .max)
        #expect(numbers[1]?.int64Value == .min)
        #expect(numbers[2]?.int64Value == nil && numbers[2]?.doubleValue == 1.0)
        #expect(numbers[3]?.int64Value == nil && numbers[3]?.isInteger == true)
    }

    @Test(arguments: [
        "01", "1.", ".5", "+1", "1e", "1e+", "-", "--1", "1.e5", "0x10", "NaN", "Infinity", "-Infinity", "1.5.3",
        "[1 2]", "[-]",
    ])
    func malformedNumbersAreRejectedWithAPosition(text: String) {
        #expect {
            _ = try JSON.parse(text: text)
        } throws: { error in
            let error = error as! JSONError
            return error.line == 1 && error.column > 0
        }
        #expect(JSONNumber(text: text) == nil)
    }

    @Test func numbersMadeFromSwiftValuesAreValidJSON() throws {
        for number in [JSONNumber(Int64.min), JSONNumber(0.1), JSONNumber(1e300), JSONNumber(-0.0), JSONNumber(1e-5)] {
            #expect(JSONNumber(text: number.text) == number, "\(number.text)")
        }
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

    @Test func nestingPastTheLimitIsRejectedBeforeAnyRecursion() throws {
        let limit = JSONLimits.defaultMaxDepth
        let okay = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        _ = try JSON.parse(text: okay)
        for (open, close) in [("[", "]"), (#"{"a":"#, "}")] {
            let deep = String(repeating: open, count: 1_000_000) + String(repeating: close, count: 1_000_000)
            #expect {
                _ = try JSON.parse(text: deep)
            } throws: { error in
                let error = error as! JSONError
                return error.kind == .tooDeep && error.description.contains("\(limit) levels")
            }
        }
        // Brackets inside strings are not nesting.
        let quoted = "[\"" + String(repeating: "[{", count: 10_000) + "\"]"
        _ = try JSON.parse(text: quoted)
    }

    @Test func aCallerMayAskForShallowerNesting() {
        #expect {
            _ = try JSON.parse(text: "[[[1]]]", limits: JSONLimits(maxBytes: 100, maxDepth: 2))
        } throws: { error in
            let error = error as! JSONError
            return error.kind == .tooDeep && error.line == 1 && error.column == 3
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
