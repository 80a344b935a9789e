/// One pass from bytes to values for the JSON nearly every input is: strings with no
/// escape, numbers, literals, objects with few keys. It answers nil as soon as it meets
/// anything else (an escape, a control character, invalid UTF-8, a duplicate key, a
/// syntax error, nesting past the limit, many keys in one object), and jansson then
/// reads the input and judges it, so every error and every unusual input is still
/// jansson's. When it answers, the value is the one jansson's reading gives:
/// `DirectReaderTests` compares the two over a corpus and random inputs.
///
/// It exists for speed: jansson builds a tree that is then copied into Swift values, and
/// a push's payload paid more for that than for anything else the world does with it
/// (Docs/Performance.md, "Instructions per push").
struct DirectReader {
    private let base: UnsafePointer<UInt8>
    private let count: Int
    private let maxDepth: Int
    private var index = 0

    /// Objects with more keys than this go to jansson, whose duplicate check is hashed;
    /// below it a linear check is cheaper.
    static let maxKeys = 32

    /// Inputs nested deeper than this go to jansson. The reader recurses once per level,
    /// and a C caller's thread may have a small stack; past this depth the parse checks the
    /// nesting in a loop (`Lexemes`) before anything recurses (`SmallStackTests`).
    static let maxNesting = 32

    private init(base: UnsafePointer<UInt8>, count: Int, maxDepth: Int) {
        self.base = base
        self.count = count
        self.maxDepth = maxDepth
    }

    /// The value `bytes` holds, or nil when jansson should read them.
    static func read(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) -> JSON? {
        guard let base = bytes.baseAddress else { return nil }
        var reader = DirectReader(base: base, count: bytes.count, maxDepth: min(maxDepth, maxNesting))
        guard let value = reader.value(depth: 0) else { return nil }
        reader.skipSpace()
        // Not a ternary: `nil` there would be read as JSON's own null literal.
        guard reader.index == reader.count else { return nil }
        return value
    }

    private mutating func skipSpace() { index = JSONSpace.skip(in: base, count: count, from: index) }

    private mutating func value(depth: Int) -> JSON? {
        skipSpace()
        guard index < count else { return nil }
        switch base[index] {
        case UInt8(ascii: "{"): return object(depth: depth + 1)
        case UInt8(ascii: "["): return array(depth: depth + 1)
        case UInt8(ascii: "\""): return string().map(JSON.string)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let bytes = UnsafeBufferPointer(start: base, count: count)
            guard let length = JSONNumber.numberLength(bytes, from: index) else { return nil }
            let text = SmallASCII.string(UnsafeBufferPointer(start: base + index, count: length))
            index += length
            return .number(JSONNumber(validatedText: text))
        default: return nil
        }
    }

    private mutating func literal(_ word: StaticString, _ value: JSON) -> JSON? {
        let length = word.utf8CodeUnitCount
        guard count - index >= length else { return nil }
        for offset in 0..<length where base[index + offset] != word.utf8Start[offset] { return nil }
        index += length
        return value
    }

    private mutating func object(depth: Int) -> JSON? {
        guard depth <= maxDepth else { return nil }
        index += 1
        var object = JSONObject()
        skipSpace()
        if index < count && base[index] == UInt8(ascii: "}") {
            index += 1
            return .object(object)
        }
        object.reserveCapacity(4)
        while true {
            skipSpace()
            guard index < count, base[index] == UInt8(ascii: "\""), let key = string(),
                object.count < Self.maxKeys, !object.contains(key)
            else { return nil }
            skipSpace()
            guard index < count, base[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            guard let member = value(depth: depth) else { return nil }
            object.appendUnique(key, member)
            guard let closed = separator(closing: UInt8(ascii: "}")) else { return nil }
            if closed { return .object(object) }
        }
    }

    private mutating func array(depth: Int) -> JSON? {
        guard depth <= maxDepth else { return nil }
        index += 1
        var elements: [JSON] = []
        skipSpace()
        if index < count && base[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            guard let element = value(depth: depth) else { return nil }
            elements.append(element)
            guard let closed = separator(closing: UInt8(ascii: "]")) else { return nil }
            if closed { return .array(elements) }
        }
    }

    /// After a member or an element: true past `closing`, false past a comma, nil at
    /// anything else.
    private mutating func separator(closing: UInt8) -> Bool? {
        skipSpace()
        guard index < count else { return nil }
        let byte = base[index]
        guard byte == UInt8(ascii: ",") || byte == closing else { return nil }
        index += 1
        return byte == closing
    }

    /// The string whose opening quote is at `index`, when it has no escape and no control
    /// character and is valid UTF-8; `index` then stands past its closing quote.
    private mutating func string() -> String? {
        let start = index + 1
        var at = start
        var ascii = true
        while true {
            // Sixteen bytes, or eight, at a time while all are printable ASCII, neither
            // quote nor backslash, then straight to the first that is not.
            if count - at >= ByteBlock.size {
                let plain = ByteBlock.firstNotPlainOffset(at: base + at)
                at += plain
                if plain == ByteBlock.size { continue }
            } else if count - at >= 8 {
                let plain = ByteWord(at: base + at).firstNotPlainOffset
                at += plain
                if plain == 8 { continue }
            }
            guard at < count else { return nil }
            let byte = base[at]
            if byte == UInt8(ascii: "\"") { break }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
            ascii = ascii && byte < 0x80
            at += 1
        }
        let bytes = UnsafeBufferPointer(start: base + start, count: at - start)
        index = at + 1
        if ascii { return SmallASCII.string(bytes) }
        return String(validating: bytes, as: UTF8.self)
    }
}
