import EchoPlugin
import Foundation
import Synchronization
import Testing

@testable import CXHost

/// Which thread runs the core's handler: a Swift core that waits for idle gets its
/// deliveries on its own thread when no delivery is running (no thread handoff); a
/// host made with `drainsOnWaitingThread: false` (the C ABI's) never delivers on a
/// waiting thread. Either way, one delivery at a time (H-5).
@Suite struct DeliveryThreadTests {
    /// Records, for each delivery, whether it ran on the thread that asked.
    final class Threads: Sendable {
        let asker = Monitor<pthread_t?>(nil)
        let onAsker = Atomic<Int>(0)
        let elsewhere = Atomic<Int>(0)
        let running = Atomic<Int>(0)
        let overlapped = Atomic<Bool>(false)

        func delivered() {
            if running.add(1, ordering: .acquiring).newValue > 1 { overlapped.store(true, ordering: .relaxed) }
            let mine = asker.withLock { $0.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
            if mine { onAsker.add(1, ordering: .relaxed) } else { elsewhere.add(1, ordering: .relaxed) }
            running.subtract(1, ordering: .releasing)
        }
    }

    @Test func H_5_aWaitingThreadDeliversItselfWhileTheDeliveryThreadCannot() throws {
        let threads = Threads()
        threads.asker.withLock { $0 = pthread_self() }
        let host = PluginHost(drainsOnWaitingThread: true) { _ in threads.delivered() }
        try host.register(EchoPlugin())
        // The delivery thread is held: only the waiting thread can make the deliveries.
        let gate = DispatchSemaphore(value: 0)
        host.core.deliveryQueue.async { gate.wait() }
        for index in 0..<100 {
            try host.call("echo", "echo", input: "\(index)")
            try host.waitUntilIdle()
        }
        gate.signal()
        #expect(threads.onAsker.load(ordering: .relaxed) == 100)
        let overlapped = threads.overlapped.load(ordering: .relaxed)
        #expect(!overlapped)
    }

    @Test func H_5_theCABIsHostNeverDeliversOnAWaitingThread() throws {
        let threads = Threads()
        threads.asker.withLock { $0 = pthread_self() }
        let host = PluginHost(drainsOnWaitingThread: false) { _ in threads.delivered() }
        try host.register(EchoPlugin())
        for index in 0..<1_000 {
            try host.call("echo", "echo", input: "\(index)")
            try host.waitUntilIdle()
        }
        #expect(threads.onAsker.load(ordering: .relaxed) == 0)
        #expect(threads.elsewhere.load(ordering: .relaxed) == 1_000)
        let overlapped = threads.overlapped.load(ordering: .relaxed)
        #expect(!overlapped)
    }

    // MARK: Holds (PluginHost.holdDeliveries)

    /// An echo host whose deliveries `threads` sorts by thread, this one the asker's.
    func echoHost(recordingIn threads: Threads, drainsOnWaitingThread: Bool = true) throws -> PluginHost {
        threads.asker.withLock { $0 = pthread_self() }
        let host = PluginHost(drainsOnWaitingThread: drainsOnWaitingThread) { _ in threads.delivered() }
        try host.register(EchoPlugin())
        return host
    }

    @Test func heldDeliveriesWaitForTheWaiterInsteadOfWakingTheDeliveryThread() throws {
        let threads = Threads()
        let host = try echoHost(recordingIn: threads)
        host.holdDeliveries()
        for index in 0..<100 { try host.call("echo", "echo", input: "\(index)") }
        #expect(host.core.monitor.withLock { $0.turnsGiven } == 0)
        // A turn given to the delivery thread would have run before this block.
        host.core.deliveryQueue.sync {}
        #expect(threads.elsewhere.load(ordering: .relaxed) == 0)
        #expect(threads.onAsker.load(ordering: .relaxed) == 0)
        try host.waitUntilIdle()
        #expect(threads.onAsker.load(ordering: .relaxed) == 100)
        host.releaseDeliveries()
        try host.call("echo", "echo", input: "after")
        host.core.deliveryQueue.sync {}
        #expect(threads.elsewhere.load(ordering: .relaxed) == 1)
    }

    @Test func releasingAHoldHandsWhatIsQueuedToTheDeliveryThread() throws {
        let threads = Threads()
        let host = try echoHost(recordingIn: threads)
        host.holdDeliveries()
        host.holdDeliveries()
        for index in 0..<3 { try host.call("echo", "echo", input: "\(index)") }
        host.releaseDeliveries()
        host.core.deliveryQueue.sync {}
        #expect(threads.elsewhere.load(ordering: .relaxed) == 0)
        host.releaseDeliveries()
        host.core.deliveryQueue.sync {}
        #expect(threads.elsewhere.load(ordering: .relaxed) == 3)
        #expect(host.core.monitor.withLock { $0.turnsGiven } == 1)
        #expect(threads.onAsker.load(ordering: .relaxed) == 0)
    }

    /// A plugin call running on another thread keeps the host busy, so the waiter
    /// sleeps; what that call then queues is made by the delivery thread, hold or not.
    @Test func aHeldHostStillDeliversWhileItsWaiterSleeps() throws {
        let threads = Threads()
        threads.asker.withLock { $0 = pthread_self() }
        let box = Monitor<PluginHost?>(nil)
        let entered = Gate()
        let slow = ScriptedPlugin(
            name: "slow", ops: ["answer"],
            onCall: { _, input, reply in
                entered.open()
                let core = box.withLock { $0 }!.core
                // Answers only once the asking thread sleeps in waitUntilIdle.
                while core.monitor.withLock({ $0.waiters }) == 0 { sched_yield() }
                reply.succeed(input)
            })
        let host = PluginHost(drainsOnWaitingThread: true) { _ in threads.delivered() }
        box.withLock { $0 = host }
        try host.register(slow)
        host.holdDeliveries()
        let called = spawn { _ = try? host.call("slow", "answer", input: "late") }
        entered.wait()
        // Waited for on another thread, so a wait that never ends fails the test
        // instead of hanging the run.
        let idle = DispatchSemaphore(value: 0)
        spawn {
            try? host.waitUntilIdle()
            idle.signal()
        }
        guard idle.wait(timeout: .now() + 60) == .success else {
            Issue.record("the host never became idle: its deliveries waited for a sleeping waiter")
            return
        }
        called.wait()
        #expect(threads.elsewhere.load(ordering: .relaxed) == 1)
        host.releaseDeliveries()
        box.withLock { $0 = nil }
    }

    @Test func theCABIsHostIgnoresHolds() throws {
        let threads = Threads()
        let host = try echoHost(recordingIn: threads, drainsOnWaitingThread: false)
        host.holdDeliveries()
        try host.call("echo", "echo", input: "x")
        host.core.deliveryQueue.sync {}
        #expect(threads.elsewhere.load(ordering: .relaxed) == 1)
        host.releaseDeliveries()
    }
}
