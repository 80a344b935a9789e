/// A JSON object whose members keep their order. Keys are unique: appending a
/// key that is already present replaces its value in place.
///
/// Lookups are linear, which is the fast choice for the small objects that push
/// payloads are (a handful of keys, 4 KB at most).
public struct JSONObject: Sendable, Hashable, Sequence {
    public typealias Member = (key: String, value: JSON)

    /// Keys and values side by side in one array: two arrays were two allocations (and
    /// two releases) for every object a push parses or reports, some five a push.
    @usableFromInline var members: [Member]

    @inlinable public init() {
        members = []
    }

    /// No members yet, with room for `capacity` (a report that adds its members one by
    /// one reallocates nothing).
    @inlinable public init(capacity: Int) {
        self.init()
        reserveCapacity(capacity)
    }

    /// Members in order; a repeated key keeps its first position and its last value.
    /// Inlinable, so that a literal list of members is built without generic calls.
    @inlinable public init(_ members: some Sequence<(String, JSON)>) {
        self.init()
        reserveCapacity(members.underestimatedCount)
        for (key, value) in members { self[key] = value }
    }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }
    /// The keys in order, as a new array: a reader that stops early iterates the object.
    public var orderedKeys: [String] { members.map(\.key) }

    public struct Iterator: IteratorProtocol {
        let object: JSONObject
        var index = 0

        public mutating func next() -> Member? {
            guard index < object.members.count else { return nil }
            defer { index += 1 }
            return object.members[index]
        }
    }

    public func makeIterator() -> Iterator { Iterator(object: self) }

    /// Lengths first: they tell most keys apart for the price of a load, where `==` on two
    /// different strings calls into the runtime, and every push looks up a dozen keys.
    @inlinable public func index(of key: String) -> Int? {
        let length = key.utf8.count
        return members.firstIndex { $0.key.utf8.count == length && $0.key == key }
    }

    public func contains(_ key: String) -> Bool {
        index(of: key) != nil
    }

    /// The value of `key`; setting `nil` removes the member, setting a value
    /// replaces it in place or appends it at the end.
    @inlinable public subscript(key: String) -> JSON? {
        get { index(of: key).map { members[$0].value } }
        set {
            if let at = index(of: key) {
                if let newValue {
                    members[at].value = newValue
                } else {
                    members.remove(at: at)
                }
            } else if let newValue {
                members.append((key, newValue))
            }
        }
    }

    /// Room for `count` members, made once (the parser knows each object's size, and a
    /// reply its usual one), so that appending up to that many reallocates nothing.
    @inlinable public mutating func reserveCapacity(_ count: Int) {
        members.reserveCapacity(count)
    }

    /// Appends a member the caller knows is new, with no lookup: the parser, whose input
    /// has unique keys, and a report made of distinct literal keys (a lookup each was
    /// ~120 instructions, six a push). A key already present would be there twice.
    @inlinable public mutating func appendUnique(_ key: String, _ value: JSON) {
        members.append((key, value))
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.elementsEqual(rhs.members) { $0.key == $1.key && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(members.count)
        for (key, value) in members {
            hasher.combine(key)
            hasher.combine(value)
        }
    }
}
