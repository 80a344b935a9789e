import CXHost
import Foundation
import Synchronization

/// Host dispatch: stream items per second through 1, 8 and 64 subscriptions, and
/// one-shot call round trips (request to the core's handler) with their latency
/// percentiles, for a core that waits (the handler runs on the waiting thread) and
/// for the C ABI's way (the handler runs on the delivery thread).
enum HostBenchmark {
    final class Firehose: Plugin {
        let descriptor = PluginDescriptor(name: "bench", ops: ["ping"], streams: ["items"])
        let emitters = Monitor<[StreamEmitter]>([])
        func call(_ op: String, input: String, reply: Reply) throws { reply.succeed(input) }
        func startStream(_ stream: String, input: String, emitter: StreamEmitter) throws {
            emitters.withLock { $0.append(emitter) }
        }
    }

    final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    static func stream() {
        for subscribers in [1, 8, 64] { stream(subscribers: subscribers) }
    }

    static func calls() {
        callRoundTrip(waiting: true)
        callRoundTrip(waiting: false)
    }

    /// One thread emits every item to each subscription; the clock stops when the
    /// core's handler has received them all.
    static func stream(subscribers: Int) {
        let deliveries = 2_000_000 / scale
        let items = deliveries / subscribers
        let counter = Counter()
        let plugin = Firehose()
        let host = PluginHost { _ in counter.value.add(1, ordering: .relaxed) }
        try? host.register(plugin)
        for index in 0..<subscribers { try? host.subscribe(key: "k\(index)", plugin: "bench", stream: "items") }
        let emitters = plugin.emitters.withLock { $0 }
        let start = ContinuousClock.now
        for index in 0..<items {
            for emitter in emitters { emitter.emit(index & 1 == 0 ? "even" : "odd") }
        }
        try? host.waitUntilIdle()
        let seconds = (ContinuousClock.now - start).seconds
        precondition(counter.value.load(ordering: .relaxed) == items * subscribers)
        let perSecond = Double(items) / seconds
        let values = [
            ("subscribers", Double(subscribers)), ("items", Double(items)), ("items_per_second", perSecond),
            ("deliveries_per_second", Double(items * subscribers) / seconds), ("cores", Double(cores)),
        ]
        if subscribers == 1 {
            report(
                "host_stream_items_1_subscriber", values, target: "items_per_second >= 2000000",
                met: perSecond >= 2_000_000)
        } else {
            report("host_stream_items_\(subscribers)_subscribers", values, target: "reported", met: true)
        }
    }

    /// 100,000 sequential calls to a plugin that answers inline, each timed from
    /// `call` to the core's handler having the answer. `waiting`: the core waits for
    /// idle, and the host delivers on that thread; otherwise the core spins until
    /// the delivery thread hands the answer over, as a C core's callback gets it.
    static func callRoundTrip(waiting: Bool) {
        let calls = 100_000 / scale
        let answered = Counter()
        let host = PluginHost(drainsOnWaitingThread: waiting) { _ in answered.value.add(1, ordering: .releasing) }
        try? host.register(Firehose())
        var latencies: [Double] = []
        latencies.reserveCapacity(calls)
        let callStart = ContinuousClock.now
        for index in 0..<calls {
            let sent = ContinuousClock.now
            _ = try? host.call("bench", "ping", input: "x")
            if waiting { try? host.waitUntilIdle() }
            while answered.value.load(ordering: .acquiring) <= index {}
            latencies.append((ContinuousClock.now - sent).seconds * 1e6)
        }
        let total = (ContinuousClock.now - callStart).seconds
        latencies.sort()
        let p50 = latencies[calls / 2]
        let p99 = latencies[calls * 99 / 100]
        let values = [
            ("calls", Double(calls)), ("calls_per_second", Double(calls) / total), ("p50_us", p50), ("p99_us", p99),
            ("cores", Double(cores)),
        ]
        if waiting {
            report("host_call_round_trip", values, target: "p99_us <= 20", met: p99 <= 20)
        } else {
            report("host_call_round_trip_delivery_thread", values, target: "reported", met: true)
        }
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
