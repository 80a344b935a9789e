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
}
