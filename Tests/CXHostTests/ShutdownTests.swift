import CXHost
import Testing

@Suite struct ShutdownTests {
    @Test func H_8_shutdownAnswersPendingCallsAndStopsStreamsWithoutEnds() throws {
        let plugin = ScriptedPlugin(name: "p", ops: ["wait"], streams: ["s"])
        let holding = ScriptedPlugin(name: "h", ops: ["wait"], onCall: { _, _, reply in plugin.hold(reply) })
        let (host, recorder) = try makeHost([plugin, holding])
        try host.subscribe(key: "k", plugin: "p", stream: "s")
        let id = try host.call("h", "wait")
        try host.waitUntilIdle()
        try host.shutdown()
        #expect(
            recorder.all == [
                .response(id, .failure("the host was shut down before plugin 'h' answered 'wait'"))
            ])
        #expect(plugin.stopped.withLock { $0 } == ["k"])
        // A late answer and a late emission go nowhere.
        let reply = plugin.heldReplies.withLock { $0.first }
        #expect(reply?.succeed("late") == false)
        #expect(plugin.emitters.withLock { $0.first }?.emit("late") == false)
        try host.waitUntilIdle()
        #expect(recorder.all.count == 1)
    }

    @Test func H_1_H_8_aCallAfterShutdownIsAnsweredOkFalseWithASentence() throws {
        let (host, recorder) = try makeHost()
        try host.shutdown()
        let id = try host.call("echo", "echo", input: "x")
        try host.notify("echo", "echo")
        try host.waitUntilIdle()
        #expect(
            recorder.all == [
                .response(id, .failure("the host was shut down; plugin 'echo' was not asked to 'echo'"))
            ])
        #expect(throws: HostError.shutDown) { try host.subscribe(key: "k", plugin: "echo", stream: "echoes") }
        #expect(throws: HostError.shutDown) { try host.register(ScriptedPlugin(name: "late")) }
        host.unsubscribe(key: "k")
        try host.shutdown()
        try host.waitUntilIdle()
        #expect(recorder.all.count == 1)
    }

    @Test func H_8_shutdownFromTheHandlerDeliversTheFinalAnswersThenNothing() throws {
        let holder = ScriptedPlugin(name: "h", ops: ["wait", "now"])
        let plugin = ScriptedPlugin(
            name: "p", ops: ["wait"], onCall: { _, _, reply in holder.hold(reply) })
        let recorder = Recorder()
        let box = HostBox()
        let host = PluginHost { delivery in
            recorder.record(delivery)
            if case .response(_, .success("stop")) = delivery {
                #expect(throws: Never.self) { try box.host?.shutdown() }
            }
        }
        box.host = host
        try host.register(plugin)
        try host.register(holder)
        let pending = try host.call("p", "wait")
        try host.call("h", "now", input: "stop")
        try host.waitUntilIdle()
        #expect(recorder.all.count == 2)
        #expect(
            recorder.all.last
                == .response(pending, .failure("the host was shut down before plugin 'p' answered 'wait'")))
    }

    @Test func H_8_streamsThePluginEndsAfterShutdownDeliverNothing() throws {
        let plugin = ScriptedPlugin(name: "p", streams: ["s"])
        let (host, recorder) = try makeHost([plugin])
        try host.subscribe(key: "e", plugin: "p", stream: "s")
        let emitter = try #require(plugin.emitters.withLock { $0.first })
        try host.shutdown()
        // The plugin emits and ends its stream after shutdown: nothing reaches the core.
        #expect(!emitter.emit("late"))
        #expect(!emitter.end())
        try host.waitUntilIdle()
        #expect(recorder.all.isEmpty)
        #expect(plugin.stopped.withLock { $0 } == ["e"])
    }

    /// Waiting for the host from inside its own plugin would wait for itself: each
    /// such request is refused with `inPlugin`, and the host goes on working.
    @Test func H_6_waitingOrShuttingDownFromInsideAPluginIsRefused() throws {
        let errors = Monitor<[HostError]>([])
        let box = HostBox()
        @Sendable func attempt(_ body: () throws(HostError) -> Void) {
            do { try body() } catch { errors.withLock { $0.append(error) } }
        }
        let plugin = ScriptedPlugin(
            name: "p", ops: ["wait", "stop"], streams: ["s"],
            onCall: { op, _, reply in
                attempt { () throws(HostError) in
                    if op == "wait" { try box.host?.waitUntilIdle() } else { try box.host?.shutdown() }
                }
                reply.succeed(op)
            },
            onStart: { _, _, _ in attempt { () throws(HostError) in try box.host?.waitUntilIdle() } })
        let (host, recorder) = try makeHost([plugin])
        box.host = host
        let wait = try host.call("p", "wait")
        let stop = try host.call("p", "stop")
        try host.subscribe(key: "k", plugin: "p", stream: "s")
        try host.waitUntilIdle()
        #expect(
            errors.withLock { $0 } == [
                .inPlugin("waitUntilIdle"), .inPlugin("shutdown"), .inPlugin("waitUntilIdle"),
            ])
        #expect(recorder.all == [.response(wait, .success("wait")), .response(stop, .success("stop"))])
        #expect(!host.isShutDown)
    }
}
