import OrderedJSON

/// A sentence written as UTF-8 into one buffer and made a `String` once. Every push's
/// effect is written from a dozen pieces: `String`'s append cost some 400 instructions a
/// piece (callgrind) and `[UInt8]`'s about 90, where a sentence checks its room and
/// copies. The room is on the stack (`Sentence.text(_:)`) and moves to the heap only for
/// a sentence longer than it: a heap buffer made for every push's effect cost ~400.
struct Sentence {
    private let room: UnsafeMutableBufferPointer<UInt8>
    private var count = 0
    /// The sentence once it outgrew `room`; everything is written here from then on.
    private var spilled: ByteOutput?

    /// Stack room for most sentences: an effect is some 100–200 bytes.
    static let stackRoom = 512

    private init(room: UnsafeMutableBufferPointer<UInt8>) { self.room = room }

    /// The text `write` writes, in `stackRoom` bytes of the stack while it fits. The
    /// sentence it is given lives only for the call. Inlined: as a call of its own, made
    /// for each closure, it took a copy of what the closure captured (a push's outcome,
    /// ~300 instructions).
    @inline(__always)
    static func text(stackRoom: Int = stackRoom, _ write: (inout Sentence) -> Void) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: stackRoom) { room in
            var sentence = Sentence(room: room)
            write(&sentence)
            if let spilled = sentence.spilled {
                return spilled.withBytes { String(decoding: $0, as: UTF8.self) }
            }
            return String(decoding: UnsafeBufferPointer(rebasing: room[..<sentence.count]), as: UTF8.self)
        }
    }

    /// Inlined where it is written: a piece is most often a literal, whose bytes are then
    /// appended at once, with no call to find them.
    @inline(__always)
    static func += (sentence: inout Sentence, text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ sentence.append($0) }) == nil {
            var text = text
            text.withUTF8 { sentence.append($0) }
        }
    }

    /// Appends a whole number in decimal.
    static func += (sentence: inout Sentence, number: Int) {
        sentence.write(atMost: JSON.decimalBytes) { JSON.writeDecimal(Int64(number), into: $0) }
    }

    @inline(__always)
    private mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        write(atMost: bytes.count) { at in
            guard let from = bytes.baseAddress else { return at }
            at.update(from: from, count: bytes.count)
            return at + bytes.count
        }
    }

    /// Lets `write` write at most `most` bytes at the end, from the pointer it is given to
    /// the one it returns, as `ByteOutput.write(atMost:_:)` does.
    @inline(__always)
    private mutating func write(
        atMost most: Int, _ write: (UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8>
    ) {
        if spilled == nil, room.count - count >= most, let base = room.baseAddress {
            count = write(base + count) - base
            return
        }
        spill(atMost: most, write)
    }

    @inline(never)
    private mutating func spill(
        atMost most: Int, _ write: (UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8>
    ) {
        if spilled == nil {
            var output = ByteOutput(capacity: 2 * Swift.max(room.count, most))
            output.append(UnsafeBufferPointer(rebasing: room[..<count]))
            spilled = output
        }
        spilled?.write(atMost: most, write)
    }
}
