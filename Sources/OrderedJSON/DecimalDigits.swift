/// A number's decimal digits written in place, for text that carries numbers among its
/// bytes (a log entry, an effect sentence, an id such as `t12` or FCM's message id): no
/// `String` is made of the number first.
public enum DecimalDigits {
    /// How many digits `value` takes (1 for 0).
    @inlinable
    public static func count(_ value: UInt64) -> Int {
        var rest = value
        var digits = 1
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        return digits
    }

    /// Writes `value`'s digits into `text`, the last one just before `end`; returns
    /// where the first one is.
    @inlinable
    @discardableResult
    public static func write(_ value: UInt64, into text: UnsafeMutableBufferPointer<UInt8>, endingAt end: Int) -> Int {
        var rest = value
        var at = end
        repeat {
            at -= 1
            text[at] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        } while rest > 0
        return at
    }

    /// `value` in decimal, as `String(value)` writes it, straight into its string:
    /// `String(value)` goes through `description`, and every integer made a JSON
    /// number (`JSONNumber(_:)`, `JSON.integer`) went that way.
    public static func text(_ value: Int64) -> String { string(after: nil, value) }

    /// `letter` then `number` in decimal (`t12`, `n3`): ids counted by the world, made
    /// on every push shown, written straight into a small string (an interpolation was
    /// a `description` and an append, some 350 instructions).
    public static func id(_ letter: Unicode.Scalar, _ number: Int) -> String { string(after: letter, Int64(number)) }

    /// Written on the stack and made a small string in place (`SmallASCII`): up to 15
    /// characters, which every id and most numbers are. `String(unsafeUninitializedCapacity:)`
    /// validated what it was given again, ~190 instructions an id.
    private static func string(after prefix: Unicode.Scalar?, _ value: Int64) -> String {
        let magnitude = value.magnitude
        let signAt = prefix == nil ? 0 : 1
        let length = signAt + (value < 0 ? 1 : 0) + count(magnitude)
        // A prefix, a sign and an Int64's 19 digits.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 21) { text in
            if let prefix { text[0] = UInt8(ascii: prefix) }
            if value < 0 { text[signAt] = UInt8(ascii: "-") }
            write(magnitude, into: text, endingAt: length)
            return SmallASCII.string(UnsafeBufferPointer(rebasing: text[..<length]))
        }
    }
}
