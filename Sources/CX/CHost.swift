import CCX
import CXHost

/// A host created through `cx_host_create`, with the handles issued on its behalf.
final class CHost: Sendable {
    let host: PluginHost
    /// Reply and emitter handles issued for this host's plugins; released with it.
    let issued = Monitor<Set<UInt64>>([])
    let plugins = Monitor<[CPlugin]>([])

    init(callback: DeliveryCallback) {
        host = PluginHost(label: "cx.c-host") { delivery in
            switch delivery {
            case .response(let id, let response):
                callback.response(id.rawValue, ok: response.ok, output: response.output)
            case .item(let key, let response): callback.item(key, ok: response.ok, output: response.output)
            case .end(let key): callback.end(key)
            }
        }
    }

    func issue(_ entry: HandleEntry) -> OpaquePointer {
        let handle = handles.insert(entry)
        issued.withLock { _ = $0.insert(HandleTable.id(handle)) }
        return handle
    }

    /// Shuts down, then releases the plugins and every handle issued for them.
    func destroy() {
        host.shutdown()
        handles.remove(ids: issued.withLock { $0 })
        for plugin in plugins.withLock({ $0 }) { plugin.release() }
        plugins.withLock { $0.removeAll() }
    }

    static func from(_ handle: OpaquePointer?) throws(CXFailure) -> CHost {
        guard handle != nil else { throw CXFailure(CX_ERR_NULL) }
        guard case .host(let host)? = handles.entry(handle) else { throw CXFailure(CX_ERR_BAD_HANDLE) }
        return host
    }
}

/// A call's reply handle.
final class CReply: Sendable {
    let reply: Reply
    init(_ reply: Reply) { self.reply = reply }
}

/// A stream's emitter handle.
final class CEmitter: Sendable {
    let emitter: StreamEmitter
    init(_ emitter: StreamEmitter) { self.emitter = emitter }
}
