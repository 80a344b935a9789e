import CXHost
import Foundation
import Synchronization

/// Host dispatch: stream items per second through one subscription, and one-shot
/// call round trips (request to the core's handler) with their latency percentiles.
enum HostBenchmark {
    final class Firehose: Plugin {
        let descriptor = PluginDescriptor(name: "bench", ops: ["ping"], streams: ["items"])
        let emitter = Monitor<StreamEmitter?>(nil)
        func call(_ op: String, input: String, reply: Reply) throws { reply.succeed(input) }
        func startStream(_ stream: String, input: String, emitter: StreamEmitter) throws {
            self.emitter.withLock { $0 = emitter }
        }
    }

    final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    static func run() {
        let items = 1_000_000
        let counter = Counter()
        let plugin = Firehose()
        let host = PluginHost { _ in counter.value.add(1, ordering: .relaxed) }
        try? host.register(plugin)
        try? host.subscribe(key: "k", plugin: "bench", stream: "items")
        let emitter = plugin.emitter.withLock { $0 }!
        let start = ContinuousClock.now
        for index in 0..<items { emitter.emit(index & 1 == 0 ? "even" : "odd") }
        try? host.waitUntilIdle()
        let seconds = (ContinuousClock.now - start).seconds
        precondition(counter.value.load(ordering: .relaxed) == items)
        let perSecond = Double(items) / seconds
        report(
            "host_stream_items", [("items", Double(items)), ("items_per_second", perSecond)],
            target: "items_per_second >= 1000000", met: perSecond >= 1_000_000)

        let calls = 100_000
        let answered = Counter()
        let callHost = PluginHost { _ in answered.value.add(1, ordering: .releasing) }
        try? callHost.register(Firehose())
        var latencies: [Double] = []
        latencies.reserveCapacity(calls)
        let callStart = ContinuousClock.now
        for index in 0..<calls {
            let sent = ContinuousClock.now
            _ = try? callHost.call("bench", "ping", input: "x")
            while answered.value.load(ordering: .acquiring) <= index {}
            latencies.append((ContinuousClock.now - sent).seconds * 1e6)
        }
        let total = (ContinuousClock.now - callStart).seconds
        latencies.sort()
        let p50 = latencies[calls / 2]
        let p99 = latencies[calls * 99 / 100]
        report(
            "host_call_round_trip",
            [("calls", Double(calls)), ("calls_per_second", Double(calls) / total), ("p50_us", p50), ("p99_us", p99)],
            target: "p99_us <= 50", met: p99 <= 50)
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
