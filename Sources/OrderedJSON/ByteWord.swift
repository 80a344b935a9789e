/// Eight bytes read as one word, for the tests the parser's pre-pass and the writer ask of
/// every string eight bytes at a time. Each is exact as a yes-or-no answer for the whole
/// word ("some byte is …"), though not in which byte it flags, which is all they ask.
/// Public for the services' own byte checks (a token's characters), inlined where used.
public struct ByteWord {
    public let bits: UInt64

    @inlinable public init(_ bits: UInt64) { self.bits = bits }

    /// The word at `at`, wherever it is aligned.
    @inlinable public init(at: UnsafePointer<UInt8>) { bits = UnsafeRawPointer(at).loadUnaligned(as: UInt64.self) }

    @usableFromInline static let ones: UInt64 = 0x0101_0101_0101_0101
    @usableFromInline static let highs: UInt64 = 0x8080_8080_8080_8080

    /// Some byte is `byte`.
    @inlinable
    public func contains(_ byte: UInt8) -> Bool {
        let value = bits ^ (Self.ones &* UInt64(byte))
        return (value &- Self.ones) & ~value & Self.highs != 0
    }

    /// Some byte is below `limit` (at most 0x80).
    @inlinable
    public func hasByte(below limit: UInt8) -> Bool {
        (bits &- Self.ones &* UInt64(limit)) & ~bits & Self.highs != 0
    }

    /// Some byte is 0x80 or above (past ASCII).
    @inlinable
    public var hasHighByte: Bool { bits & Self.highs != 0 }

    /// Whether `flagged` holds of no word of `bytes`, read eight bytes at a time; the tail
    /// is read as one word padded with spaces, so `flagged` must not flag a space.
    @inlinable
    public static func none(in bytes: UnsafeBufferPointer<UInt8>, _ flagged: (ByteWord) -> Bool) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var index = 0
        while bytes.count - index >= 8 {
            if flagged(ByteWord(at: base + index)) { return false }
            index += 8
        }
        var tail: UInt64 = 0x2020_2020_2020_2020
        withUnsafeMutableBytes(of: &tail) {
            $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[index...]))
        }
        return !flagged(ByteWord(tail))
    }

    /// Some byte is one a JSON string escapes: below 0x20, `"` or `\`.
    /// The three tests' flags are joined before the one branch: asked for every word of
    /// every string written or parsed, three branches cost half as much again.
    @inlinable
    public var needsEscape: Bool { escapeFlags != 0 }

    /// The place (0 to 7, in memory order) of the first byte a JSON string escapes, or 8
    /// when none does. Exact, though the flags are not past the first: a borrow runs
    /// only toward higher bytes, which a little-endian load (x86-64, arm64) puts later.
    @inlinable
    public var firstEscapeOffset: Int { escapeFlags.trailingZeroBitCount >> 3 }

    /// The top bit of every byte below 0x20, `"` or `\`, and maybe of bytes after one.
    @inlinable
    var escapeFlags: UInt64 {
        let quotes = bits ^ (Self.ones &* UInt64(UInt8(ascii: "\"")))
        let backslashes = bits ^ (Self.ones &* UInt64(UInt8(ascii: "\\")))
        let below = (bits &- Self.ones &* 0x20) & ~bits
        let quote = (quotes &- Self.ones) & ~quotes
        let backslash = (backslashes &- Self.ones) & ~backslashes
        return (below | quote | backslash) & Self.highs
    }

    /// Every byte is printable ASCII (0x20 to 0x7E) other than `"` and `\`: a string's text
    /// that is its bytes, read eight at a time by the parsers.
    @inlinable
    public var isPlain: Bool { notPlainFlags == 0 }

    /// The place (0 to 7, in memory order) of the first byte that is not plain (`isPlain`),
    /// or 8 when every one is: a parser moves straight to a string's closing quote, where
    /// it stepped a byte at a time through the word that held it. Exact as
    /// `firstEscapeOffset` is.
    @inlinable
    public var firstNotPlainOffset: Int { notPlainFlags.trailingZeroBitCount >> 3 }

    /// The top bit of every byte that is not plain, and maybe of bytes after one. Each
    /// test's lowest flag is exact, so the lowest of them all is.
    @inlinable
    var notPlainFlags: UInt64 {
        let deletes = bits ^ (Self.ones &* 0x7F)
        return escapeFlags | (bits & Self.highs) | ((deletes &- Self.ones) & ~deletes & Self.highs)
    }
}

extension ByteWord {
    /// The index of the quote that closes the string whose text starts at `start`, when
    /// every byte before it is plain (`isPlain`): a string that is its bytes. Nil at any
    /// other byte (an escape, a control character, one past ASCII) or when `count` comes
    /// first. Sixteen bytes at a time while sixteen are left, then eight.
    @inlinable
    public static func plainStringEnd(in base: UnsafePointer<UInt8>, count: Int, from start: Int) -> Int? {
        // Each scan flags exactly the first byte that is not plain: the string ends there
        // when it is the quote, and is not plain when it is any other.
        var at = start
        while count - at >= ByteBlock.size {
            let plain = ByteBlock.firstNotPlainOffset(at: base + at)
            at += plain
            if plain < ByteBlock.size { return base[at] == UInt8(ascii: "\"") ? at : nil }
        }
        while count - at >= 8 {
            let plain = ByteWord(at: base + at).firstNotPlainOffset
            at += plain
            if plain < 8 { return base[at] == UInt8(ascii: "\"") ? at : nil }
        }
        while at < count {
            let byte = base[at]
            if byte == UInt8(ascii: "\"") { return at }
            guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") else { return nil }
            at += 1
        }
        return nil
    }
}
