import CXHost

/// What a C caller holds: handles that are small integers disguised as pointers, in
/// one table per library. Ids are never reused, so a released handle stays dead
/// (`CX_ERR_BAD_HANDLE`) instead of reaching whatever took its place.
public final class HandleTable<Entry: Sendable>: Sendable {
    private struct Table {
        var next: UInt64 = 1
        var entries: [UInt64: Entry] = [:]
    }

    private let table = Monitor(Table())

    public init() {}

    public func insert(_ entry: Entry) -> OpaquePointer {
        table.withLock { table in
            let id = table.next
            table.next += 1
            table.entries[id] = entry
            return OpaquePointer(bitPattern: UInt(id))!
        }
    }

    public func entry(_ handle: OpaquePointer?) -> Entry? {
        guard let handle else { return nil }
        return table.withLock { $0.entries[Self.id(handle)] }
    }

    @discardableResult
    public func remove(_ handle: OpaquePointer?) -> Entry? {
        guard let handle else { return nil }
        return table.withLock { $0.entries.removeValue(forKey: Self.id(handle)) }
    }

    public func remove(ids: some Sequence<UInt64>) {
        table.withLock { table in
            for id in ids { table.entries[id] = nil }
        }
    }

    /// Live handles, for tests that hold the table to its bound.
    public var count: Int { table.withLock { $0.entries.count } }

    public static func id(_ handle: OpaquePointer) -> UInt64 { UInt64(UInt(bitPattern: handle)) }
}
