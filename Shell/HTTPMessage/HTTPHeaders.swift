import Foundation

/// A request's header fields as the transport read them, in the order sent: every name
/// and value in one allocation, read by name without making a `String` of each. A
/// `String` is made only of what a service reads: making two of every field on the
/// door's thread (some sixteen a push, each a validation and most an allocation) was
/// about 4,000 instructions of every request, for fields no service reads.
///
/// Names compare byte for byte: the transport hands them lowercase, as HTTP/2 requires
/// and its HTTP/1.1 parser makes them. Text that is not UTF-8 reads with U+FFFD in its
/// place, as `String(decoding:as:)` has it.
///
/// Sendable though its storage is a `ManagedBuffer`: that is written once, as it is
/// made, and only read after.
public struct HTTPHeaders: @unchecked Sendable, RandomAccessCollection {
    public typealias Element = (name: String, value: String)

    @usableFromInline let storage: Storage
    /// The field count, kept here rather than in the buffer's header: that is a class's
    /// stored property, and each read of it was checked for exclusive access at run time.
    public let endIndex: Int

    /// `count` fields, the field at each position given by `field`. Fields that lie one
    /// after another in one block, each name and value followed by one byte (a NUL, as the
    /// front door's transport keeps them), are copied in one piece; others one by one.
    /// Inlinable, so that `field` is inlined where it is given: called through the
    /// closure, each field cost ~65 instructions on the door's thread.
    @inlinable
    public init(count: Int, field: (Int) -> (name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)) {
        endIndex = count
        storage = withUnsafeTemporaryAllocation(of: (name: Int, value: Int).self, capacity: count) { lengths in
            // One read of each field: its lengths, and whether it lies where the block
            // laid out so far ends. Copied a field at a time, each read twice, the fields
            // were ~1.6k instructions of every request on the door's thread.
            var byteCount = 0
            var block = count > 0 ? field(0).name.baseAddress : nil
            for index in 0..<count {
                let (name, value) = field(index)
                if let start = block,
                    name.baseAddress != start + byteCount
                        || value.baseAddress != start + byteCount + name.count + 1
                {
                    block = nil
                }
                lengths[index] = (name.count, value.count)
                byteCount += name.count + value.count + 2
            }
            return Storage.make(count: count, byteCount: byteCount) { fields, bytes in
                var offset = 0
                for index in 0..<count {
                    fields[index] = Field(
                        start: offset, nameCount: lengths[index].name, valueCount: lengths[index].value)
                    offset += lengths[index].name + lengths[index].value + 2
                }
                if let block {
                    // The last byte is past the last value: not read, written.
                    UnsafeMutableRawPointer(bytes).copyMemory(from: block, byteCount: byteCount - 1)
                    bytes[byteCount - 1] = 0
                    return
                }
                for index in 0..<count {
                    let (name, value) = field(index)
                    precondition(
                        name.count == lengths[index].name && value.count == lengths[index].value,
                        "a field changed between its two reads")
                    Self.copy(name, value, to: bytes + fields[index].start)
                }
            }
        }
    }

    /// Writes a field as the storage lays it out: its name, a NUL, its value, a NUL.
    @usableFromInline
    static func copy(
        _ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, to at: UnsafeMutablePointer<UInt8>
    ) {
        if !name.isEmpty { UnsafeMutableRawPointer(at).copyMemory(from: name.baseAddress!, byteCount: name.count) }
        at[name.count] = 0
        if !value.isEmpty {
            UnsafeMutableRawPointer(at + name.count + 1).copyMemory(from: value.baseAddress!, byteCount: value.count)
        }
        at[name.count + 1 + value.count] = 0
    }

    public init(_ pairs: [(name: String, value: String)]) {
        let byteCount = pairs.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 2 }
        endIndex = pairs.count
        storage = Storage.make(count: pairs.count, byteCount: byteCount) { fields, bytes in
            var offset = 0
            for (index, pair) in pairs.enumerated() {
                fields[index] = Field(start: offset, nameCount: pair.name.utf8.count, valueCount: pair.value.utf8.count)
                for text in [pair.name, pair.value] {
                    for byte in text.utf8 {
                        bytes[offset] = byte
                        offset += 1
                    }
                    bytes[offset] = 0
                    offset += 1
                }
            }
        }
    }

    /// Makes the fields `pack(into:)` wrote, `count` of them, from `packed` (which starts
    /// where that began): one allocation and one copy of their bytes.
    public init(count: Int, packed: UnsafeRawPointer) {
        var byteCount = 0
        for index in 0..<count {
            byteCount +=
                Int(packed.loadUnaligned(fromByteOffset: 8 * index, as: UInt32.self))
                + Int(packed.loadUnaligned(fromByteOffset: 8 * index + 4, as: UInt32.self)) + 2
        }
        endIndex = count
        storage = Storage.make(count: count, byteCount: byteCount) { fields, bytes in
            var offset = 0
            for index in 0..<count {
                let name = Int(packed.loadUnaligned(fromByteOffset: 8 * index, as: UInt32.self))
                let value = Int(packed.loadUnaligned(fromByteOffset: 8 * index + 4, as: UInt32.self))
                fields[index] = Field(start: offset, nameCount: name, valueCount: value)
                offset += name + value + 2
            }
            UnsafeMutableRawPointer(bytes).copyMemory(from: packed + 8 * count, byteCount: byteCount)
        }
    }

    /// The bytes `pack(into:)` writes: each field's two lengths, then every name and value,
    /// each with its NUL.
    public var packedSize: Int { read { fields, _ in 8 * endIndex + byteCount(fields) } }

    /// Writes the fields at `at` as `init(count:packed:)` reads them: each field's name
    /// and value lengths (32 bits each, in the machine's order), then their bytes in one
    /// copy, as they lie here. Returns where it ended. A log entry keeps its request so.
    public func pack(into at: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer {
        read { fields, bytes in
            for index in 0..<endIndex {
                at.storeBytes(of: UInt32(fields[index].nameCount), toByteOffset: 8 * index, as: UInt32.self)
                at.storeBytes(of: UInt32(fields[index].valueCount), toByteOffset: 8 * index + 4, as: UInt32.self)
            }
            let count = byteCount(fields)
            (at + 8 * endIndex).copyMemory(from: UnsafeRawPointer(bytes), byteCount: count)
            return at + 8 * endIndex + count
        }
    }

    /// The names' and values' bytes in all: they lie one after another, in order.
    private func byteCount(_ fields: UnsafePointer<Field>) -> Int {
        guard endIndex > 0 else { return 0 }
        let last = fields[endIndex - 1]
        return last.start + last.nameCount + last.valueCount + 2
    }

    public var startIndex: Int { 0 }

    public subscript(position: Int) -> Element {
        (name: name(at: position), value: value(at: position))
    }

    public func name(at position: Int) -> String {
        read { fields, bytes in Self.text(bytes, fields[checked(position)].nameRange) }
    }

    public func value(at position: Int) -> String {
        read { fields, bytes in Self.text(bytes, fields[checked(position)].valueRange) }
    }

    /// Whether the field at `position` is an HTTP/2 pseudo-header (`:path`, …).
    public func isPseudoHeader(at position: Int) -> Bool {
        read { fields, bytes in Self.isPseudoHeader(fields[checked(position)], bytes) }
    }

    /// The position of the first field named `name`.
    public func firstIndex(named name: StaticString) -> Int? {
        let count = name.utf8CodeUnitCount
        return read { fields, bytes in
            for index in 0..<endIndex {
                // Lengths first: they tell most names apart for the price of a load.
                if fields[index].nameCount == count && Self.equal(bytes + fields[index].start, name.utf8Start, count) {
                    return index
                }
            }
            return nil
        }
    }

    /// The first value of `name`.
    public func value(named name: StaticString) -> String? {
        firstIndex(named: name).map(value(at:))
    }

    /// The value at `position`, as bytes in place. Inlinable, as `withBytes` and what it
    /// reads are: a call from another module went through the generic's witnesses, ~40
    /// instructions a call and a closure's context, and a push reads four to six values.
    @inlinable
    public func withValueBytes<T>(at position: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        try withBytes(at: position) { _, value in try body(value) }
    }

    /// The field at `position`, its name and value as bytes in place.
    @inlinable
    public func withBytes<T>(
        at position: Int, _ body: (_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) throws -> T
    ) rethrows -> T {
        try read { fields, bytes in
            let field = fields[checked(position)]
            return try body(
                UnsafeBufferPointer(start: bytes + field.start, count: field.nameCount),
                UnsafeBufferPointer(start: bytes + field.valueRange.lowerBound, count: field.valueCount))
        }
    }

    /// Each field in the order sent, its name and value as bytes in place: one pass for a
    /// reader of several names, where a lookup each passes over the fields again.
    public func forEachField(
        _ body: (_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) throws -> Void
    ) rethrows {
        try read { fields, bytes in
            for index in 0..<endIndex {
                let field = fields[index]
                try body(
                    UnsafeBufferPointer(start: bytes + field.start, count: field.nameCount),
                    UnsafeBufferPointer(start: bytes + field.valueRange.lowerBound, count: field.valueCount))
            }
        }
    }

    /// The name of the first field, other than a pseudo-header, that was sent more than once.
    public var repeatedName: String? {
        read { fields, bytes in
            // A name's length and last byte pick one of 64 bits, and only a name whose bit
            // an earlier name set is compared with the earlier ones: comparing every pair
            // was ~450 instructions an APNs push, which has no repeated name.
            var seen: UInt64 = 0
            for index in 0..<endIndex where !Self.isPseudoHeader(fields[index], bytes) {
                let field = fields[index]
                let last = field.nameCount == 0 ? 0 : UInt64(bytes[field.start + field.nameCount - 1])
                let bit: UInt64 = 1 << ((UInt64(truncatingIfNeeded: field.nameCount) &* 31 &+ last) & 63)
                defer { seen |= bit }
                guard seen & bit != 0 else { continue }
                for earlier in 0..<index
                where fields[earlier].nameCount == field.nameCount
                    && Self.equal(bytes + fields[earlier].start, bytes + field.start, field.nameCount)
                {
                    return Self.text(bytes, field.nameRange)
                }
            }
            return nil
        }
    }

    /// Whether the fields other than pseudo-headers are `other`'s, in the same order, name
    /// for name and value for value. Fields that lie one after another in both compare in
    /// one `memcmp`: a client's regular fields follow its pseudo-headers in one block.
    public func sameRegularFields(as other: HTTPHeaders) -> Bool {
        read { fields, bytes in
            other.read { otherFields, otherBytes in
                var (index, otherIndex) = (0, 0)
                // The run of fields that lie one after another in both, not compared yet.
                var (run, otherRun, runCount) = (0, 0, 0)
                while true {
                    while index < endIndex, Self.isPseudoHeader(fields[index], bytes) { index += 1 }
                    while otherIndex < other.endIndex, Self.isPseudoHeader(otherFields[otherIndex], otherBytes) {
                        otherIndex += 1
                    }
                    guard index < endIndex, otherIndex < other.endIndex else {
                        return index == endIndex && otherIndex == other.endIndex
                            && Self.equal(bytes + run, otherBytes + otherRun, runCount)
                    }
                    let (field, otherField) = (fields[index], otherFields[otherIndex])
                    // The lengths too: a NUL inside a name or value would move a boundary
                    // that the bytes alone do not show.
                    guard field.nameCount == otherField.nameCount, field.valueCount == otherField.valueCount else {
                        return false
                    }
                    if field.start != run + runCount || otherField.start != otherRun + runCount {
                        guard Self.equal(bytes + run, otherBytes + otherRun, runCount) else { return false }
                        (run, otherRun, runCount) = (field.start, otherField.start, 0)
                    }
                    runCount += field.nameCount + field.valueCount + 2
                    index += 1
                    otherIndex += 1
                }
            }
        }
    }

    @inlinable
    func read<T>(_ body: (UnsafePointer<Field>, UnsafePointer<UInt8>) throws -> T) rethrows -> T {
        try storage.withUnsafeMutablePointerToElements { tail in
            let fields = UnsafeRawPointer(tail).assumingMemoryBound(to: Field.self)
            return try body(fields, tail + endIndex * MemoryLayout<Field>.stride)
        }
    }

    @inlinable
    func checked(_ position: Int) -> Int {
        precondition(position >= 0 && position < endIndex, "header position \(position) out of range")
        return position
    }

    private static func isPseudoHeader(_ field: Field, _ bytes: UnsafePointer<UInt8>) -> Bool {
        field.nameCount > 0 && bytes[field.start] == UInt8(ascii: ":")
    }

    private static func equal(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ count: Int) -> Bool {
        count == 0 || memcmp(a, b, count) == 0
    }

    private static func text(_ bytes: UnsafePointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(start: bytes + range.lowerBound, count: range.count), as: UTF8.self)
    }

    /// Where a field is in the bytes: its name, a NUL, its value, a NUL (the layout the
    /// front door's transport keeps them in, so that they are copied from it whole).
    @usableFromInline
    struct Field {
        @usableFromInline var start: Int
        @usableFromInline var nameCount: Int
        @usableFromInline var valueCount: Int

        @usableFromInline init(start: Int, nameCount: Int, valueCount: Int) {
            (self.start, self.nameCount, self.valueCount) = (start, nameCount, valueCount)
        }

        var nameRange: Range<Int> { start..<(start + nameCount) }
        @inlinable
        var valueRange: Range<Int> { (start + nameCount + 1)..<(start + nameCount + 1 + valueCount) }
    }

    /// The fields' table, then their bytes, in one allocation.
    @usableFromInline
    final class Storage: ManagedBuffer<Void, UInt8> {
        @usableFromInline
        static func make(
            count: Int, byteCount: Int,
            _ initialize: (UnsafeMutablePointer<Field>, UnsafeMutablePointer<UInt8>) -> Void
        ) -> Storage {
            let tableBytes = count * MemoryLayout<Field>.stride
            let buffer = create(minimumCapacity: tableBytes + byteCount) { _ in }
            let storage = unsafeDowncast(buffer, to: Storage.self)
            storage.withUnsafeMutablePointerToElements { tail in
                precondition(Int(bitPattern: tail) % MemoryLayout<Field>.alignment == 0, "the table must be aligned")
                let fields = UnsafeMutableRawPointer(tail).bindMemory(to: Field.self, capacity: count)
                initialize(fields, tail + tableBytes)
            }
            return storage
        }
    }
}
