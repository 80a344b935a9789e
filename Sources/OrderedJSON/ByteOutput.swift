/// Bytes written piece after piece into room made ahead (doubled when it runs out), each
/// piece a bound check and a copy. `[UInt8].append(contentsOf:)` costs about a hundred
/// instructions a call (callgrind), more than the bytes of most pieces, and a log entry a
/// stream shows is written from some sixty of them.
public struct ByteOutput {
    /// The bytes written, then the room: bytes past `count` are not part of the output.
    @usableFromInline var storage: [UInt8]
    @usableFromInline var written = 0
    /// How many bytes are written.
    public var count: Int { written }

    /// Room for `capacity` bytes before the first growth; none is made until a write
    /// when it is 0.
    public init(capacity: Int = 0) {
        storage = []
        if capacity > 0 { grow(toHold: capacity) }
    }

    /// Lets `write` write at most `most` bytes at the end, from the pointer it is given to
    /// the one it returns.
    @inlinable @inline(__always)
    public mutating func write(atMost most: Int, _ write: (UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8>)
    {
        if storage.count - written < most { grow(toHold: written + most) }
        let start = written
        written = storage.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress.unsafelyUnwrapped
            return write(base + start) - base
        }
    }

    /// Large room is not zeroed: bytes are read only once written (`count` bounds every
    /// read), and zeroing a stream's batch room up front cost more than rendering into it.
    /// Small room is, copied from zeroes kept for it: an array made uninitialized looks
    /// its storage type up generically (~360 instructions, callgrind), where reserving
    /// and copying in is specialized (~200 for both).
    @usableFromInline @inline(never)
    mutating func grow(toHold size: Int) {
        let room = Swift.max(size, 2 * storage.count, 64)
        guard room > Self.zeroes.count else {
            var grown: [UInt8] = []
            grown.reserveCapacity(room)
            storage.withUnsafeBufferPointer { grown.append(contentsOf: UnsafeBufferPointer(rebasing: $0[..<written])) }
            grown.append(contentsOf: UnsafeBufferPointer(rebasing: Self.zeroes[..<(room - written)]))
            storage = grown
            return
        }
        storage = [UInt8](unsafeUninitializedCapacity: room) { buffer, initialized in
            storage.withUnsafeBufferPointer { written in
                guard let from = written.baseAddress, let to = buffer.baseAddress else { return }
                to.update(from: from, count: self.written)
            }
            initialized = room
        }
    }

    /// The zeroes small room is made of; never written.
    nonisolated(unsafe) private static let zeroes: UnsafeBufferPointer<UInt8> = {
        let zeroes = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 4_096)
        zeroes.initialize(repeating: 0)
        return UnsafeBufferPointer(zeroes)
    }()

    @inlinable @inline(__always)
    public mutating func append(_ byte: UInt8) {
        write(atMost: 1) { at in
            at.pointee = byte
            return at + 1
        }
    }

    @inlinable @inline(__always)
    public mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        write(atMost: bytes.count) { at in
            guard let base = bytes.baseAddress else { return at }
            // A separator or a key's quotes byte by byte: a call to `memcpy` costs more.
            if bytes.count <= 8 {
                for index in 0..<bytes.count { at[index] = base[index] }
            } else {
                at.update(from: base, count: bytes.count)
            }
            return at + bytes.count
        }
    }

    /// A literal's bytes, found with no call.
    @inlinable @inline(__always)
    public mutating func append(_ literal: StaticString) {
        append(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Text's UTF-8, unquoted.
    public mutating func append(utf8Of text: String) {
        JSON.withBytes(of: text) { append($0) }
    }

    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    /// Text given as its UTF-8 bytes (valid UTF-8) as a quoted JSON string, escaped in
    /// one pass into room for the most it can take (every byte `\u00XX`).
    public mutating func appendJSONString(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        // Room for the most only when it is there already; else for exactly what it takes,
        // measured first, so that a line sized for its text does not grow for its worst case.
        let most = JSON.worstCaseSize(ofStringBytes: bytes.count)
        let room = storage.count - written >= most ? most : JSON.serializedSize(of: bytes)
        write(atMost: room) { JSON.writeString(utf8: bytes, into: $0) }
    }

    /// `text` as a quoted JSON string.
    public mutating func appendJSONString(_ text: String) {
        JSON.withBytes(of: text) { appendJSONString(utf8: $0) }
    }

    /// `value` in decimal.
    public mutating func appendDecimal(_ value: Int64) {
        write(atMost: JSON.decimalBytes) { JSON.writeDecimal(value, into: $0) }
    }

    /// Forgets the bytes written past the first `count`.
    public mutating func truncate(to count: Int) {
        precondition(count >= 0 && count <= self.count, "a byte output can only be cut to a count it has written")
        written = count
    }

    /// The bytes written.
    public func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        storage.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[..<count])) }
    }

    /// The bytes written, as an array of their own.
    public var bytes: [UInt8] { Array(storage[..<count]) }

    /// The bytes written, as an array, with no copy made; the output is empty after.
    public mutating func takeBytes() -> [UInt8] {
        storage.removeSubrange(count...)
        let taken = storage
        storage = []
        written = 0
        return taken
    }
}
