import CXHost
import Testing

@Suite struct ShutdownTests {
    @Test func H_8_shutdownAnswersPendingCallsAndStopsStreamsWithoutEnds() throws {
        let plugin = ScriptedPlugin(name: "p", ops: ["wait"], streams: ["s"])
        let holding = ScriptedPlugin(name: "h", ops: ["wait"], onCall: { _, _, reply in plugin.hold(reply) })
        let (host, recorder) = try makeHost([plugin, holding])
        try host.subscribe(key: "k", plugin: "p", stream: "s")
        let id = try host.call("h", "wait")
        host.waitUntilIdle()
        host.shutdown()
        #expect(
            recorder.all == [
                .response(id, .failure("the host was shut down before plugin 'h' answered 'wait'"))
            ])
        #expect(plugin.stopped.withLock { $0 } == ["k"])
        // A late answer and a late emission go nowhere.
        let reply = plugin.heldReplies.withLock { $0.first }
        #expect(reply?.succeed("late") == false)
        #expect(plugin.emitters.withLock { $0.first }?.emit("late") == false)
        host.waitUntilIdle()
        #expect(recorder.all.count == 1)
    }

    @Test func H_8_requestsAfterShutdownAreAnsweredAtOnce() throws {
        let (host, recorder) = try makeHost()
        host.shutdown()
        #expect(throws: HostError.shutDown) { try host.call("echo", "echo", input: "x") }
        #expect(throws: HostError.shutDown) { try host.notify("echo", "echo") }
        #expect(throws: HostError.shutDown) { try host.subscribe(key: "k", plugin: "echo", stream: "echoes") }
        #expect(throws: HostError.shutDown) { try host.register(ScriptedPlugin(name: "late")) }
        host.unsubscribe(key: "k")
        host.shutdown()
        #expect(recorder.all.isEmpty)
    }

    @Test func H_8_shutdownFromTheHandlerDeliversTheFinalAnswersThenNothing() throws {
        let holder = ScriptedPlugin(name: "h", ops: ["wait", "now"])
        let plugin = ScriptedPlugin(
            name: "p", ops: ["wait"], onCall: { _, _, reply in holder.hold(reply) })
        let recorder = Recorder()
        let box = HostBox()
        let host = PluginHost { delivery in
            recorder.record(delivery)
            if case .response(_, .success("stop")) = delivery { box.host?.shutdown() }
        }
        box.host = host
        try host.register(plugin)
        try host.register(holder)
        let pending = try host.call("p", "wait")
        try host.call("h", "now", input: "stop")
        host.waitUntilIdle()
        #expect(recorder.all.count == 2)
        #expect(
            recorder.all.last
                == .response(pending, .failure("the host was shut down before plugin 'p' answered 'wait'")))
    }

    @Test func H_8_streamsThePluginEndsAfterShutdownDeliverNothing() throws {
        let (host, recorder) = try makeHost()
        try host.subscribe(key: "e", plugin: "echo", stream: "echoes")
        host.shutdown()
        host.waitUntilIdle()
        #expect(recorder.all.isEmpty)
    }
}
