/// A sentence written as UTF-8 into one buffer and made a `String` once. Every push's
/// effect is written from a dozen pieces, and `String`'s append cost some 400
/// instructions a piece (callgrind), twice what an append here costs.
struct Sentence {
    private var bytes: [UInt8] = []

    init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    static func += (sentence: inout Sentence, text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ sentence.bytes.append(contentsOf: $0) }) == nil {
            sentence.bytes.append(contentsOf: text.utf8)
        }
    }

    /// Appends a whole number in decimal.
    static func += (sentence: inout Sentence, number: Int) {
        if number < 0 { sentence.bytes.append(UInt8(ascii: "-")) }
        var magnitude = number.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for the 20 digits of any Int
        withUnsafeMutableBytes(of: &digits) { buffer in
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            sentence.bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }

    var text: String { String(decoding: bytes, as: UTF8.self) }
}
