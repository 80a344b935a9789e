import CByteScan

/// Sixteen bytes tested at once with the machine's vector compares (`byte_scan.h`), where
/// `ByteWord` tests eight with arithmetic: a string's text is scanned and copied a block
/// at a time while it is long enough, and its last bytes a word at a time. Exact in which
/// byte it flags.
public enum ByteBlock {
    /// The bytes in a block.
    public static let size = 16

    /// The place (0 to 15) of the first of the sixteen bytes at `at` that a JSON string
    /// escapes (below 0x20, `"` or `\`), or 16 when none does.
    @inlinable @inline(__always)
    public static func firstEscapeOffset(at: UnsafePointer<UInt8>) -> Int {
        Int((cx_escape_mask16(at) | 0x1_0000).trailingZeroBitCount)
    }

    /// The sixteen bytes at `from` stored at `to` as they are, and the place of the first
    /// that a JSON string escapes, as `firstEscapeOffset(at:)`.
    @inlinable @inline(__always)
    public static func copy(from: UnsafePointer<UInt8>, to: UnsafeMutablePointer<UInt8>) -> Int {
        Int((cx_copy_escape_mask16(from, to) | 0x1_0000).trailingZeroBitCount)
    }

    /// The place (0 to 15) of the first of the sixteen bytes at `at` that is not plain
    /// (`ByteWord.isPlain`), or 16 when every one is.
    @inlinable @inline(__always)
    public static func firstNotPlainOffset(at: UnsafePointer<UInt8>) -> Int {
        Int((cx_not_plain_mask16(at) | 0x1_0000).trailingZeroBitCount)
    }
}
