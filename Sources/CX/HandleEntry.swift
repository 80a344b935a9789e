import CArguments
import CCX
import CXHost

/// Everything a C caller holds a handle to in libcx (CX_ERR_BAD_HANDLE for a handle of
/// another kind).
enum HandleEntry: Sendable {
    case host(CHost)
    case reply(CReply)
    case emitter(CEmitter)
}

/// Every handle libcx issued: hosts, replies and emitters in one table, so a handle of
/// one kind passed as another is recognised.
let handles = HandleTable<HandleEntry>()

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
