#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Everything the host knows, guarded by one monitor in `HostCore`. The rules of
/// H-1 … H-8 live in the methods here; the core of each is "decide under the lock,
/// act (call a plugin, call the core) outside it".
struct HostState {
    struct PendingCall {
        let plugin: String
        let op: String
        /// A notify's answer is discarded (H-2).
        let isNotify: Bool
    }

    struct ActiveStream {
        let plugin: any Plugin
        let emitter: StreamEmitter
    }

    /// A delivery waiting for the delivery thread; stream deliveries carry the
    /// generation of the subscription that produced them.
    struct Queued {
        let delivery: Delivery
        let generation: UInt64
    }

    var plugins: [String: any Plugin] = [:]
    var descriptors: [String: PluginDescriptor] = [:]
    var isShutDown = false
    /// Set when shutdown has drained its final answers; nothing is delivered after.
    var isClosed = false
    /// Shutdown ran inside the core's handler: close once the drain has finished.
    var closeWhenDrained = false

    var nextCallID: UInt64 = 1
    var pendingCalls: [CallID: PendingCall] = [:]

    var nextGeneration: UInt64 = 1
    /// The generation the core currently holds on each key (a subscribe sets it; an
    /// unsubscribe, or the delivery of the stream's end, clears it). A stream
    /// delivery is made only while its generation is still the key's.
    var keyGenerations: [String: UInt64] = [:]
    /// Streams whose plugin is running them; an emitter is live while it is here.
    var activeStreams: [String: ActiveStream] = [:]

    var queue: [Queued] = []
    var drainScheduled = false
    var drainingThread: pthread_t?
    /// The key of the stream delivery being made right now, if any.
    var inFlightKey: String?
    /// Plugin code running on a requester's thread because of a host request.
    var invocations = 0
    var waiters = 0

    var isIdle: Bool { queue.isEmpty && !drainScheduled && invocations == 0 }

    var isOnDeliveryThread: Bool {
        guard let drainingThread else { return false }
        return pthread_equal(drainingThread, pthread_self()) != 0
    }

    mutating func makeGeneration() -> UInt64 {
        defer { nextGeneration += 1 }
        return nextGeneration
    }

    /// Queues a delivery; returns true when the delivery thread must be woken.
    mutating func enqueue(_ delivery: Delivery, generation: UInt64 = 0) -> Bool {
        guard !isClosed else { return false }
        queue.append(Queued(delivery: delivery, generation: generation))
        if drainScheduled { return false }
        drainScheduled = true
        return true
    }

    /// Whether a queued delivery may still be made, just before it is made.
    mutating func admit(_ queued: Queued) -> Bool {
        guard !isClosed else { return false }
        switch queued.delivery {
        case .response:
            return true
        case .item(let key, _):
            return keyGenerations[key] == queued.generation
        case .end(let key):
            guard keyGenerations[key] == queued.generation else { return false }
            keyGenerations[key] = nil
            return true
        }
    }

    func unknownOpMessage(plugin: String, op: String) -> String? {
        guard let descriptor = descriptors[plugin] else { return unknownPluginMessage(plugin) }
        if descriptor.ops.contains(op) { return nil }
        let valid = descriptor.ops.isEmpty ? "no ops" : descriptor.ops.joined(separator: ", ")
        return "\(plugin) has no op '\(op)'; it has: \(valid)"
    }

    func unknownStreamMessage(plugin: String, stream: String) -> String? {
        guard let descriptor = descriptors[plugin] else { return unknownPluginMessage(plugin) }
        if descriptor.streams.contains(stream) { return nil }
        let valid = descriptor.streams.isEmpty ? "no streams" : descriptor.streams.joined(separator: ", ")
        return "\(plugin) has no stream '\(stream)'; it has: \(valid)"
    }

    func unknownPluginMessage(_ plugin: String) -> String {
        let available = descriptors.keys.sorted()
        let list = available.isEmpty ? "none" : available.joined(separator: ", ")
        return "plugin '\(plugin)' is not available (available: \(list))"
    }
}
