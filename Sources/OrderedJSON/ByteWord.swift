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

    /// Some byte is one a JSON string escapes: below 0x20, `"` or `\`.
    @inlinable
    public var needsEscape: Bool {
        hasByte(below: 0x20) || contains(UInt8(ascii: "\"")) || contains(UInt8(ascii: "\\"))
    }
}
