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

@_cdecl("cx_device_create")
public func cxDeviceCreate(
    _ deliver: cx_delivery_fn?, _ context: UnsafeMutableRawPointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> cx_status {
    status { () throws(CXFailure) in
        guard let deliver, let out else { throw CXFailure(CX_ERR_NULL) }
        out.pointee = handles.insert(.device(CDevice(callback: DeliveryCallback(function: deliver, context: context))))
    }
}

@_cdecl("cx_device_request")
public func cxDeviceRequest(
    _ handle: OpaquePointer?, _ line: UnsafePointer<CChar>?, _ lineLength: Int,
    _ reply: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ replyLength: UnsafeMutablePointer<Int>?
) -> cx_status {
    status { () throws(CXFailure) in
        guard let reply, let replyLength else { throw CXFailure(CX_ERR_NULL) }
        let device = try CDevice.from(handle)
        guard lineLength >= 0 else { throw CXFailure(CX_ERR_INVALID_ARGUMENT) }
        guard line != nil || lineLength == 0 else { throw CXFailure(CX_ERR_NULL) }
        if CDevice.isOnDeliveryThread { throw CXFailure(CX_ERR_IN_CALLBACK) }
        // The line goes to the protocol as bytes: a line that is not UTF-8 gets the
        // protocol's own ok:false reply rather than a status.
        let answer = device.request(UnsafeRawBufferPointer(start: line, count: lineLength))
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
        _ = try CDevice.from(handle)
        if CDevice.isOnDeliveryThread { throw CXFailure(CX_ERR_IN_CALLBACK) }
        handles.remove(handle)
    }
}

@_cdecl("cx_free")
public func cxFree(_ pointer: UnsafeMutableRawPointer?) {
    free(pointer)
}
