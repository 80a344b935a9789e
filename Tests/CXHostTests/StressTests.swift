import CXHost
import Foundation
import Synchronization
import Testing

/// Many threads calling, subscribing and unsubscribing at once while a plugin emits
/// from its own thread. Run under ThreadSanitizer by `make sanitize`.
@Suite struct StressTests {
    /// A plugin that emits a counter on every live stream from a producer thread.
    final class Ticker: Plugin {
        let descriptor = PluginDescriptor(name: "ticker", ops: ["ping"], streams: ["ticks"])
        let live = Monitor<[StreamEmitter]>([])
        func call(_ op: String, input: String, reply: Reply) throws { reply.succeed(input) }
        func startStream(_ stream: String, input: String, emitter: StreamEmitter) throws {
            live.withLock { $0.append(emitter) }
        }
        func stopStream(_ emitter: StreamEmitter) { live.withLock { $0.removeAll { $0 === emitter } } }
    }

    /// What the threads share.
    final class Shared: Sendable {
        let inside = Atomic<Int>(0)
        let overlapped = Atomic<Bool>(false)
        let stop = Atomic<Bool>(false)
        let log = Monitor<[Delivery]>([])
    }

    @Test func concurrentRequestsKeepEveryPromise() throws {
        let shared = Shared()
        let host = PluginHost { delivery in
            if shared.inside.add(1, ordering: .sequentiallyConsistent).newValue > 1 {
                shared.overlapped.store(true, ordering: .relaxed)
            }
            shared.log.withLock { $0.append(delivery) }
            shared.inside.subtract(1, ordering: .sequentiallyConsistent)
        }
        let ticker = Ticker()
        try host.register(ticker)
        let producer = spawn {
            var tick = 0
            while !shared.stop.load(ordering: .relaxed) {
                for emitter in ticker.live.withLock({ $0 }) { emitter.emit(String(tick)) }
                tick += 1
            }
        }
        let callsPerThread = 300
        var workers = (0..<3).map { thread in
            spawn {
                for index in 0..<callsPerThread { _ = try? host.call("ticker", "ping", input: "\(thread).\(index)") }
            }
        }
        workers += (0..<2).map { thread in
            spawn {
                for round in 0..<200 {
                    let key = "k\(thread).\(round % 3)"
                    try? host.subscribe(key: key, plugin: "ticker", stream: "ticks")
                    if round % 2 == 0 { host.unsubscribe(key: key) }
                    try? host.notify("ticker", "ping")
                }
            }
        }
        for worker in workers { worker.wait() }
        shared.stop.store(true, ordering: .relaxed)
        producer.wait()
        try host.waitUntilIdle()
        try host.shutdown()

        let deliveries = shared.log.withLock { $0 }
        let overlapped = shared.overlapped.load(ordering: .relaxed)
        #expect(!overlapped)
        let responses = deliveries.compactMap { if case .response(let id, _) = $0 { id } else { nil } }
        #expect(responses.count == 3 * callsPerThread)
        #expect(Set(responses).count == responses.count)
        // Ticks only grow, so within one key items only ever go forward, across
        // re-subscribes too: an item from a replaced subscription never comes late.
        var lastTick: [String: Int] = [:]
        for case .item(let key, let response) in deliveries {
            let tick = Int(response.output) ?? -1
            if let last = lastTick[key], tick < last {
                Issue.record("key \(key) went from \(last) back to \(tick)")
            }
            lastTick[key] = tick
        }
        #expect(deliveries.allSatisfy { if case .end = $0 { false } else { true } })
    }
}
