import CCX
import CXHost
import Dispatch
import Foundation
import OrderedJSON
import ShellKit

/// The headless shell in-process: `cx_device_request` is one protocol line.
final class CDevice: Sendable {
    /// One request at a time, as the protocol is.
    private let session = Monitor(Session())
    private let callback: DeliveryCallback
    private let queue = DispatchQueue(label: "cx.c-device")
    private static let queueKey = DispatchSpecificKey<Bool>()

    init(callback: DeliveryCallback) {
        self.callback = callback
        queue.setSpecific(key: Self.queueKey, value: true)
    }

    static func from(_ handle: OpaquePointer?) throws(CXFailure) -> CDevice {
        guard handle != nil else { throw CXFailure(CX_ERR_NULL) }
        guard case .device(let device)? = handles.entry(handle) else { throw CXFailure(CX_ERR_BAD_HANDLE) }
        return device
    }

    /// True on any device's delivery thread, where waiting for deliveries would wait for itself.
    static var isOnDeliveryThread: Bool { DispatchQueue.getSpecific(key: queueKey) == true }

    /// Handles one line; its deliveries reach the callback, on the device's delivery
    /// thread, before the reply is returned.
    func request(_ line: UnsafeRawBufferPointer) -> String {
        session.withLock { session in answer(session.handle(line: line)) }
    }

    /// Hands the deliveries to the callback on the device's delivery thread, waits for
    /// them, and returns the reply line.
    private func answer(_ output: [String]) -> String {
        let deliveries = output.dropLast().compactMap { try? JSON.parse(text: $0) }
        if !deliveries.isEmpty {
            let done = DispatchSemaphore(value: 0)
            let callback = callback
            queue.async {
                for delivery in deliveries {
                    let key = delivery["delivery"]?.stringValue ?? ""
                    if delivery["end"] == true {
                        callback.end(key)
                    } else {
                        callback.item(key, ok: delivery["ok"] == true, output: delivery["output"]?.stringValue ?? "")
                    }
                }
                done.signal()
            }
            done.wait()
        }
        return output.last ?? ""
    }
}
