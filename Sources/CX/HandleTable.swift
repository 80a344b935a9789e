import CArguments
import CCX
import CXHost

/// Everything a C caller holds a handle to. One table for every kind, so a handle of
/// one kind passed as another is recognised (CX_ERR_BAD_HANDLE) instead of misused.
enum HandleEntry: Sendable {
    case host(CHost)
    case reply(CReply)
    case emitter(CEmitter)
}

/// Handles are small integers disguised as pointers; ids are never reused, so a
/// released handle stays dead.
final class HandleTable: Sendable {
    private struct Table {
        var next: UInt64 = 1
        var entries: [UInt64: HandleEntry] = [:]
    }

    private let table = Monitor(Table())

    func insert(_ entry: HandleEntry) -> OpaquePointer {
        table.withLock { table in
            let id = table.next
            table.next += 1
            table.entries[id] = entry
            return OpaquePointer(bitPattern: UInt(id))!
        }
    }

    func entry(_ handle: OpaquePointer?) -> HandleEntry? {
        guard let handle else { return nil }
        return table.withLock { $0.entries[Self.id(handle)] }
    }

    @discardableResult
    func remove(_ handle: OpaquePointer?) -> HandleEntry? {
        guard let handle else { return nil }
        return table.withLock { $0.entries.removeValue(forKey: Self.id(handle)) }
    }

    /// Live handles of every kind, for tests that hold the table to its bound.
    var count: Int { table.withLock { $0.entries.count } }

    func remove(ids: some Sequence<UInt64>) {
        table.withLock { table in
            for id in ids { table.entries[id] = nil }
        }
    }

    static func id(_ handle: OpaquePointer) -> UInt64 { UInt64(UInt(bitPattern: handle)) }
}

let handles = HandleTable()

/// The core's callback and its context. The header promises the context may be used
/// from the delivery thread, which is what makes sharing it sound.
struct DeliveryCallback: @unchecked Sendable {
    let function: cx_delivery_fn
    let context: UnsafeMutableRawPointer?

    func response(_ id: UInt64, ok: Bool, output: String) {
        invoke(kind: CX_DELIVERY_RESPONSE, id: id, key: "", ok: ok, output: output)
    }

    func item(_ key: String, ok: Bool, output: String) {
        invoke(kind: CX_DELIVERY_ITEM, id: 0, key: key, ok: ok, output: output)
    }

    func end(_ key: String) {
        invoke(kind: CX_DELIVERY_END, id: 0, key: key, ok: true, output: "")
    }

    private func invoke(kind: cx_delivery_kind, id: UInt64, key: String, ok: Bool, output: String) {
        var key = key
        var output = output
        key.withUTF8 { keyBytes in
            output.withUTF8 { outputBytes in
                var delivery = cx_delivery(
                    kind: kind, request_id: id, key: Self.chars(keyBytes), key_len: keyBytes.count, ok: ok,
                    output: Self.chars(outputBytes), output_len: outputBytes.count)
                function(context, &delivery)
            }
        }
    }

    private static func chars(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafePointer<CChar>? {
        bytes.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }
    }
}

extension CXFailure {
    /// The status that answers each synchronous host error.
    init(_ error: HostError) {
        switch error {
        case .shutDown: self.init(CX_ERR_SHUT_DOWN)
        case .duplicatePlugin: self.init(CX_ERR_DUPLICATE_PLUGIN)
        case .duplicateCallID: self.init(CX_ERR_DUPLICATE_ID)
        case .inDeliveryHandler: self.init(CX_ERR_IN_CALLBACK)
        case .inPlugin: self.init(CX_ERR_IN_PLUGIN)
        }
    }
}
