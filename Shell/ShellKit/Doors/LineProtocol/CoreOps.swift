import OrderedJSON

/// The ops the shell makes as the app core: calls, notifies and keyed streams on the
/// running app's host (`../shared/spec/host.md`).
extension LineProtocol {
    func call(_ request: Request, _ reply: inout JSONObject) throws {
        let device = try target(request)
        let host = try runningHost(device)
        let plugin = try request.string("plugin")
        let method = try request.string("method")
        let id = try host.call(plugin, method, input: try request.optionalString("input") ?? "")
        try host.waitUntilIdle()
        guard let answer = world.endpoint.takeAnswer(id, from: device.id) else {
            throw request.invalid(
                "plugin '\(plugin)' has not answered '\(method)' yet; the shell waits only until the host is idle")
        }
        reply["ok"] = .bool(answer.ok)
        reply["output"] = .string(answer.output)
    }

    func notify(_ request: Request, _ reply: inout JSONObject) throws {
        let host = try runningHost(try target(request))
        let plugin = try request.string("plugin")
        let method = try request.string("method")
        try host.notify(plugin, method, input: try request.optionalString("input") ?? "")
    }

    func subscribe(_ request: Request, _ reply: inout JSONObject) throws {
        let host = try runningHost(try target(request))
        let key = try request.string("key")
        let plugin = try request.string("plugin")
        let stream = try request.string("stream")
        let input = try request.optionalString("input") ?? ""
        try host.subscribe(key: key, plugin: plugin, stream: stream, input: input)
    }

    func unsubscribe(_ request: Request, _ reply: inout JSONObject) throws {
        let host = try runningHost(try target(request))
        host.unsubscribe(key: try request.string("key"))
    }
}
