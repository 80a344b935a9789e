/// Strings of at most 15 ASCII bytes, made straight in the standard library's small-string
/// form: the bytes in the string's two words, and in the last byte its count and the flags
/// for small, ASCII and immortal (0xE0). `String(decoding:as:)` makes the same bits through
/// a call that validates the bytes again, some 160–330 instructions a string, which the
/// parser paid for every key, short value and number it read.
///
/// The form is the standard library's, not a public promise, so it is checked once per
/// process against strings the library made itself (`layoutHolds`); where it does not
/// hold, every string is made through `String(decoding:as:)` (`SmallASCIITests`).
public enum SmallASCII {
    /// The most bytes a small string holds on a 64-bit platform.
    public static let capacity = 15

    /// Whether this process's standard library lays small ASCII strings out as `string`
    /// writes them: checked for every count up to `capacity`.
    public static let layoutHolds: Bool = {
        guard MemoryLayout<String>.size == 16, MemoryLayout<(UInt64, UInt64)>.size == 16 else { return false }
        let sample = Array("0123456789abcdef".utf8)
        return sample.withUnsafeBufferPointer { bytes in
            (0...capacity).allSatisfy { count in
                let made = String(decoding: UnsafeBufferPointer(rebasing: bytes[..<count]), as: UTF8.self)
                guard let words = asciiWords(bytes.baseAddress!, count: count) else { return false }
                return unsafeBitCast(made, to: (UInt64, UInt64).self) == words
            }
        }
    }()

    /// The string `bytes` hold as UTF-8: made in place when they are at most `capacity`
    /// ASCII bytes, otherwise decoded as `String(decoding:as:)` does (invalid bytes repaired).
    @inlinable
    public static func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        if bytes.count <= capacity, let base = bytes.baseAddress, layoutHolds,
            let words = asciiWords(base, count: bytes.count)
        {
            return unsafeBitCast(words, to: String.self)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The two words of a small string of the `count` (at most 15) bytes at `start`, or nil
    /// when one is past ASCII. Reads only those bytes: two words that overlap when the
    /// count is not a multiple of their size, the same bytes landing in the same places.
    @usableFromInline
    static func asciiWords(_ start: UnsafePointer<UInt8>, count: Int) -> (UInt64, UInt64)? {
        let raw = UnsafeRawPointer(start)
        var low: UInt64 = 0
        var high: UInt64 = 0
        // Little-endian: a string's first byte is its first word's lowest.
        if count >= 8 {
            low = raw.loadUnaligned(as: UInt64.self)
            if count > 8 {
                high = raw.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self) &>> UInt64(8 &* (16 &- count))
            }
        } else if count >= 4 {
            let first = UInt64(raw.loadUnaligned(as: UInt32.self))
            let last = UInt64(raw.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self))
            low = first | last &<< UInt64(8 &* (count &- 4))
        } else {
            for offset in 0..<count { low |= UInt64(start[offset]) &<< UInt64(8 &* offset) }
        }
        guard (low | high) & 0x8080_8080_8080_8080 == 0 else { return nil }
        return (low, high | (0xE0 | UInt64(count)) &<< 56)
    }
}
