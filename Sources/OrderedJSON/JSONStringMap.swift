/// A JSON object whose members are strings, in order: FCM's `data`, and what Android's
/// `RemoteMessage.getData()` returns. It is kept as a `JSONObject`, or, when every key and
/// value is plain (printable ASCII with no `"` or `\`) as nearly every sender's are, as its
/// compact text: that text is the map's JSON as it is, copied where the map is written and
/// scanned where it is read, with no object built, copied or freed. An FCM message's data
/// read into an object, checked, written again as the plugin's text and freed cost ~1k
/// instructions a message more (callgrind, `cxbench instructions`).
///
/// The two forms of the same members are equal.
public struct JSONStringMap: Sendable, Equatable {
    private enum Form: Sendable {
        case object(JSONObject)
        /// Compact, `{}` or `{"key":"value",…}`, keys unique, every key and value plain; and
        /// the `initialBit` of each key, so that most lookups of a key that is not there
        /// (a message's `title`, `body`, `mobiler_category`) end before the text is read.
        case plainText(String, keyInitials: UInt64)
    }

    private let form: Form

    /// Objects with more members than this are kept as objects: their keys' uniqueness is
    /// checked pair by pair.
    public static let maxPlainMembers = 32

    /// The map of `object`'s members. A member whose value is not a string is kept, and
    /// reads as no string.
    public init(_ object: JSONObject = JSONObject()) {
        form = .object(object)
    }

    /// The map whose compact text `text` is, when it is one in the plain form: an object
    /// of at most `maxPlainMembers` unique keys, each key and value plain, with no space
    /// between its tokens. Nil for any other text.
    public init?(plainText text: String) {
        let initials = Self.withBytes(of: text) { bytes -> UInt64? in
            guard let base = bytes.baseAddress,
                let read = Self.readPlain(in: base, count: bytes.count, from: 0), read.start == 0,
                read.end == bytes.count, read.compact
            else { return nil }
            return read.keyInitials
        }
        guard let initials else { return nil }
        form = .plainText(text, keyInitials: initials)
    }

    /// Reads the object at `start` in `base` (after any space) when it is in the plain form,
    /// spaces between its tokens allowed: the map, the index just past its closing brace, and
    /// the bytes of its keys and values counted together. Nil for anything else, the reader
    /// then judging the object another way: a member not a plain string, a repeated key,
    /// more than `maxPlainMembers`, a syntax error.
    public static func read(
        in base: UnsafePointer<UInt8>, count: Int, from start: Int
    ) -> (map: JSONStringMap, end: Int, contentBytes: Int)? {
        guard let read = readPlain(in: base, count: count, from: start) else { return nil }
        let text: String
        if read.compact {
            text = SmallASCII.string(UnsafeBufferPointer(start: base + read.start, count: read.end - read.start))
        } else {
            // A sender's spaces (`{"k": "v", …}`) are left out: the text is the compact one.
            text = String(unsafeUninitializedCapacity: read.end - read.start) { room in
                guard let at = room.baseAddress else { return 0 }
                var end = at
                end.pointee = UInt8(ascii: "{")
                end += 1
                var members = MemberCursor(
                    in: UnsafeBufferPointer(start: base + read.start, count: read.end - read.start))
                while let (key, value) = members.next() {
                    if end - at > 1 { end = put(UInt8(ascii: ","), at: end) }
                    end = put(quoted: key, at: end)
                    end = put(UInt8(ascii: ":"), at: end)
                    end = put(quoted: value, at: end)
                }
                return put(UInt8(ascii: "}"), at: end) - at
            }
        }
        return (JSONStringMap(form: .plainText(text, keyInitials: read.keyInitials)), read.end, read.contentBytes)
    }

    private init(form: Form) { self.form = form }

    /// The compact text, when the map is kept in the plain form.
    public var plainText: String? {
        if case .plainText(let text, _) = form { text } else { nil }
    }

    /// The members as an object (built from the text of a map in the plain form).
    public var object: JSONObject {
        switch form {
        case .object(let object): return object
        case .plainText(let text, _):
            var object = JSONObject(capacity: 4)
            Self.forEachMember(of: text) { key, value in
                object.appendUnique(SmallASCII.string(key), .string(SmallASCII.string(value)))
            }
            return object
        }
    }

    /// At least the bytes the map's compact JSON takes (`JSON.sizeBound`).
    public var sizeBound: Int {
        switch form {
        case .object(let object): JSON.object(object).sizeBound
        case .plainText(let text, _): text.utf8.count
        }
    }

    public var count: Int {
        switch form {
        case .object(let object): return object.count
        case .plainText(let text, _):
            var count = 0
            Self.forEachMember(of: text) { _, _ in count += 1 }
            return count
        }
    }

    public var isEmpty: Bool {
        switch form {
        case .object(let object): object.isEmpty
        case .plainText(let text, _): text.utf8.count == 2
        }
    }

    /// The string value of `key`; nil when there is no such member, or its value is not a
    /// string. It and `containsKey(where:)` walk the text in loops of their own: through
    /// `forEachMember`'s closure a message's lookups cost three times as much (callgrind).
    public subscript(key: String) -> String? {
        switch form {
        case .object(let object): object[key]?.stringValue
        case .plainText(let text, let initials): Self.value(of: key, in: text, initials: initials, SmallASCII.string)
        }
    }

    public func contains(_ key: String) -> Bool {
        switch form {
        case .object(let object): object.contains(key)
        case .plainText(let text, let initials): Self.value(of: key, in: text, initials: initials) { _ in () } != nil
        }
    }

    /// Whether some key satisfies `predicate`.
    public func containsKey(where predicate: (String) -> Bool) -> Bool {
        switch form {
        case .object(let object):
            return object.contains { predicate($0.key) }
        case .plainText(let text, _):
            return Self.withBytes(of: text) { bytes in
                var members = MemberCursor(in: bytes)
                while let (name, _) = members.next() {
                    if predicate(SmallASCII.string(name)) { return true }
                }
                return false
            }
        }
    }

    public static func == (lhs: JSONStringMap, rhs: JSONStringMap) -> Bool {
        if case .plainText(let left, _) = lhs.form, case .plainText(let right, _) = rhs.form { return left == right }
        return lhs.object == rhs.object
    }

    /// What `found` makes of the value of `key` in a text in the plain form; nil when no
    /// member has that key.
    private static func value<R>(
        of key: String, in text: String, initials: UInt64, _ found: (UnsafeBufferPointer<UInt8>) -> R
    ) -> R? {
        withBytes(of: key) { wanted in
            guard initials & initialBit(wanted.first) != 0 else { return nil }
            return withBytes(of: text) { bytes in
                var members = MemberCursor(in: bytes)
                while let (name, value) = members.next() {
                    if same(name, wanted) { return found(value) }
                }
                return nil
            }
        }
    }

    /// A key's bit among a map's `keyInitials`: its first byte's low six bits, or bit 0 for
    /// the empty key.
    private static func initialBit(_ first: UInt8?) -> UInt64 {
        first.map { 1 &<< UInt64($0 & 63) } ?? 1
    }

    private static func same(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        guard left.count == right.count else { return false }
        for index in 0..<left.count where left[index] != right[index] { return false }
        return true
    }

    @inline(__always)
    private static func withBytes<R>(of text: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        var text = text
        return text.withUTF8(body)
    }

    /// The members of a text in the plain form, one after another, as their bytes.
    private static func forEachMember(
        of text: String, _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void
    ) {
        withBytes(of: text) { bytes in
            var members = MemberCursor(in: bytes)
            while let (key, value) = members.next() { body(key, value) }
        }
    }

    /// One pass over an object in the plain form: where it starts and ends, whether it has
    /// no space in it, and its keys' and values' bytes.
    private static func readPlain(
        in base: UnsafePointer<UInt8>, count: Int, from index: Int
    ) -> (start: Int, end: Int, compact: Bool, contentBytes: Int, keyInitials: UInt64)? {
        // The keys seen so far, where they are, for the check that none repeats.
        withUnsafeTemporaryAllocation(of: (start: Int, count: Int).self, capacity: maxPlainMembers) { keys in
            var reader = PlainObjectReader(base: base, count: count, at: index)
            guard reader.take(UInt8(ascii: "{")) else { return nil }
            let start = reader.at - 1
            reader.compact = true
            if reader.take(UInt8(ascii: "}")) { return (start, reader.at, reader.compact, 0, 0) }
            var (members, contentBytes, initials) = (0, 0, UInt64(0))
            repeat {
                guard members < maxPlainMembers, let key = reader.plain(), reader.take(UInt8(ascii: ":")),
                    let value = reader.plain()
                else { return nil }
                for seen in keys.prefix(members) where seen.count == key.count {
                    if (0..<key.count).allSatisfy({ base[seen.start + $0] == base[key.start + $0] }) { return nil }
                }
                keys[members] = key
                members += 1
                contentBytes += key.count + value.count
                initials |= initialBit(key.count > 0 ? base[key.start] : nil)
            } while reader.take(UInt8(ascii: ","))
            guard reader.take(UInt8(ascii: "}")) else { return nil }
            return (start, reader.at, reader.compact, contentBytes, initials)
        }
    }

    private static func put(_ byte: UInt8, at: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        at.pointee = byte
        return at + 1
    }

    private static func put(quoted bytes: UnsafeBufferPointer<UInt8>, at: UnsafeMutablePointer<UInt8>)
        -> UnsafeMutablePointer<UInt8>
    {
        var end = put(UInt8(ascii: "\""), at: at)
        if let from = bytes.baseAddress { end.initialize(from: from, count: bytes.count) }
        end += bytes.count
        return put(UInt8(ascii: "\""), at: end)
    }
}

/// The tokens of an object in the plain form, read from a sender's bytes.
private struct PlainObjectReader {
    let base: UnsafePointer<UInt8>
    let count: Int
    var at: Int
    /// No space was skipped since this was last set.
    var compact = true

    /// Whether `byte` comes next (after space); the reader then stands past it.
    mutating func take(_ byte: UInt8) -> Bool {
        let next = JSONSpace.skip(in: base, count: count, from: at)
        compact = compact && next == at
        guard next < count, base[next] == byte else { return false }
        at = next + 1
        return true
    }

    /// The next plain string, where its bytes are; the reader then stands past its quote.
    mutating func plain() -> (start: Int, count: Int)? {
        guard take(UInt8(ascii: "\"")), let end = ByteWord.plainStringEnd(in: base, count: count, from: at) else {
            return nil
        }
        defer { at = end + 1 }
        return (at, end - at)
    }
}

/// The members of an object in the plain form already read whole (`readPlain`), compact
/// or with a sender's spaces, so that its syntax needs no check: each string's bytes run to
/// the next quote, and what lies between two strings is the `:` or `,` and any space.
private struct MemberCursor {
    let base: UnsafePointer<UInt8>?
    let count: Int
    var at = 1

    /// The members of `object`, its text from its opening brace to its closing one.
    init(in object: UnsafeBufferPointer<UInt8>) {
        (base, count) = (object.baseAddress, object.count)
    }

    mutating func next() -> (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>)? {
        guard let key = string(), let value = string() else { return nil }
        return (key, value)
    }

    /// The next string, or nil at the object's close.
    private mutating func string() -> UnsafeBufferPointer<UInt8>? {
        guard let base else { return nil }
        while at < count, base[at] != UInt8(ascii: "\""), base[at] != UInt8(ascii: "}") { at += 1 }
        guard at < count, base[at] == UInt8(ascii: "\"") else { return nil }
        let start = at + 1
        // Plain: the first byte past the string's text is its quote.
        let end = ByteWord.plainStringEnd(in: base, count: count, from: start) ?? count
        at = end + 1
        return UnsafeBufferPointer(start: base + start, count: end - start)
    }
}
