import OrderedJSON

/// A sentence written as UTF-8 into one buffer and made a `String` once. Every push's
/// effect is written from a dozen pieces, and `String`'s append cost some 400
/// instructions a piece (callgrind), twice what an append here costs.
struct Sentence {
    private var bytes: [UInt8] = []

    init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    /// Inlined where it is written: a piece is most often a literal, whose bytes are then
    /// appended at once, with no call to find them.
    @inline(__always)
    static func += (sentence: inout Sentence, text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ sentence.bytes.append(contentsOf: $0) }) == nil {
            sentence.bytes.append(contentsOf: text.utf8)
        }
    }

    /// Appends a whole number in decimal.
    static func += (sentence: inout Sentence, number: Int) {
        JSON.writeDecimal(Int64(number), to: &sentence.bytes)
    }

    var text: String { String(decoding: bytes, as: UTF8.self) }
}
