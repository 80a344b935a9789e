import CArguments
import CCX
import CCXDevice
import CXHost
import Dispatch
import OrderedJSON
import ShellKit

#if canImport(Glibc)
    import Glibc
#endif

/// A world of headless devices created through `cx_device_create`: the protocol's
/// `Session` in-process, one request at a time.
final class CDevice: Sendable {
    private let session = Monitor(Session())
    private let callback: Callback
    private let queue = DispatchQueue(label: "cx.c-device")
    private static let queueKey = DispatchSpecificKey<Bool>()

    /// The core's callback and context. cx_device.h promises the context may be used
    /// from the delivery thread, which is what makes sharing it sound.
    struct Callback: @unchecked Sendable {
        let function: cx_device_delivery_fn
        let context: UnsafeMutableRawPointer?

        func callAsFunction(device: String, kind: cx_delivery_kind, key: String, ok: Bool, output: String) {
            var device = device
            var key = key
            var output = output
            device.withUTF8 { deviceBytes in
                key.withUTF8 { keyBytes in
                    output.withUTF8 { outputBytes in
                        var delivery = cx_delivery(
                            kind: kind, request_id: 0, key: Self.chars(keyBytes), key_len: keyBytes.count, ok: ok,
                            output: Self.chars(outputBytes), output_len: outputBytes.count)
                        function(context, Self.chars(deviceBytes), deviceBytes.count, &delivery)
                    }
                }
            }
        }

        private static func chars(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafePointer<CChar>? {
            bytes.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }
        }
    }

    init(callback: Callback) {
        self.callback = callback
        queue.setSpecific(key: Self.queueKey, value: true)
    }

    /// True on any world's delivery thread, where waiting for deliveries would wait for itself.
    static var isOnDeliveryThread: Bool { DispatchQueue.getSpecific(key: queueKey) == true }

    /// Handles one line; its deliveries reach the callback, on the world's delivery
    /// thread, before the reply is returned.
    func request(_ line: UnsafeRawBufferPointer) -> String {
        session.withLock { session in answer(session.handle(line: line)) }
    }

    private func answer(_ output: [String]) -> String {
        let deliveries = output.dropLast().compactMap { try? JSON.parse(text: $0).objectValue }
        if !deliveries.isEmpty {
            let done = DispatchSemaphore(value: 0)
            let callback = callback
            queue.async {
                for delivery in deliveries {
                    let device = delivery["device"]?.stringValue ?? ""
                    let key = delivery["delivery"]?.stringValue ?? ""
                    if delivery["end"] == true {
                        callback(device: device, kind: CX_DELIVERY_END, key: key, ok: true, output: "")
                    } else {
                        callback(
                            device: device, kind: CX_DELIVERY_ITEM, key: key, ok: delivery["ok"] == true,
                            output: delivery["output"]?.stringValue ?? "")
                    }
                }
                done.signal()
            }
            done.wait()
        }
        return output.last ?? ""
    }
}

/// The worlds a C caller holds.
let worlds = HandleTable<CDevice>()

extension HandleTable<CDevice> {
    func world(_ handle: OpaquePointer?) throws(CXFailure) -> CDevice {
        guard handle != nil else { throw CXFailure(CX_ERR_NULL) }
        guard let world = entry(handle) else { throw CXFailure(CX_ERR_BAD_HANDLE) }
        return world
    }
}

@_cdecl("cx_device_abi_version")
public func cxDeviceABIVersion() -> UInt32 {
    UInt32(CX_DEVICE_ABI_VERSION)
}

@_cdecl("cx_device_create")
public func cxDeviceCreate(
    _ deliver: cx_device_delivery_fn?, _ context: UnsafeMutableRawPointer?,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> cx_status {
    status { () throws(CXFailure) in
        guard let deliver, let out else { throw CXFailure(CX_ERR_NULL) }
        out.pointee = worlds.insert(CDevice(callback: CDevice.Callback(function: deliver, context: context)))
    }
}

@_cdecl("cx_device_request")
public func cxDeviceRequest(
    _ handle: OpaquePointer?, _ line: UnsafePointer<CChar>?, _ lineLength: Int,
    _ reply: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ replyLength: UnsafeMutablePointer<Int>?
) -> cx_status {
    status { () throws(CXFailure) in
        guard let reply, let replyLength else { throw CXFailure(CX_ERR_NULL) }
        let world = try worlds.world(handle)
        guard lineLength >= 0 else { throw CXFailure(CX_ERR_INVALID_ARGUMENT) }
        guard line != nil || lineLength == 0 else { throw CXFailure(CX_ERR_NULL) }
        if CDevice.isOnDeliveryThread { throw CXFailure(CX_ERR_IN_CALLBACK) }
        // The line goes to the protocol as bytes: a line that is not UTF-8 gets the
        // protocol's own ok:false reply rather than a status.
        let answer = world.request(UnsafeRawBufferPointer(start: line, count: lineLength))
        var bytes = Array(answer.utf8)
        bytes.append(0)
        guard let copy = malloc(bytes.count)?.assumingMemoryBound(to: CChar.self) else {
            throw CXFailure(CX_ERR_INVALID_ARGUMENT)
        }
        bytes.withUnsafeBytes { source in
            if let base = source.baseAddress { memcpy(copy, base, bytes.count) }
        }
        reply.pointee = copy
        replyLength.pointee = bytes.count - 1
    }
}

@_cdecl("cx_device_destroy")
public func cxDeviceDestroy(_ handle: OpaquePointer?) -> cx_status {
    status { () throws(CXFailure) in
        _ = try worlds.world(handle)
        if CDevice.isOnDeliveryThread { throw CXFailure(CX_ERR_IN_CALLBACK) }
        worlds.remove(handle)
    }
}

@_cdecl("cx_device_free")
public func cxDeviceFree(_ pointer: UnsafeMutableRawPointer?) {
    free(pointer)
}
