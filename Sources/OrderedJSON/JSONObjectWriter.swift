/// An object's compact text written member by member at a pointer, with no object built:
/// what `JSONObject.write(into:)` writes for the object of the same members, in the same
/// order. For a text made of some of an object's members and others (the Android plugin's
/// message, `PushEvent.androidMessageText`). The room must hold the members' bounds
/// (`JSON.sizeBound`, `JSON.worstCaseSize(ofStringBytes:)` of each key and string) and
/// two bytes a member and the braces.
public struct JSONObjectWriter {
    @usableFromInline let start: UnsafeMutablePointer<UInt8>
    @usableFromInline var end: UnsafeMutablePointer<UInt8>

    /// Opens the object at `at`.
    @inlinable
    public init(at: UnsafeMutablePointer<UInt8>) {
        at.pointee = UInt8(ascii: "{")
        (start, end) = (at, at + 1)
    }

    /// A member with any value.
    @inlinable
    public mutating func member(_ key: String, _ value: JSON) {
        begin(key)
        end = value.write(into: end)
    }

    /// A member with a string value, written with no `JSON` made of it.
    @inlinable
    public mutating func member(_ key: String, string value: String) {
        begin(key)
        end = JSON.writeString(value, into: end)
    }

    /// Every member of `map`, in order; the room must hold `map.sizeBound`. A map kept as
    /// its compact text has its members copied as they are.
    public mutating func members(of map: JSONStringMap) {
        guard var text = map.plainText else {
            for (key, value) in map.object { member(key, value) }
            return
        }
        text.withUTF8 { bytes in
            guard bytes.count > 2, let base = bytes.baseAddress else { return }
            separate()
            end.initialize(from: base + 1, count: bytes.count - 2)
            end += bytes.count - 2
        }
    }

    /// Its key, after a comma unless it is the first.
    @usableFromInline
    mutating func begin(_ key: String) {
        separate()
        end = JSON.writeString(key, into: end)
        end.pointee = UInt8(ascii: ":")
        end += 1
    }

    /// A comma, unless nothing is written yet after the brace.
    @usableFromInline
    mutating func separate() {
        guard end - start > 1 else { return }
        end.pointee = UInt8(ascii: ",")
        end += 1
    }

    /// Closes the object; returns where its text ended.
    @inlinable
    public consuming func close() -> UnsafeMutablePointer<UInt8> {
        end.pointee = UInt8(ascii: "}")
        return end + 1
    }
}
