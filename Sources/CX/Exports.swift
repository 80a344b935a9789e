import CArguments
import CCX
import CXHost
import Foundation

// The functions cx.h declares, exported with C names. Each checks its arguments,
// maps them to the Swift host, and answers with a status; none traps.

@_cdecl("cx_host_create")
public func cxHostCreate(
    _ deliver: cx_delivery_fn?, _ context: UnsafeMutableRawPointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> cx_status {
    status { () throws(CXFailure) in
        guard let deliver, let out else { throw CXFailure(CX_ERR_NULL) }
        out.pointee = handles.insert(.host(CHost(callback: DeliveryCallback(function: deliver, context: context))))
    }
}

@_cdecl("cx_call")
public func cxCall(
    _ handle: OpaquePointer?, _ requestID: UInt64, _ plugin: UnsafePointer<CChar>?, _ pluginLength: Int,
    _ op: UnsafePointer<CChar>?, _ opLength: Int, _ input: UnsafePointer<CChar>?, _ inputLength: Int
) -> cx_status {
    status { () throws(CXFailure) in
        let host = try CHost.from(handle)
        let plugin = try text(plugin, pluginLength).get()
        let op = try text(op, opLength).get()
        let input = try text(input, inputLength).get()
        // The status is the answer after shutdown (cx.h), so no delivery follows.
        if host.host.isShutDown { throw CXFailure(CX_ERR_SHUT_DOWN) }
        do throws(HostError) {
            try host.host.call(plugin, op, input: input, id: CallID(rawValue: requestID))
        } catch {
            throw CXFailure(error)
        }
    }
}

@_cdecl("cx_notify")
public func cxNotify(
    _ handle: OpaquePointer?, _ plugin: UnsafePointer<CChar>?, _ pluginLength: Int, _ op: UnsafePointer<CChar>?,
    _ opLength: Int, _ input: UnsafePointer<CChar>?, _ inputLength: Int
) -> cx_status {
    status { () throws(CXFailure) in
        let host = try CHost.from(handle)
        let plugin = try text(plugin, pluginLength).get()
        let op = try text(op, opLength).get()
        let input = try text(input, inputLength).get()
        if host.host.isShutDown { throw CXFailure(CX_ERR_SHUT_DOWN) }
        do throws(HostError) { try host.host.notify(plugin, op, input: input) } catch { throw CXFailure(error) }
    }
}

@_cdecl("cx_subscribe")
public func cxSubscribe(
    _ handle: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ keyLength: Int, _ plugin: UnsafePointer<CChar>?,
    _ pluginLength: Int, _ stream: UnsafePointer<CChar>?, _ streamLength: Int, _ input: UnsafePointer<CChar>?,
    _ inputLength: Int
) -> cx_status {
    status { () throws(CXFailure) in
        let host = try CHost.from(handle)
        let key = try text(key, keyLength).get()
        let plugin = try text(plugin, pluginLength).get()
        let stream = try text(stream, streamLength).get()
        let input = try text(input, inputLength).get()
        do throws(HostError) {
            try host.host.subscribe(key: key, plugin: plugin, stream: stream, input: input)
        } catch {
            throw CXFailure(error)
        }
    }
}

@_cdecl("cx_unsubscribe")
public func cxUnsubscribe(_ handle: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ keyLength: Int) -> cx_status {
    status { () throws(CXFailure) in
        let host = try CHost.from(handle)
        let key = try text(key, keyLength).get()
        if !host.host.unsubscribe(existingKey: key) { throw CXFailure(CX_UNKNOWN_KEY) }
    }
}

@_cdecl("cx_wait_idle")
public func cxWaitIdle(_ handle: OpaquePointer?) -> cx_status {
    status { () throws(CXFailure) in
        let host = try CHost.from(handle)
        do throws(HostError) { try host.host.waitUntilIdle() } catch { throw CXFailure(error) }
    }
}

@_cdecl("cx_host_shutdown")
public func cxHostShutdown(_ handle: OpaquePointer?) -> cx_status {
    status { () throws(CXFailure) in
        let host = try CHost.from(handle)
        do throws(HostError) { try host.host.shutdown() } catch { throw CXFailure(error) }
    }
}

@_cdecl("cx_host_destroy")
public func cxHostDestroy(_ handle: OpaquePointer?) -> cx_status {
    status { () throws(CXFailure) in
        let host = try CHost.from(handle)
        // From the delivery callback or a plugin the host cannot finish its own work.
        do throws(HostError) { try host.host.waitUntilIdle() } catch { throw CXFailure(error) }
        handles.remove(handle)
        host.destroy()
    }
}

@_cdecl("cx_register_plugin")
public func cxRegisterPlugin(
    _ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ nameLength: Int, _ ops: UnsafePointer<cx_str>?,
    _ opCount: Int, _ streams: UnsafePointer<cx_str>?, _ streamCount: Int, _ plugin: UnsafePointer<cx_plugin>?
) -> cx_status {
    status { () throws(CXFailure) in
        let host = try CHost.from(handle)
        guard let plugin else { throw CXFailure(CX_ERR_NULL) }
        let name = try text(name, nameLength).get()
        guard !name.isEmpty else { throw CXFailure(CX_ERR_INVALID_ARGUMENT) }
        let descriptor = PluginDescriptor(
            name: name, ops: try names(ops, opCount), streams: try names(streams, streamCount))
        let wrapper = CPlugin(descriptor: descriptor, table: plugin.pointee, owner: host)
        do throws(HostError) {
            try host.host.register(wrapper)
        } catch {
            throw CXFailure(error)
        }
        host.plugins.withLock { $0.append(wrapper) }
    }
}

private func names(_ list: UnsafePointer<cx_str>?, _ count: Int) throws(CXFailure) -> [String] {
    guard count >= 0 else { throw CXFailure(CX_ERR_INVALID_ARGUMENT) }
    guard count > 0 else { return [] }
    guard let list else { throw CXFailure(CX_ERR_INVALID_ARGUMENT) }
    var result: [String] = []
    for index in 0..<count {
        result.append(try text(list[index].ptr, list[index].len).get())
    }
    return result
}

@_cdecl("cx_reply_send")
public func cxReplySend(
    _ handle: OpaquePointer?, _ ok: Bool, _ output: UnsafePointer<CChar>?, _ outputLength: Int
) -> cx_status {
    status { () throws(CXFailure) in
        guard handle != nil else { throw CXFailure(CX_ERR_NULL) }
        guard case .reply(let reply)? = handles.entry(handle) else { throw CXFailure(CX_ERR_BAD_HANDLE) }
        reply.owner.release(handle)
        let output = try text(output, outputLength).get()
        if !reply.reply.respond(PluginResponse(ok: ok, output: output)) { throw CXFailure(CX_ERR_ALREADY_ANSWERED) }
    }
}

private func emitter(_ handle: OpaquePointer?) throws(CXFailure) -> CEmitter {
    guard handle != nil else { throw CXFailure(CX_ERR_NULL) }
    guard case .emitter(let emitter)? = handles.entry(handle) else { throw CXFailure(CX_ERR_BAD_HANDLE) }
    return emitter
}

@_cdecl("cx_emit")
public func cxEmit(
    _ handle: OpaquePointer?, _ ok: Bool, _ output: UnsafePointer<CChar>?, _ outputLength: Int
) -> cx_status {
    status { () throws(CXFailure) in
        let emitter = try emitter(handle).emitter
        let output = try text(output, outputLength).get()
        if !emitter.emit(PluginResponse(ok: ok, output: output)) { throw CXFailure(CX_ERR_INACTIVE) }
    }
}

@_cdecl("cx_end")
public func cxEnd(_ handle: OpaquePointer?) -> cx_status {
    status { () throws(CXFailure) in
        if !(try emitter(handle).emitter.end()) { throw CXFailure(CX_ERR_INACTIVE) }
    }
}

@_cdecl("cx_emitter_release")
public func cxEmitterRelease(_ handle: OpaquePointer?) -> cx_status {
    status { () throws(CXFailure) in
        try emitter(handle).owner.release(handle)
    }
}

@_cdecl("cx_abi_version")
public func cxABIVersion() -> UInt32 {
    UInt32(CX_ABI_VERSION)
}

/// Names live in static storage (string literals), as cx.h promises.
@_cdecl("cx_status_name")
public func cxStatusName(_ status: cx_status) -> UnsafePointer<CChar> {
    let name: StaticString =
        switch status {
        case CX_OK: "CX_OK"
        case CX_ERR_NULL: "CX_ERR_NULL"
        case CX_ERR_UTF8: "CX_ERR_UTF8"
        case CX_ERR_BAD_HANDLE: "CX_ERR_BAD_HANDLE"
        case CX_ERR_SHUT_DOWN: "CX_ERR_SHUT_DOWN"
        case CX_ERR_DUPLICATE_ID: "CX_ERR_DUPLICATE_ID"
        case CX_ERR_DUPLICATE_PLUGIN: "CX_ERR_DUPLICATE_PLUGIN"
        case CX_ERR_IN_CALLBACK: "CX_ERR_IN_CALLBACK"
        case CX_ERR_ALREADY_ANSWERED: "CX_ERR_ALREADY_ANSWERED"
        case CX_ERR_INACTIVE: "CX_ERR_INACTIVE"
        case CX_UNKNOWN_KEY: "CX_UNKNOWN_KEY"
        case CX_ERR_INVALID_ARGUMENT: "CX_ERR_INVALID_ARGUMENT"
        case CX_ERR_IN_PLUGIN: "CX_ERR_IN_PLUGIN"
        default: "CX_UNKNOWN_STATUS"
        }
    return UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self)
}

@_cdecl("cx_free")
public func cxFree(_ pointer: UnsafeMutableRawPointer?) {
    free(pointer)
}
