/// Compact serialization with no append per byte. Text and bytes (every reply, delivery
/// and response body) are written once into temporary room for the worst case and copied
/// out, unless that room would pass 64 KiB: then into room of the exact size, found by a
/// first pass. What is appended to an output (the network's report lines) goes in piece
/// by piece, in place.
extension JSON {
    /// Compact JSON text: members in their order, no white space, strings as UTF-8
    /// with only `"`, `\` and control characters escaped.
    public var compactText: String {
        withCompactBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// Compact JSON as UTF-8 bytes; see `compactText`.
    public var compactBytes: [UInt8] {
        withCompactBytes { Array($0) }
    }

    /// The compact serialization, written into temporary room and lent to `body`. The room
    /// is for the worst case (every byte escaped), found from the lengths alone: measuring
    /// the exact size was a second search of every string for bytes to escape (~700
    /// instructions of an APNs push's report line; ~2.9k of a line's ~100-byte `body`). A
    /// large value (a reply listing a big world) is measured instead: room for its worst
    /// case could be six times its text.
    private func withCompactBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        let bound = sizeBound
        let capacity = bound <= Self.largestRoomForTheWorstCase ? bound : serializedSize
        return Self.withBytes(writtenInto: capacity, by: write(into:), body)
    }

    /// Text that `write` writes from the pointer it is given to the one it returns, at
    /// most `size` bytes, through temporary room (the stack's while it fits): what builds
    /// no value to serialize (an FCM message's event, written from its `data`,
    /// `PushEvent.androidMessageText`). `write` must write valid UTF-8, and the pieces it
    /// writes with `writeString(_:into:)` need their worst case counted in `size`.
    public static func text(
        ofAtMost size: Int, writtenBy write: (UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8>
    ) -> String {
        withBytes(writtenInto: size, by: write) { String(decoding: $0, as: UTF8.self) }
    }

    private static func withBytes<R>(
        writtenInto size: Int, by write: (UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8>,
        _ body: (UnsafeBufferPointer<UInt8>) -> R
    ) -> R {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: size) { room in
            guard let base = room.baseAddress else { return body(UnsafeBufferPointer(start: nil, count: 0)) }
            let written = write(base) - base
            precondition(written <= room.count, "the room is below what was written")
            return body(UnsafeBufferPointer(start: base, count: written))
        }
    }

    /// The most room the compact forms take for a worst case; past it, they measure.
    static let largestRoomForTheWorstCase = 65_536

    /// The most bytes a string of `count` UTF-8 bytes takes as a quoted JSON string:
    /// every byte `\u00XX`, and the quotes.
    public static func worstCaseSize(ofStringBytes count: Int) -> Int { 6 * count + 2 }

    /// At least the bytes the compact serialization takes, found from the lengths alone.
    public var sizeBound: Int {
        switch self {
        case .null, .bool: 5
        case .number(let number): number.text.utf8.count
        case .string(let value): Self.worstCaseSize(ofStringBytes: value.utf8.count)
        case .array(let elements): elements.reduce(elements.count + 2) { $0 + $1.sizeBound }
        case .object(let object):
            object.members.reduce(object.members.count * 2 + 2) {
                $0 + Self.worstCaseSize(ofStringBytes: $1.key.utf8.count) + $1.value.sizeBound
            }
        }
    }

    /// Appends the compact serialization to `output`, piece by piece: no measuring and no
    /// room of its own (measuring a report line for room for its worst case, and the heap
    /// room past 1 KiB, cost more than writing it).
    public func write(to output: inout ByteOutput) {
        switch self {
        case .null: output.append("null")
        case .bool(let value): output.append(value ? "true" : "false")
        case .number(let number): output.append(utf8Of: number.text)
        case .string(let value): output.appendJSONString(value)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                element.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object): object.write(to: &output)
        }
    }

    /// How many bytes the compact serialization takes.
    public var serializedSize: Int {
        switch self {
        case .null: 4
        case .bool(let value): value ? 4 : 5
        case .number(let number): number.text.utf8.count
        case .string(let value): JSON.serializedSize(of: value)
        case .array(let elements):
            elements.reduce(max(elements.count - 1, 0) + 2) { $0 + $1.serializedSize }
        case .object(let object): object.serializedSize
        }
    }

    /// Writes the compact serialization at `at`, which has room for `sizeBound` bytes
    /// (or `serializedSize`, measured); returns where it ended.
    public func write(into at: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        switch self {
        case .null: return JSON.copy("null", to: at)
        case .bool(let value): return JSON.copy(value ? "true" : "false", to: at)
        case .number(let number): return JSON.copy(number.text, to: at)
        case .string(let value): return JSON.writeString(value, into: at)
        case .array(let elements):
            var end = at
            end.pointee = UInt8(ascii: "[")
            end += 1
            for (index, element) in elements.enumerated() {
                if index > 0 {
                    end.pointee = UInt8(ascii: ",")
                    end += 1
                }
                end = element.write(into: end)
            }
            end.pointee = UInt8(ascii: "]")
            return end + 1
        case .object(let object): return object.write(into: at)
        }
    }

    /// Appends `value` in decimal, without making a `String` of it (a log entry and a
    /// push's effect sentence write numbers among their bytes).
    public static func writeDecimal(_ value: Int64, to output: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: decimalBytes) { text in
            guard let base = text.baseAddress else { return }
            output.append(contentsOf: UnsafeBufferPointer(start: base, count: writeDecimal(value, into: base) - base))
        }
    }

    /// The most bytes a decimal `Int64` takes: a sign and 19 digits, or 20 digits unsigned.
    public static let decimalBytes = 21

    /// Writes `value` in decimal at `at` (room for `decimalBytes`); returns the end.
    public static func writeDecimal(_ value: Int64, into at: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8>
    {
        var start = at
        if value < 0 {
            start.pointee = UInt8(ascii: "-")
            start += 1
        }
        // The magnitude as unsigned, so that Int64.min has one too.
        let digits = DecimalDigits.count(value.magnitude)
        DecimalDigits.write(
            value.magnitude, into: UnsafeMutableBufferPointer(start: start, count: digits), endingAt: digits)
        return start + digits
    }

    /// Appends `value` as a quoted JSON string.
    public static func writeString(_ value: String, to output: inout [UInt8]) {
        withBytes(of: value) { writeString(utf8: $0, to: &output) }
    }

    /// Appends text given as its UTF-8 bytes (which must be valid UTF-8: a `String`'s
    /// are) as a quoted JSON string: what `writeString(_:to:)` writes for that text.
    public static func writeString(utf8 bytes: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        // In place, with no array of its own: a log entry writes some twenty strings,
        // and a temporary array each (allocated, looked up, freed) cost more than the
        // rest of the entry (Docs/Performance.md).
        guard firstEscape(in: bytes, from: 0) < bytes.count else {
            output.append(UInt8(ascii: "\""))
            output.append(contentsOf: bytes)
            output.append(UInt8(ascii: "\""))
            return
        }
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: serializedSize(of: bytes)))
        output.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            _ = writeString(utf8: bytes, into: base + start)
        }
    }

    /// The bytes `value` takes quoted: one more for each `"`, `\` and the control
    /// characters with a short escape, five more for the others (`\u00XX`).
    static func serializedSize(of value: String) -> Int {
        withBytes(of: value) { serializedSize(of: $0) }
    }

    /// A word at a time, as `writeString(utf8:into:)` writes: a fresh search after each
    /// escape (its tail copied into a padded word) cost ~30 instructions an escape.
    static func serializedSize(of bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var size = bytes.count + 2
        guard let base = bytes.baseAddress else { return size }
        var index = 0
        while bytes.count - index >= 8 {
            let plain = ByteWord(at: base + index).firstEscapeOffset
            index &+= plain
            if plain < 8 {
                size += escapeLength(base[index])
                index &+= 1
            }
        }
        while index < bytes.count {
            size += escapeLength(base[index])
            index &+= 1
        }
        return size
    }

    /// Writes `value` quoted and escaped at `at`, which has room for
    /// `worstCaseSize(ofStringBytes:)` of its UTF-8 count; returns where it ended.
    public static func writeString(_ value: String, into at: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<
        UInt8
    > {
        withBytes(of: value) { writeString(utf8: $0, into: at) }
    }

    /// Writes in one pass, a word at a time: each word of eight bytes is stored whole,
    /// and when one of them needs escaping the output moves on only to it, its escape is
    /// written, and the next word starts past it. A run copied with `memcpy` and a fresh
    /// search after each escape cost ~100 instructions an escape, and byte by byte the
    /// word that had one ~10 a byte; a push's event, a stream item's `output`, is quotes
    /// every few bytes. Storing a whole word needs room for eight bytes at `end`: there is,
    /// since eight bytes are left to write, each taking a byte or more. Long text goes the
    /// same way sixteen bytes at a time first (`ByteBlock`), with room for sixteen alike.
    static func writeString(utf8 bytes: UnsafeBufferPointer<UInt8>, into at: UnsafeMutablePointer<UInt8>)
        -> UnsafeMutablePointer<UInt8>
    {
        var end = at
        end.pointee = UInt8(ascii: "\"")
        end += 1
        guard let base = bytes.baseAddress else {
            end.pointee = UInt8(ascii: "\"")
            return end + 1
        }
        let count = bytes.count
        var index = 0
        while count - index >= ByteBlock.size {
            let plain = ByteBlock.copy(from: base + index, to: end)
            index &+= plain
            end += plain
            if plain < ByteBlock.size {
                end = writeEscaped(base[index], into: end)
                index &+= 1
            }
        }
        while count - index >= 8 {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            UnsafeMutableRawPointer(end).storeBytes(of: word, as: UInt64.self)
            let plain = ByteWord(word).firstEscapeOffset
            index &+= plain
            end += plain
            if plain < 8 {
                end = writeEscaped(base[index], into: end)
                index &+= 1
            }
        }
        // A tail shorter than a word goes as the string's last word, when that word needs
        // no escape: the bytes it shares with the tail's predecessors were then written as
        // they are, just before `end`, and are written again the same.
        if index < count, count >= 8 {
            let last = UnsafeRawPointer(base + count - 8).loadUnaligned(as: UInt64.self)
            if !ByteWord(last).needsEscape {
                UnsafeMutableRawPointer(end - (8 - (count - index))).storeBytes(of: last, as: UInt64.self)
                end += count - index
                index = count
            }
        }
        while index < count {
            end = writeEscaped(base[index], into: end)
            index &+= 1
        }
        end.pointee = UInt8(ascii: "\"")
        return end + 1
    }

    /// One byte as a JSON string has it: itself, or its escape.
    @inline(__always)
    private static func writeEscaped(_ byte: UInt8, into end: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<
        UInt8
    > {
        let length = escapeLength(byte)
        guard length > 0 else {
            end.pointee = byte
            return end + 1
        }
        end.pointee = UInt8(ascii: "\\")
        switch byte {
        case UInt8(ascii: "\""): end[1] = UInt8(ascii: "\"")
        case UInt8(ascii: "\\"): end[1] = UInt8(ascii: "\\")
        case 0x08: end[1] = UInt8(ascii: "b")
        case 0x0C: end[1] = UInt8(ascii: "f")
        case 0x0A: end[1] = UInt8(ascii: "n")
        case 0x0D: end[1] = UInt8(ascii: "r")
        case 0x09: end[1] = UInt8(ascii: "t")
        default:
            let hex: StaticString = "0123456789abcdef"
            end[1] = UInt8(ascii: "u")
            end[2] = UInt8(ascii: "0")
            end[3] = UInt8(ascii: "0")
            end[4] = hex.utf8Start[Int(byte >> 4)]
            end[5] = hex.utf8Start[Int(byte & 0xF)]
        }
        return end + 1 + length
    }

    /// The index of the first byte at or after `from` that needs escaping, or the end.
    /// Eight bytes at a time while none does (most text has none), and a tail shorter
    /// than eight is tested as one word too, padded with spaces (which need none).
    @inline(__always)
    static func firstEscape(in bytes: UnsafeBufferPointer<UInt8>, from: Int) -> Int {
        guard let base = bytes.baseAddress else { return bytes.count }
        var index = from
        while bytes.count - index >= ByteBlock.size, ByteBlock.firstEscapeOffset(at: base + index) == ByteBlock.size {
            index += ByteBlock.size
        }
        while bytes.count - index >= 8 {
            if ByteWord(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)).needsEscape { break }
            index += 8
        }
        if bytes.count - index < 8 {
            var word: UInt64 = 0x2020_2020_2020_2020
            withUnsafeMutableBytes(of: &word) {
                $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[index...]))
            }
            if !ByteWord(word).needsEscape { return bytes.count }
        }
        while index < bytes.count && escapeLength(bytes[index]) == 0 { index += 1 }
        return index
    }

    /// How many bytes escaping `byte` adds: 0 for a byte that goes as it is.
    @inline(__always)
    static func escapeLength(_ byte: UInt8) -> Int {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x08, 0x09, 0x0A, 0x0C, 0x0D: 1
        case 0..<0x20: 5
        default: 0
        }
    }

    /// The string's UTF-8, in place when it is stored contiguously (native strings are).
    @inline(__always)
    static func withBytes<T>(of value: String, _ body: (UnsafeBufferPointer<UInt8>) -> T) -> T {
        if let result = value.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(value.utf8).withUnsafeBufferPointer(body)
    }

    /// Copies a string's bytes unquoted (number texts and literals); returns the end.
    @inline(__always)
    static func copy(_ text: String, to at: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        withBytes(of: text) { bytes in
            guard let base = bytes.baseAddress else { return at }
            at.update(from: base, count: bytes.count)
            return at + bytes.count
        }
    }
}

extension JSONObject {
    /// Appends the compact serialization to `output`, members in order.
    public func write(to output: inout ByteOutput) {
        output.append(UInt8(ascii: "{"))
        for index in members.indices {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            output.appendJSONString(members[index].key)
            output.append(UInt8(ascii: ":"))
            members[index].value.write(to: &output)
        }
        output.append(UInt8(ascii: "}"))
    }

    /// Compact JSON text of this object.
    public var compactText: String { JSON.object(self).compactText }

    var serializedSize: Int {
        var size = Swift.max(members.count - 1, 0) + 2 + members.count
        for (key, value) in members {
            size += JSON.serializedSize(of: key) + value.serializedSize
        }
        return size
    }

    func write(into at: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        var object = JSONObjectWriter(at: at)
        for index in members.indices { object.member(members[index].key, members[index].value) }
        return object.close()
    }
}
