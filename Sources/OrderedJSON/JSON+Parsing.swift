import CJansson
import CJanssonArena

/// Limits on what `JSON.parse` accepts.
public struct JSONLimits: Sendable, Equatable {
    /// The largest input, in bytes.
    public var maxBytes: Int
    /// The deepest nesting of arrays and objects. Every walk over a `JSON` value
    /// (conversion, comparison, hashing, writing, scenario matching) recurses once
    /// per level, so this bound is what keeps them all within a thread's stack.
    public var maxDepth: Int

    public init(maxBytes: Int, maxDepth: Int = JSONLimits.defaultMaxDepth) {
        self.maxBytes = maxBytes
        self.maxDepth = min(maxDepth, JSONLimits.janssonMaxDepth)
    }

    /// 128 levels: far past any real payload (a 4 KB push), and shallow enough that
    /// every walk over the value fits in a 256 KiB thread stack even in a debug build
    /// (the C ABI states that minimum; see Docs/JSON.md).
    public static let defaultMaxDepth = 128

    /// jansson's own compiled-in limit, which no caller can raise.
    public static let janssonMaxDepth = 2048

    /// 16 MiB: far above any push payload, low enough that a hostile input cannot
    /// make the parser allocate without bound.
    public static let `default` = JSONLimits(maxBytes: 16 << 20)
}

extension JSON {
    /// Parses one JSON value (any type at the root) from UTF-8 bytes.
    ///
    /// Numbers keep their exact text, of any size. Rejects, with the line and column:
    /// empty input, input over `limits.maxBytes`, nesting past `limits.maxDepth`,
    /// invalid UTF-8, truncated input, trailing garbage, and duplicate object keys
    /// (which would otherwise lose a value silently). `\u0000` is accepted in values.
    public static func parse(
        _ bytes: some Collection<UInt8>, limits: JSONLimits = .default
    ) throws(JSONError) -> JSON {
        if let result = bytes.withContiguousStorageIfAvailable({ buffer -> Result<JSON, JSONError> in
            do throws(JSONError) {
                return .success(try parseContiguous(buffer, limits: limits))
            } catch {
                return .failure(error)
            }
        }) {
            return try result.get()
        }
        let copy = Array(bytes)
        return try copy.withUnsafeBufferPointer { buffer throws(JSONError) -> JSON in
            try parseContiguous(buffer, limits: limits)
        }
    }

    /// Parses one JSON value from text; see `parse(_:limits:)`.
    public static func parse(text: String, limits: JSONLimits = .default) throws(JSONError) -> JSON {
        try parse(text.utf8, limits: limits)
    }

    /// jansson parses; the numbers' text comes from the input itself. jansson would
    /// turn every number into an int64 or a double (and refuse larger integers), so
    /// each valid number is handed to it as `0` padded with spaces (lines and columns
    /// stay where they were), and the tree is read back with the original lexemes in
    /// document order, which is jansson's order too (objects keep insertion order).
    /// String values that are printable ASCII with no escape (tokens, ids: most of a
    /// push's bytes) are handed over as `""`: jansson reads a string a byte at a time
    /// (white space too), and their text is their bytes. With strings left out the text
    /// jansson sees is shorter than the input, so when it finds an error the input itself
    /// is parsed again for the error's words and place. Keys, and strings with an escape,
    /// a control character or a byte past ASCII, go to jansson as they are, so every
    /// check and every error message is still its own.
    ///
    /// Most inputs never reach jansson: `DirectReader` reads them in one pass, and hands
    /// over only what it does not judge itself. `direct: false` is jansson's reading alone,
    /// the reference the tests compare the direct one with.
    static func parseContiguous(
        _ buffer: UnsafeBufferPointer<UInt8>, limits: JSONLimits, direct: Bool = true
    ) throws(JSONError) -> JSON {
        if buffer.count > limits.maxBytes {
            throw JSONError(
                kind: .tooLarge(bytes: buffer.count, limit: limits.maxBytes), line: 1, column: 1,
                reason: "the input is \(buffer.count) bytes; the limit is \(limits.maxBytes)")
        }
        if direct, let value = DirectReader.read(buffer, maxDepth: limits.maxDepth) { return value }
        if buffer.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            throw JSONError(kind: .empty, line: 1, column: 1, reason: "the input is empty")
        }
        let scan = try Lexemes.scan(buffer, maxDepth: limits.maxDepth)
        // Every tree below is read into Swift values and released before the return.
        let arena = cx_jansson_arena_open()
        defer { cx_jansson_arena_close(arena) }
        guard scan.allNumbersValid, !scan.numbers.isEmpty || scan.strings.contains(where: \.plain) else {
            let root = try load(buffer)
            defer { cx_jansson_release(root) }
            var reader = TreeReader(source: buffer, numbers: [], strings: [])
            return reader.read(root)
        }
        // The input with each number as `0` and each plain string value as `""`.
        var masked: [UInt8] = []
        masked.reserveCapacity(buffer.count)
        var copied = 0
        var nextNumber = 0
        var nextString = 0
        while nextNumber < scan.numbers.count || nextString < scan.strings.count {
            let number = nextNumber < scan.numbers.count ? scan.numbers[nextNumber] : nil
            let string = nextString < scan.strings.count ? scan.strings[nextString] : nil
            let (start, length, stand): (Int, Int, StaticString)
            if let number, string.map({ number.start < $0.start }) ?? true {
                (start, length, stand) = (number.start, number.length, "0")
                nextNumber += 1
            } else if let string {
                nextString += 1
                guard string.plain else { continue }
                (start, length, stand) = (string.start, string.length, "\"\"")
            } else {
                break
            }
            masked.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[copied..<start]))
            masked.append(contentsOf: UnsafeBufferPointer(start: stand.utf8Start, count: stand.utf8CodeUnitCount))
            copied = start + length
        }
        masked.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[copied...]))
        let loaded = masked.withUnsafeBufferPointer { masked -> Result<UnsafeMutablePointer<json_t>, JSONError> in
            do throws(JSONError) { return .success(try load(masked)) } catch { return .failure(error) }
        }
        let root: UnsafeMutablePointer<json_t>
        switch loaded {
        case .success(let loaded): root = loaded
        case .failure(let maskedError):
            // The input itself names the error as written, where it is.
            do throws(JSONError) { cx_jansson_release(try load(buffer)) } catch { throw error }
            throw maskedError
        }
        defer { cx_jansson_release(root) }
        var reader = TreeReader(source: buffer, numbers: scan.numbers, strings: scan.strings)
        let value = reader.read(root)
        guard reader.nextNumber == scan.numbers.count, reader.nextString == scan.strings.count else {
            throw JSONError(
                kind: .syntax, line: 1, column: 1, reason: "the numbers and strings could not be matched to the text")
        }
        return value
    }

    private static func load(_ buffer: UnsafeBufferPointer<UInt8>) throws(JSONError) -> UnsafeMutablePointer<json_t> {
        var error = json_error_t()
        let flags = Int(JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL)
        let root = buffer.withMemoryRebound(to: CChar.self) { chars in
            json_loadb(chars.baseAddress, chars.count, flags, &error)
        }
        guard let root else { throw JSONError(jansson: error) }
        return root
    }
}

/// One pass over the input: where each number and each string value is, and whether
/// nesting stays within the limit (checked before jansson or any recursion runs).
struct Lexemes {
    struct Number {
        let start: Int
        let length: Int
    }

    /// A string value (not a key), quotes included.
    struct StringValue {
        let start: Int
        let length: Int
        /// Printable ASCII with no escape, and long enough (`plainLength`) that leaving it
        /// out of jansson's text saves more than it costs: its text is its bytes between
        /// the quotes.
        let plain: Bool
    }

    /// The shortest string, quotes included, worth leaving out of jansson's text.
    static let plainLength = 4

    var numbers: [Number] = []
    var strings: [StringValue] = []
    /// False when something number-like is not a valid number; jansson then parses
    /// the text as it is and reports the error.
    var allNumbersValid = true

    static func scan(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) throws(JSONError) -> Lexemes {
        var result = Lexemes()
        // Room for a request line's strings and numbers from the start: growing from
        // empty reallocates each array three or four times.
        result.strings.reserveCapacity(min(64, bytes.count / 8))
        result.numbers.reserveCapacity(min(16, bytes.count / 32))
        var depth = 0
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                let start = index
                var plain = true
                index += 1
                while index < count {
                    // Eight bytes at a time while all are printable ASCII, neither quote
                    // nor backslash: most of a long string.
                    if index + 8 <= count,
                        Self.isPlain(UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self))
                    {
                        index += 8
                        continue
                    }
                    let inner = bytes[index]
                    if inner == UInt8(ascii: "\\") {
                        plain = false
                        index += 2
                    } else if inner == UInt8(ascii: "\"") {
                        break
                    } else {
                        plain = plain && inner >= 0x20 && inner < 0x7F
                        index += 1
                    }
                }
                index += 1
                // A key is followed by a colon; only values are counted (and masked).
                var next = index
                while next < count,
                    bytes[next] == 0x20 || bytes[next] == 0x0A || bytes[next] == 0x0D || bytes[next] == 0x09
                {
                    next += 1
                }
                if next >= count || bytes[next] != UInt8(ascii: ":") {
                    result.strings.append(
                        StringValue(
                            start: start, length: min(index, count) - start,
                            plain: plain && index <= count && index - start >= plainLength))
                }
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > maxDepth {
                    let (line, column) = position(of: index, in: bytes)
                    throw JSONError(
                        kind: .tooDeep, line: line, column: column,
                        reason: "nesting is deeper than \(maxDepth) levels")
                }
                index += 1
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
                index += 1
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                if let length = JSONNumber.numberLength(bytes, from: index) {
                    result.numbers.append(Number(start: index, length: length))
                    index += length
                } else {
                    result.allNumbersValid = false
                    index += 1
                }
            default:
                index += 1
            }
        }
        return result
    }

    /// Whether eight bytes are all printable ASCII (0x20 to 0x7E) other than `"` and `\\`.
    @inline(__always)
    static func isPlain(_ bits: UInt64) -> Bool { ByteWord(bits).isPlain }

    /// 1-based line and column (in bytes) of `offset`.
    static func position(of offset: Int, in bytes: UnsafeBufferPointer<UInt8>) -> (line: Int, column: Int) {
        var line = 1
        var lineStart = 0
        for index in 0..<offset where bytes[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        return (line, offset - lineStart + 1)
    }
}

/// Converts a jansson tree (borrowed: the caller keeps its reference), taking each
/// number's text from the source in document order.
struct TreeReader {
    let source: UnsafeBufferPointer<UInt8>
    let numbers: [Lexemes.Number]
    let strings: [Lexemes.StringValue]
    var nextNumber = 0
    var nextString = 0

    init(source: UnsafeBufferPointer<UInt8>, numbers: [Lexemes.Number], strings: [Lexemes.StringValue]) {
        self.source = source
        self.numbers = numbers
        self.strings = strings
    }

    mutating func read(_ node: UnsafeMutablePointer<json_t>) -> JSON {
        switch cx_json_type(node) {
        case JSON_OBJECT:
            var object = JSONObject()
            object.reserveCapacity(json_object_size(node))
            var iterator = json_object_iter(node)
            while let current = iterator {
                let key = String(
                    decoding: UnsafeRawBufferPointer(
                        start: json_object_iter_key(current), count: json_object_iter_key_len(current)),
                    as: UTF8.self)
                object.appendUnique(key, read(json_object_iter_value(current)))
                iterator = json_object_iter_next(node, current)
            }
            return .object(object)
        case JSON_ARRAY:
            let count = json_array_size(node)
            var elements: [JSON] = []
            elements.reserveCapacity(count)
            for index in 0..<count {
                elements.append(read(json_array_get(node, index)))
            }
            return .array(elements)
        case JSON_STRING:
            // A plain string value was handed over empty: its text is in the source.
            if nextString < strings.count {
                let string = strings[nextString]
                nextString += 1
                if string.plain {
                    return .string(
                        String(
                            decoding: UnsafeBufferPointer(
                                rebasing: source[string.start + 1..<string.start + string.length - 1]), as: UTF8.self))
                }
            } else if !strings.isEmpty {
                nextString += 1  // more strings than the scan saw: the caller refuses the input
            }
            return .string(
                String(
                    decoding: UnsafeRawBufferPointer(start: json_string_value(node), count: json_string_length(node)),
                    as: UTF8.self))
        case JSON_INTEGER, JSON_REAL:
            guard nextNumber < numbers.count else {
                // Unreachable when the scan saw the same text jansson did; the caller
                // checks the count and refuses the input.
                nextNumber += 1
                return .integer(Int64(json_integer_value(node)))
            }
            let number = numbers[nextNumber]
            nextNumber += 1
            let text = String(
                decoding: UnsafeBufferPointer(rebasing: source[number.start..<number.start + number.length]),
                as: UTF8.self)
            return .number(JSONNumber(validatedText: text))
        case JSON_TRUE:
            return .bool(true)
        case JSON_FALSE:
            return .bool(false)
        default:
            return .null
        }
    }
}

extension JSONError {
    init(jansson error: json_error_t) {
        var error = error
        let reason = String(cString: cx_json_error_text(&error))
        let kind: Kind
        switch json_error_code(rawValue: UInt32(cx_json_error_code(&error))) {
        case json_error_invalid_utf8: kind = .invalidUTF8
        case json_error_premature_end_of_input: kind = .truncated
        case json_error_end_of_input_expected: kind = .trailingGarbage
        case json_error_duplicate_key: kind = .duplicateKey
        case json_error_stack_overflow: kind = .tooDeep
        default: kind = reason.contains("maximum parsing depth") ? .tooDeep : .syntax
        }
        self.init(kind: kind, line: Int(error.line), column: Int(error.column), reason: reason)
    }
}
