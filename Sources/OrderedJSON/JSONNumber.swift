/// A JSON number kept as its exact text, so that what comes in goes out byte for
/// byte: `1.50` stays `1.50`, `1E2` stays `1E2`, `-0` stays `-0`, and integers of any
/// size (past 64 bits too) keep every digit. The push contract forbids changing "a
/// number's digits"; a binary double cannot promise that.
///
/// Two numbers are equal when their texts are equal (`1.0` and `1` differ), which is
/// what a byte-exact relay needs. Ask `int64Value` or `doubleValue` for arithmetic.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The number's text, always valid under JSON's number grammar.
    public let text: String

    /// The number whose text is `text`; nil unless `text` is a JSON number
    /// (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`).
    public init?(text: String) {
        var text = text
        let valid = text.withUTF8 { JSONNumber.isValid($0) }
        guard valid else { return nil }
        self.text = text
    }

    init(validatedText text: String) {
        self.text = text
    }

    public init(_ value: Int64) {
        text = DecimalDigits.text(value)
    }

    /// The shortest text that reads back as `value`. JSON has no NaN or infinity;
    /// they become `0`, which callers are expected never to produce.
    public init(_ value: Double) {
        guard value.isFinite else {
            text = "0"
            return
        }
        // Swift spells the exponent `1e+300`, `1e-05`: valid JSON.
        text = value.description
    }

    public var description: String { text }

    /// True when the text has no fraction and no exponent.
    public var isInteger: Bool {
        !text.utf8.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
    }

    /// The value when the text is an integer that fits in 64 bits.
    public var int64Value: Int64? {
        isInteger ? Int64(text) : nil
    }

    /// The nearest double (infinite when the magnitude is past the double range).
    public var doubleValue: Double {
        Double(text) ?? (text.hasPrefix("-") ? -.infinity : .infinity)
    }

    /// Whether `bytes` is exactly one JSON number.
    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        numberLength(bytes, from: 0) == bytes.count && !bytes.isEmpty
    }

    /// The length of the JSON number that starts at `start`, or nil when the bytes
    /// there do not begin a valid number. Stops at the first byte that cannot continue it.
    static func numberLength(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var index = start
        let end = bytes.count
        func isDigit(_ at: Int) -> Bool { at < end && bytes[at] >= 0x30 && bytes[at] <= 0x39 }
        if index < end && bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard isDigit(index) else { return nil }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while isDigit(index) { index += 1 }
        }
        if index < end && bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard isDigit(index) else { return nil }
            while isDigit(index) { index += 1 }
        }
        if index < end && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            index += 1
            if index < end && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) { index += 1 }
            guard isDigit(index) else { return nil }
            while isDigit(index) { index += 1 }
        }
        return index - start
    }
}
