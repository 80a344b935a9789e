import OrderedJSON

/// A sentence written as UTF-8 into one buffer and made a `String` once. Every push's
/// effect is written from a dozen pieces: `String`'s append cost some 400 instructions a
/// piece (callgrind) and `[UInt8]`'s about 90, where a `ByteOutput` checks its room and
/// copies.
struct Sentence {
    private var bytes: ByteOutput

    init(capacity: Int = 256) { bytes = ByteOutput(capacity: capacity) }

    /// Inlined where it is written: a piece is most often a literal, whose bytes are then
    /// appended at once, with no call to find them.
    @inline(__always)
    static func += (sentence: inout Sentence, text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ sentence.bytes.append($0) }) == nil {
            sentence.bytes.append(utf8Of: text)
        }
    }

    /// Appends a whole number in decimal.
    static func += (sentence: inout Sentence, number: Int) {
        sentence.bytes.appendDecimal(Int64(number))
    }

    var text: String { bytes.withBytes { String(decoding: $0, as: UTF8.self) } }
}
