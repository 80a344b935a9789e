import Foundation
import Synchronization
import Testing

@testable import CXHost

@Suite struct StreamTests {
    @Test func H_3_itemsArriveInEmissionOrderThenOneEnd() throws {
        let (host, recorder) = try makeHost()
        try host.subscribe(key: "c", plugin: "echo", stream: "count", input: "5")
        try host.waitUntilIdle()
        #expect(recorder.items("c").map(\.output) == ["1", "2", "3", "4", "5"])
        #expect(recorder.all.last == .end(key: "c"))
        #expect(recorder.ends("c") == 1)
    }

    @Test func H_3_unknownStreamGetsOneFailureItemAndAnEnd() throws {
        let (host, recorder) = try makeHost()
        try host.subscribe(key: "k", plugin: "echo", stream: "evnts")
        try host.waitUntilIdle()
        #expect(
            recorder.all == [
                .item(key: "k", .failure("echo has no stream 'evnts'; it has: count, echoes")), .end(key: "k"),
            ])
    }

    @Test func H_3_unknownPluginSubscribeGetsOneFailureItemAndAnEnd() throws {
        let (host, recorder) = try makeHost()
        try host.subscribe(key: "k", plugin: "gps", stream: "fixes")
        try host.waitUntilIdle()
        #expect(
            recorder.all == [
                .item(key: "k", .failure("plugin 'gps' is not available (available: echo)")), .end(key: "k"),
            ])
    }

    @Test func H_3_aStreamThatFailsToStartFailsAndEnds() throws {
        let (host, recorder) = try makeHost()
        try host.subscribe(key: "c", plugin: "echo", stream: "count", input: "many")
        try host.waitUntilIdle()
        #expect(
            recorder.all == [
                .item(
                    key: "c",
                    .failure(
                        "plugin 'echo' failed to start 'count': count needs a whole number from 0 to 10000, got 'many'")
                ),
                .end(key: "c"),
            ])
    }

    @Test func H_4_subscribingWithAKeyInUseStopsTheOldStreamFirst() throws {
        let plugin = ScriptedPlugin(name: "p", streams: ["s"])
        let (host, recorder) = try makeHost([plugin])
        try host.subscribe(key: "k", plugin: "p", stream: "s", input: "old")
        let old = try #require(plugin.emitters.withLock { $0.first })
        try host.subscribe(key: "k", plugin: "p", stream: "s", input: "new")
        let new = try #require(plugin.emitters.withLock { $0.last })
        // The old stream is stopped before the new one starts.
        #expect(plugin.log.withLock { $0 } == ["start k:old", "started k", "stop k", "start k:new", "started k"])
        #expect(!old.isActive && new.isActive)
        #expect(!old.emit("stale"))
        #expect(new.emit("fresh"))
        try host.waitUntilIdle()
        // The core caused the old stream's end: no end delivery for it.
        #expect(recorder.all == [.item(key: "k", .success("fresh"))])
    }

    @Test func H_4_itemsQueuedBeforeAReplacementAreNotDelivered() throws {
        let gate = Gate()
        let plugin = ScriptedPlugin(name: "p", streams: ["s"])
        let recorder = Recorder()
        let box = HostBox()
        let host = PluginHost { delivery in
            recorder.record(delivery)
            if delivery == .item(key: "block", .success("x")) { gate.wait() }
        }
        box.host = host
        try host.register(plugin)
        try host.subscribe(key: "block", plugin: "p", stream: "s")
        try host.subscribe(key: "k", plugin: "p", stream: "s")
        let (blocker, old) = plugin.emitters.withLock { ($0[0], $0[1]) }
        blocker.emit("x")  // holds the delivery thread until the gate opens
        old.emit("queued before replacement")
        try host.subscribe(key: "k", plugin: "p", stream: "s")
        gate.open()
        try host.waitUntilIdle()
        #expect(recorder.items("k").isEmpty)
    }

    @Test func H_4_subscribedKeysFollowSubscribeUnsubscribeAndPluginEnds() throws {
        let (host, _) = try makeHost()
        try host.subscribe(key: "a", plugin: "echo", stream: "echoes")
        try host.subscribe(key: "b", plugin: "echo", stream: "echoes")
        try host.subscribe(key: "c", plugin: "echo", stream: "count", input: "1")
        try host.waitUntilIdle()
        #expect(host.subscribedKeys == ["a", "b"])  // c ended by the plugin, its end delivered
        host.unsubscribe(key: "a")
        try host.subscribe(key: "a", plugin: "echo", stream: "echoes")
        #expect(host.subscribedKeys == ["b", "a"])
        try host.shutdown()
        #expect(host.subscribedKeys.isEmpty)
    }

    @Test func H_4_unsubscribingAnUnknownKeyIsANoOp() throws {
        let (host, recorder) = try makeHost()
        host.unsubscribe(key: "never")
        try host.call("echo", "echo", input: "fine")
        try host.waitUntilIdle()
        #expect(recorder.responses() == [.success("fine")])
    }

    @Test func H_4_nothingIsDeliveredAfterUnsubscribeReturns() throws {
        let plugin = ScriptedPlugin(name: "p", streams: ["s"])
        let (host, recorder) = try makeHost([plugin])
        try host.subscribe(key: "k", plugin: "p", stream: "s")
        let emitter = try #require(plugin.emitters.withLock { $0.first })
        emitter.emit("before")
        host.unsubscribe(key: "k")
        #expect(!emitter.emit("after"))
        #expect(!emitter.end())
        try host.waitUntilIdle()
        #expect(recorder.all.allSatisfy { $0 != .item(key: "k", .success("after")) })
        #expect(recorder.ends("k") == 0)
        #expect(plugin.stopped.withLock { $0 } == ["k"])
    }

    /// The core's handler is stuck in a delivery on "k" when another thread
    /// unsubscribes "k". The hook opens the handler's gate only once the unsubscriber
    /// is about to wait; an unsubscribe that did not wait would return with the item
    /// still unrecorded, and the count it saw would differ from the final one.
    @Test func H_4_unsubscribeWaitsOutADeliveryTheCoreIsHandling() throws {
        try expectWaitsOutDelivery { host in host.unsubscribe(key: "k") }
    }

    @Test func H_4_replacingAKeyWaitsOutADeliveryOfTheOldStream() throws {
        try expectWaitsOutDelivery { host in try? host.subscribe(key: "k", plugin: "p", stream: "s", input: "new") }
    }

    /// A host with plugin "p" (stream "s") whose handler, given `stuck`, opens
    /// `inHandler` and stays there until `release` opens; it records every delivery.
    func stuckHandler(on stuck: Delivery) throws -> (
        inHandler: Gate, release: Gate, plugin: ScriptedPlugin, recorder: Recorder, host: PluginHost
    ) {
        let (inHandler, release, recorder) = (Gate(), Gate(), Recorder())
        let plugin = ScriptedPlugin(name: "p", streams: ["s"])
        let host = PluginHost { delivery in
            if delivery == stuck {
                inHandler.open()
                release.wait()
            }
            recorder.record(delivery)
        }
        try host.register(plugin)
        return (inHandler, release, plugin, recorder, host)
    }

    func expectWaitsOutDelivery(_ end: @escaping @Sendable (PluginHost) -> Void) throws {
        let (inHandler, release, plugin, recorder, host) = try stuckHandler(on: .item(key: "k", .success("held")))
        host.hooks.beforeWaitingOutDelivery = { _ in release.open() }
        try host.subscribe(key: "k", plugin: "p", stream: "s", input: "old")
        let emitter = try #require(plugin.emitters.withLock { $0.first })
        emitter.emit("held")
        inHandler.wait()
        let seenAtReturn = Monitor(-1)
        spawn {
            end(host)
            seenAtReturn.withLock { $0 = recorder.all.count }
            release.open()  // a broken host never reached the hook
        }.wait()
        try host.waitUntilIdle()
        #expect(seenAtReturn.withLock { $0 } == 1)
        #expect(recorder.all == [.item(key: "k", .success("held"))])
    }

    /// A drain admits deliveries in rounds and makes them outside the lock. The core's
    /// handler is stuck on the first of three items on "k", all in one round (queued
    /// under a hold, then drained by one waiter), when another thread unsubscribes
    /// "k". The unsubscribe waits out the item in the core's hands, and the round's
    /// later items on "k" are not made: the handler sees only the first.
    @Test func H_4_anUnsubscribeDuringARoundDropsItsLaterItemsOnTheKey() throws {
        let (inHandler, release, plugin, recorder, host) = try stuckHandler(on: .item(key: "k", .success("held")))
        host.hooks.beforeWaitingOutDelivery = { _ in release.open() }
        try host.subscribe(key: "k", plugin: "p", stream: "s")
        try host.subscribe(key: "other", plugin: "p", stream: "s")
        let (emitter, other) = plugin.emitters.withLock { ($0[0], $0[1]) }
        host.holdDeliveries()
        for output in ["held", "later", "last"] { emitter.emit(output) }
        other.emit("unaffected")
        let drained = spawn { try? host.waitUntilIdle() }
        inHandler.wait()
        host.unsubscribe(key: "k")
        let seenAtReturn = recorder.all
        host.releaseDeliveries()
        drained.wait()
        try host.waitUntilIdle()
        #expect(seenAtReturn.first == .item(key: "k", .success("held")))
        #expect(recorder.all == [.item(key: "k", .success("held")), .item(key: "other", .success("unaffected"))])
    }

    /// The core's handler is stuck on "block" when another thread unsubscribes "k",
    /// whose item waits behind it in the same round. The unsubscribe returns without
    /// waiting for "block" (a core may stay stuck until it returns), and the item on
    /// "k" is not made. A host that waited would fail this after 60 s, not hang.
    @Test func H_4_anUnsubscribeWaitsOnlyForADeliveryOnItsOwnKey() throws {
        let (inHandler, release, plugin, recorder, host) = try stuckHandler(on: .item(key: "block", .success("x")))
        try host.subscribe(key: "block", plugin: "p", stream: "s")
        try host.subscribe(key: "k", plugin: "p", stream: "s")
        let (blocker, emitter) = plugin.emitters.withLock { ($0[0], $0[1]) }
        host.holdDeliveries()
        blocker.emit("x")
        emitter.emit("queued")
        let drained = spawn { try? host.waitUntilIdle() }
        inHandler.wait()
        let unsubscribed = DispatchSemaphore(value: 0)
        spawn {
            host.unsubscribe(key: "k")
            unsubscribed.signal()
        }
        let returned = unsubscribed.wait(timeout: .now() + 60) == .success
        release.open()
        drained.wait()
        host.releaseDeliveries()
        #expect(returned)
        #expect(recorder.all == [.item(key: "block", .success("x"))])
    }

    /// 150 deliveries queued before any drain (more than one round), on two keys, with
    /// "a"'s end among them: all are made, in emission order, the end after a's items.
    @Test func H_3_aLongQueueWithAnEndInItIsDeliveredInOrder() throws {
        let plugin = ScriptedPlugin(name: "p", streams: ["s"])
        let (host, recorder) = try makeHost([plugin])
        try host.subscribe(key: "a", plugin: "p", stream: "s")
        try host.subscribe(key: "b", plugin: "p", stream: "s")
        let (a, b) = plugin.emitters.withLock { ($0[0], $0[1]) }
        var expected: [Delivery] = []
        host.holdDeliveries()
        for index in 0..<150 {
            if index == 100 {
                #expect(a.end())
                expected.append(.end(key: "a"))
            }
            let (emitter, key) = index.isMultiple(of: 2) && index < 100 ? (a, "a") : (b, "b")
            #expect(emitter.emit("\(index)"))
            expected.append(.item(key: key, .success("\(index)")))
        }
        try host.waitUntilIdle()
        host.releaseDeliveries()
        #expect(recorder.all == expected)
        #expect(host.subscribedKeys == ["b"])
    }

    /// The core unsubscribes after the stream went live and before the plugin's
    /// `startStream` ran (the hook puts the unsubscribe exactly there). The plugin must
    /// hear `stopStream` after its start returned, never before.
    @Test func H_4_aStopNeverPrecedesItsStart() throws {
        let emitted = Monitor<Bool?>(nil)
        let plugin = ScriptedPlugin(
            name: "p", streams: ["s"],
            onStart: { _, _, emitter in emitted.withLock { $0 = emitter.emit("too late") } })
        let (host, recorder) = try makeHost([plugin])
        host.hooks.beforeStartStream = { [weak host] key in host?.unsubscribe(key: key) }
        try host.subscribe(key: "k", plugin: "p", stream: "s", input: "x")
        try host.waitUntilIdle()
        #expect(plugin.log.withLock { $0 } == ["start k:x", "started k", "stop k"])
        #expect(emitted.withLock { $0 } == false)
        #expect(recorder.all.isEmpty)
        #expect(host.subscribedKeys.isEmpty)
    }

    @Test func H_8_aStreamStartingDuringShutdownIsStoppedAfterItsStart() throws {
        let plugin = ScriptedPlugin(name: "p", streams: ["s"])
        let (host, recorder) = try makeHost([plugin])
        let shutdownDone = Monitor<Gate?>(nil)
        host.hooks.beforeStartStream = { [weak host] _ in
            guard let host else { return }
            // Shutdown runs on its own thread up to its wait for this invocation.
            shutdownDone.withLock { $0 = spawn { #expect(throws: Never.self) { try host.shutdown() } } }
            while !host.isShutDown { sched_yield() }
        }
        try host.subscribe(key: "k", plugin: "p", stream: "s", input: "x")
        try #require(shutdownDone.withLock { $0 }).wait()
        #expect(plugin.log.withLock { $0 } == ["start k:x", "started k", "stop k"])
        #expect(recorder.all.isEmpty)
    }

    @Test func H_4_aPluginCausedEndIsDeliveredExactlyOnce() throws {
        let plugin = ScriptedPlugin(name: "p", streams: ["s"])
        let (host, recorder) = try makeHost([plugin])
        try host.subscribe(key: "k", plugin: "p", stream: "s")
        let emitter = try #require(plugin.emitters.withLock { $0.first })
        #expect(emitter.emit("last"))
        #expect(emitter.end())
        #expect(!emitter.end())
        #expect(!emitter.emit("too late"))
        try host.waitUntilIdle()
        #expect(recorder.all == [.item(key: "k", .success("last")), .end(key: "k")])
        // The plugin ended it: unsubscribing afterwards does not stop it again.
        host.unsubscribe(key: "k")
        #expect(plugin.stopped.withLock { $0 }.isEmpty)
    }

    @Test func H_4_aPluginEndQueuedBeforeAResubscribeIsNotDeliveredToTheNewStream() throws {
        let gate = Gate()
        let plugin = ScriptedPlugin(name: "p", streams: ["s"])
        let recorder = Recorder()
        let host = PluginHost { delivery in
            recorder.record(delivery)
            if delivery == .item(key: "block", .success("x")) { gate.wait() }
        }
        try host.register(plugin)
        try host.subscribe(key: "block", plugin: "p", stream: "s")
        try host.subscribe(key: "k", plugin: "p", stream: "s")
        let (blocker, first) = plugin.emitters.withLock { ($0[0], $0[1]) }
        blocker.emit("x")
        first.end()
        try host.subscribe(key: "k", plugin: "p", stream: "s")
        gate.open()
        try host.waitUntilIdle()
        #expect(recorder.ends("k") == 0)
        let second = try #require(plugin.emitters.withLock { $0.last })
        #expect(second.isActive)
    }

    @Test func H_5_theHandlerIsNeverCalledConcurrently() throws {
        let inside = Atomic<Int>(0)
        let most = Atomic<Int>(0)
        let count = Atomic<Int>(0)
        let host = PluginHost { _ in
            let now = inside.add(1, ordering: .sequentiallyConsistent).newValue
            _ = most.max(now, ordering: .sequentiallyConsistent)
            count.add(1, ordering: .relaxed)
            inside.subtract(1, ordering: .sequentiallyConsistent)
        }
        try host.register(TestPlugins.echo())
        let threads = (0..<8).map { index in
            spawn { for call in 0..<500 { _ = try? host.call("echo", "echo", input: "\(index)-\(call)") } }
        }
        for thread in threads { thread.wait() }
        try host.waitUntilIdle()
        #expect(count.load(ordering: .relaxed) == 4000)
        #expect(most.load(ordering: .relaxed) == 1)
    }

    @Test func H_5_itemsOfOneKeyArriveInEmissionOrderAcrossKeys() throws {
        let plugin = ScriptedPlugin(name: "p", streams: ["s"])
        let (host, recorder) = try makeHost([plugin])
        for key in ["a", "b", "c"] { try host.subscribe(key: key, plugin: "p", stream: "s") }
        let emitters = plugin.emitters.withLock { $0 }
        let threads = emitters.map { emitter in
            spawn { for index in 0..<1000 { emitter.emit(String(index)) } }
        }
        for thread in threads { thread.wait() }
        try host.waitUntilIdle()
        for key in ["a", "b", "c"] {
            #expect(recorder.items(key).map(\.output) == (0..<1000).map(String.init))
        }
    }

    @Test func H_6_theSameInputsGiveTheSameOutputs() throws {
        // H-6 holds for a driver that waits for idle between inputs, as the shell does.
        func transcript() throws -> [Delivery] {
            let (host, recorder) = try makeHost()
            let steps: [() throws -> Void] = [
                { try host.subscribe(key: "e", plugin: "echo", stream: "echoes") },
                { try host.subscribe(key: "c", plugin: "echo", stream: "count", input: "3") },
                { try host.call("echo", "echo", input: "x") },
                { try host.call("nope", "x") },
                { try host.subscribe(key: "e", plugin: "echo", stream: "count", input: "2") },
                { host.unsubscribe(key: "c") },
                { try host.call("echo", "echo", input: "y") },
            ]
            for step in steps {
                try step()
                try host.waitUntilIdle()
            }
            return recorder.all
        }
        let first = try transcript()
        #expect(first.count == 11)
        for _ in 0..<10 { #expect(try transcript() == first) }
    }
}

/// A one-shot latch for tests: `wait` blocks until `open`.
final class Gate: Sendable {
    private let condition = NSCondition()
    private let isOpen = Monitor(false)

    func open() {
        condition.lock()
        isOpen.withLock { $0 = true }
        condition.broadcast()
        condition.unlock()
    }

    func wait() {
        condition.lock()
        while !isOpen.withLock({ $0 }) { condition.wait() }
        condition.unlock()
    }
}
