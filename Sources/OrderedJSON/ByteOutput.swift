import Foundation

/// Bytes written piece after piece into room made ahead (doubled when it runs out), each
/// piece a bound check and a copy. `[UInt8].append(contentsOf:)` costs about a hundred
/// instructions a call (callgrind), more than the bytes of most pieces, and a log entry a
/// stream shows is written from some sixty of them.
///
/// The room is memory from `malloc`, so that a writer in C can be handed the bytes as
/// they are (`takeMemory`), with room left before them for what it puts in front (an
/// HTTP/1.1 chunk's size line): a stream's events reach the socket with no copy. Copies
/// of an output share the memory until one of them writes.
public struct ByteOutput {
    /// The block the bytes are in. Its fields are written only by an output that holds it
    /// alone (`isKnownUniquelyReferenced`), so no access overlaps another: unchecked, as
    /// checking each one at run time cost ~2k instructions a push (`swift_beginAccess`).
    @usableFromInline final class Storage {
        /// Where the bytes start, `headRoom` bytes into the block; nil before any room is made.
        @exclusivity(unchecked) @usableFromInline var bytes: UnsafeMutablePointer<UInt8>?
        /// How many bytes fit from `bytes` on.
        @exclusivity(unchecked) @usableFromInline var capacity = 0
        @usableFromInline let headRoom: Int

        init(headRoom: Int) { self.headRoom = headRoom }

        /// Room for `capacity` bytes from `bytes` on, the bytes there kept.
        func resize(to capacity: Int) {
            guard let block = realloc(bytes.map { UnsafeMutableRawPointer($0 - headRoom) }, headRoom + capacity) else {
                fatalError("out of memory: \(headRoom + capacity) bytes for a byte output")
            }
            bytes = block.assumingMemoryBound(to: UInt8.self) + headRoom
            self.capacity = capacity
        }

        deinit { free(bytes.map { UnsafeMutableRawPointer($0 - headRoom) }) }
    }

    @usableFromInline var storage: Storage
    @usableFromInline var written = 0
    /// How many bytes are written.
    public var count: Int { written }

    /// Room for `capacity` bytes before the first growth (none is made until a write
    /// when it is 0), and `headRoom` bytes before them that are never written here:
    /// `takeMemory` hands them over with the bytes.
    public init(capacity: Int = 0, headRoom: Int = 0) {
        precondition(headRoom >= 0, "a byte output's head room is a count of bytes")
        guard capacity > 0 || headRoom > 0 else {
            storage = Self.noRoom
            return
        }
        storage = Storage(headRoom: headRoom)
        if capacity > 0 { storage.resize(to: capacity) }
    }

    /// The storage of every output made with no room: never written, since it is never
    /// held by one output alone (an output's first write makes its own). An output made
    /// only to be swapped with another costs no allocation.
    nonisolated(unsafe) private static let noRoom = Storage(headRoom: 0)

    /// Lets `write` write at most `most` bytes at the end, from the pointer it is given to
    /// the one it returns.
    @inlinable @inline(__always)
    public mutating func write(atMost most: Int, _ write: (UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8>)
    {
        if storage.capacity - written < most || !isKnownUniquelyReferenced(&storage) {
            grow(toHold: written + most)
        }
        let base = storage.bytes.unsafelyUnwrapped
        written = write(base + written) - base
    }

    /// Room for `size` bytes in memory of this output's own. Room is not zeroed: bytes are
    /// read only once written (`count` bounds every read).
    @usableFromInline @inline(never)
    mutating func grow(toHold size: Int) {
        let room = Swift.max(size, 2 * storage.capacity, 64)
        if isKnownUniquelyReferenced(&storage) { return storage.resize(to: room) }
        let own = Storage(headRoom: storage.headRoom)
        own.resize(to: room)
        if written > 0, let bytes = storage.bytes { own.bytes.unsafelyUnwrapped.update(from: bytes, count: written) }
        storage = own
    }

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
        let room = storage.capacity - written >= most ? most : JSON.serializedSize(of: bytes)
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
        body(UnsafeBufferPointer(start: storage.bytes, count: written))
    }

    /// The bytes written, as an array of their own.
    public var bytes: [UInt8] { withBytes { Array($0) } }

    /// The memory the bytes are in, handed over with no copy: `block` is from `malloc`
    /// and the caller frees it; the bytes are the `count` from `headRoom` on, and the
    /// block's room ends `size` bytes from its start. Nil when nothing is written. The
    /// output is empty after, its head room kept.
    public mutating func takeMemory() -> (block: UnsafeMutableRawPointer, headRoom: Int, count: Int, size: Int)? {
        guard written > 0 else { return nil }
        if !isKnownUniquelyReferenced(&storage) { grow(toHold: written) }
        let (bytes, headRoom, count, size) = (
            storage.bytes.unsafelyUnwrapped, storage.headRoom, written, storage.headRoom + storage.capacity
        )
        storage.bytes = nil
        storage.capacity = 0
        written = 0
        return (UnsafeMutableRawPointer(bytes - headRoom), headRoom, count, size)
    }
}
