import Foundation
import Testing

@testable import OrderedJSON

/// The direct reader against jansson's reading (the reference, `direct: false`): over the
/// scenarios' JSON, inputs chosen for each way the two could part, and seeded random
/// values and their mutations, both give the same value or the same error.
@Suite struct DirectReaderTests {
    /// What one reading gave: the value, or the error's words and place.
    enum Reading: Equatable {
        case value(JSON)
        case error(String)
    }

    static func read(_ bytes: [UInt8], direct: Bool, limits: JSONLimits = .default) -> Reading {
        bytes.withUnsafeBufferPointer { buffer in
            do throws(JSONError) {
                return .value(try JSON.parseContiguous(buffer, limits: limits, direct: direct))
            } catch {
                return .error("\(error.kind) \(error.line):\(error.column) \(error.reason)")
            }
        }
    }

    /// Both readings of `bytes`, recorded when they differ.
    static func expectSame(
        _ bytes: [UInt8], limits: JSONLimits = .default, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let direct = read(bytes, direct: true, limits: limits)
        let reference = read(bytes, direct: false, limits: limits)
        #expect(
            direct == reference, "input: \(String(decoding: bytes, as: UTF8.self).debugDescription)",
            sourceLocation: sourceLocation)
    }

    /// Each input stands for a way the direct reader could part from jansson: where it
    /// must read the value itself, and where it must leave the input to jansson.
    static let edges: [String] = [
        #"{"aps":{"alert":"bench"},"n":1}"#, "{}", "[]", " { } ", "[ ]", "\t\n\r 1 \r\n", "0", "-0", "1.50e+3",
        "true", "false", "null", #""""#, #""x""#, "[1,2,[3,[4,{}]]]", #"{"a":{"b":{"c":[]}}}"#,
        // What jansson refuses or reads differently.
        "", "   ", "{", "}", "[1,]", "[,1]", #"{"a":1,}"#, #"{"a" 1}"#, #"{"a":}"#, #"{a:1}"#, "01", "1.", ".5", "-",
        "+1", "1e", "1e+", "--1", "0x1", "1 2", "[1 2]", "tru", "truex", "nul", "nulll", "True", "NaN", "Infinity",
        #"{"a":1}x"#, #"{"a":1} {"#, "\u{FEFF}{}", "[\"a\"]]", #"{"a":1,"a":2}"#, #"{"a":1,"b":{"a":2},"a":3}"#,
        // Strings: escapes, control characters, DEL, UTF-8 of every length and broken.
        #""tab\there""#, #""\u0000""#, #""\ud83d\ude00""#, #""\ud83d""#, #""\/""#, "\"a\u{7F}b\"", "\"a\u{01}b\"",
        "\"line\nbreak\"", #""é and 😀""#, #"{"ключ":"значение"}"#, "\"\u{10FFFF}\"", #""unterminated"#,
        #""a long plain string of printable ascii, quite long""#, #"{"":""}"#, #"{"k":"v","":1}"#,
    ]

    @Test func edgeInputsReadTheSame() {
        for text in Self.edges { Self.expectSame(Array(text.utf8)) }
        // Bytes no Swift string literal can hold: overlong forms, surrogates, past U+10FFFF,
        // truncated sequences, a lone continuation byte, NUL outside a string.
        let broken: [[UInt8]] = [
            [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xE0, 0x80, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xF0, 0x9F, 0x98, 0x22], [0x22, 0x80, 0x22],
            [0x22, 0xFF, 0x22], [0x5B, 0x31, 0x00, 0x5D], [0x7B, 0x22, 0xC3, 0x22, 0x3A, 0x31, 0x7D],
            [0x22, 0xEF, 0xBF, 0xBF, 0x22], [0x22, 0xF0, 0x90, 0x80, 0x80, 0x22],
        ]
        for bytes in broken { Self.expectSame(bytes) }
    }

    @Test func nestingAtAndPastTheLimitReadsTheSame() {
        let limits = JSONLimits(maxBytes: 1 << 20, maxDepth: 8)
        for depth in [7, 8, 9, 20] {
            Self.expectSame(
                Array((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8),
                limits: limits)
            let object = String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
            Self.expectSame(Array(object.utf8), limits: limits)
        }
        for depth in [DirectReader.maxNesting, DirectReader.maxNesting + 1, 128, 129] {
            let deep = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            Self.expectSame(Array(deep.utf8))
        }
    }

    @Test func objectsWithManyKeysReadTheSame() {
        for count in [DirectReader.maxKeys - 1, DirectReader.maxKeys, DirectReader.maxKeys + 1, 200] {
            let members = (0..<count).map { #""k\#($0)":\#($0)"# }
            Self.expectSame(Array(("{" + members.joined(separator: ",") + "}").utf8))
            Self.expectSame(Array(("{" + (members + [#""k0":0"#]).joined(separator: ",") + "}").utf8))
        }
    }

    @Test func oversizedInputsReadTheSame() {
        let limits = JSONLimits(maxBytes: 16)
        Self.expectSame(Array(#"{"aps":{"alert":"over sixteen"}}"#.utf8), limits: limits)
        Self.expectSame(Array(#"{"a":"sixteen!!"}"#.utf8), limits: limits)
    }

    /// Every JSON the contract's scenarios send, whole and as each of its values.
    @Test func theScenariosJSONReadsTheSame() throws {
        let scenarios = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Scenarios")
        let files = try FileManager.default.contentsOfDirectory(atPath: scenarios.path).filter { $0.hasSuffix(".cxs") }
        var inputs = 0
        for file in files {
            let text = try String(contentsOf: scenarios.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") {
                guard let brace = line.firstIndex(of: "{") else { continue }
                let fields = Array(line[brace...].utf8)
                Self.expectSame(fields)
                inputs += 1
                if case .value(let value) = Self.read(fields, direct: false), let object = value.objectValue {
                    for (_, member) in object { Self.expectSame(member.compactBytes) }
                }
            }
        }
        #expect(inputs > 100)
    }

    /// Seeded random values written with random white space, and each one mutated (a byte
    /// changed, dropped, doubled, or the text cut short), so that most mutations are
    /// errors jansson must be left to name.
    @Test func randomValuesAndTheirMutationsReadTheSame() {
        var random = SeededRandom(seed: 0x5EED_0040)
        var valid = 0
        var readDirectly = 0
        for _ in 0..<3_000 {
            var text: [UInt8] = []
            Self.write(Self.randomValue(&random, depth: 0), into: &text, random: &random)
            if case .value = Self.read(text, direct: false) { valid += 1 }
            if text.withUnsafeBufferPointer({ DirectReader.read($0, maxDepth: 128) }) != nil { readDirectly += 1 }
            Self.expectSame(text)
            for _ in 0..<4 {
                var mutated = text
                guard !mutated.isEmpty else { break }
                let at = Int(random.next() % UInt64(mutated.count))
                switch random.next() % 4 {
                case 0: mutated[at] = Self.alphabet[Int(random.next() % UInt64(Self.alphabet.count))]
                case 1: mutated.remove(at: at)
                case 2: mutated.insert(mutated[at], at: at)
                default: mutated.removeLast(mutated.count - at)
                }
                Self.expectSame(mutated)
            }
        }
        #expect(valid > 2_000)
        // Escapes and control characters are jansson's; the rest is read directly.
        #expect(readDirectly > 1_000)
    }

    /// Bytes a mutation puts in: JSON's punctuation, letters, digits, escapes, control
    /// characters and bytes past ASCII.
    static let alphabet: [UInt8] =
        Array(#"{}[]:,"\-+.0123456789eEtrufalsn /u"#.utf8) + [0x00, 0x01, 0x1F, 0x7F, 0x80, 0xC3, 0xA9, 0xED, 0xFF]

    static func randomValue(_ random: inout SeededRandom, depth: Int) -> JSON {
        switch random.next() % (depth > 4 ? 5 : 7) {
        case 0: return .null
        case 1: return .bool(random.next() % 2 == 0)
        case 2:
            let numbers = ["0", "-0", "1", "-12", "3.25", "1e3", "-2.5E-7", "18446744073709551616", "1.0", "0.000"]
            return .number(JSONNumber(text: numbers[Int(random.next() % UInt64(numbers.count))])!)
        case 3, 4: return .string(randomString(&random))
        case 5:
            return .array((0..<Int(random.next() % 5)).map { _ in randomValue(&random, depth: depth + 1) })
        default:
            var object = JSONObject()
            for _ in 0..<Int(random.next() % 6) {
                object[randomString(&random)] = randomValue(&random, depth: depth + 1)
            }
            return .object(object)
        }
    }

    static func randomString(_ random: inout SeededRandom) -> String {
        let pieces = [
            "a", "aps", "alert", " ", "bench", "é", "😀", "\"", "\\", "\n", "\u{01}", "\u{7F}", "ключ", "0", "/",
        ]
        return (0..<Int(random.next() % 6)).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined()
    }

    /// Compact JSON with white space of every kind between tokens, now and then.
    static func write(_ value: JSON, into text: inout [UInt8], random: inout SeededRandom) {
        func space() {
            if random.next() % 4 == 0 { text.append([0x20, 0x0A, 0x0D, 0x09][Int(random.next() % 4)]) }
        }
        space()
        switch value {
        case .array(let elements):
            text.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { text.append(UInt8(ascii: ",")) }
                write(element, into: &text, random: &random)
            }
            space()
            text.append(UInt8(ascii: "]"))
        case .object(let object):
            text.append(UInt8(ascii: "{"))
            for (index, member) in object.enumerated() {
                if index > 0 { text.append(UInt8(ascii: ",")) }
                space()
                text.append(contentsOf: JSON.string(member.key).compactBytes)
                space()
                text.append(UInt8(ascii: ":"))
                write(member.value, into: &text, random: &random)
            }
            space()
            text.append(UInt8(ascii: "}"))
        default:
            text.append(contentsOf: value.compactBytes)
        }
        space()
    }
}

/// SplitMix64: the same sequence for the same seed on every machine.
struct SeededRandom {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
