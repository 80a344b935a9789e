import CArguments
import CCX
import CXHost

/// A host created through `cx_host_create`, with the handles issued on its behalf.
final class CHost: Sendable {
    let host: PluginHost
    /// Reply and emitter handles issued for this host's plugins; released with it.
    let issued = Monitor<Set<UInt64>>([])
    let plugins = Monitor<[CPlugin]>([])

    /// A host the embedding process made itself (AdoptedHost): its deliveries stay that
    /// process's.
    init(adopting host: PluginHost) {
        self.host = host
    }

    init(callback: DeliveryCallback) {
        // cx.h promises the callback runs on the delivery thread, never on the thread
        // of a cx_* call: a waiting cx_wait_until_idle does not deliver itself.
        host = PluginHost(label: "cx.c-host", drainsOnWaitingThread: false) { delivery in
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
        issued.withLock { _ = $0.insert(HandleTable<HandleEntry>.id(handle)) }
        return handle
    }

    /// A handle issued for this host's plugins is done with (answered, released).
    func release(_ handle: OpaquePointer?) {
        guard let handle else { return }
        handles.remove(handle)
        issued.withLock { _ = $0.remove(HandleTable<HandleEntry>.id(handle)) }
    }

    /// Shuts down, then releases the plugins and every handle issued for them.
    /// Called after the caller checked it is not inside a plugin or the callback.
    func destroy() {
        try? host.shutdown()
        releasePlugins()
    }

    /// Releases the C plugins registered here (their `release` runs) and every handle
    /// issued for them; the names they were registered under.
    @discardableResult
    func releasePlugins() -> [String] {
        handles.remove(ids: issued.withLock { $0 })
        let released = plugins.withLock { plugins in
            defer { plugins.removeAll() }
            return plugins
        }
        for plugin in released { plugin.release() }
        return released.map(\.descriptor.name)
    }

    static func from(_ handle: OpaquePointer?) throws(CXFailure) -> CHost {
        guard handle != nil else { throw CXFailure(CX_ERR_NULL) }
        guard case .host(let host)? = handles.entry(handle) else { throw CXFailure(CX_ERR_BAD_HANDLE) }
        return host
    }
}

/// A call's reply handle. It holds the host that issued it, to be released there:
/// the host's own handle is removed from the table first on destroy, and the
/// reply handles with it, so this reference cannot keep a destroyed host reachable.
final class CReply: Sendable {
    let reply: Reply
    let owner: CHost
    init(_ reply: Reply, owner: CHost) {
        self.reply = reply
        self.owner = owner
    }
}

/// A stream's emitter handle, and the host that issued it.
final class CEmitter: Sendable {
    let emitter: StreamEmitter
    let owner: CHost
    init(_ emitter: StreamEmitter, owner: CHost) {
        self.emitter = emitter
        self.owner = owner
    }
}
