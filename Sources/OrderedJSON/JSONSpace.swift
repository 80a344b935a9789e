/// JSON's insignificant whitespace (RFC 8259: space, tab, line feed, carriage return):
/// what the readers that walk a document's bytes skip, and what a blank line, body or
/// input is made of.
public enum JSONSpace {
    /// Whether `byte` is whitespace.
    @inlinable
    public static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// The index of the first byte at or after `index`, below `count`, that is not
    /// whitespace; `count` when there is none.
    @inlinable
    public static func skip(in base: UnsafePointer<UInt8>, count: Int, from index: Int) -> Int {
        var index = index
        while index < count {
            guard isSpace(base[index]) else { return index }
            index += 1
        }
        return index
    }
}
