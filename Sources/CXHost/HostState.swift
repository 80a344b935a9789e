import Synchronization

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
    }

    /// What a `Reply` answers: a call, whose answer goes to the core under its id, or
    /// a notify, whose answer is discarded (H-2). Two spaces, so a notify never holds
    /// an id the core may choose for a call (the C ABI's cores choose every id).
    enum Ticket: Hashable, Sendable {
        case call(CallID)
        case notify(UInt64)
    }

    struct ActiveStream {
        let plugin: any Plugin
        let emitter: StreamEmitter
    }

    /// A delivery waiting for the delivery thread; stream deliveries carry the
    /// subscription that produced them.
    struct Queued {
        let delivery: Delivery
        let subscription: Subscription?
        var afterShutdown = false

        /// Whether this admitted delivery is still to be made (`admitRound`); read
        /// outside the lock, on the draining thread, just before it is made.
        func isDue(closed: Bool) -> Bool {
            guard !closed || afterShutdown else { return false }
            switch delivery {
            case .response, .end: return true
            case .item: return subscription?.isHeld == true
            }
        }
    }

    var plugins: [String: any Plugin] = [:]
    var descriptors: [String: PluginDescriptor] = [:]
    var isShutDown = false
    /// Set when shutdown has drained its final answers; nothing is delivered after.
    var isClosed = false
    /// Shutdown ran inside the core's handler: close once the drain has finished.
    var closeWhenDrained = false

    var nextCallID: UInt64 = 1
    var nextNotifyID: UInt64 = 1
    var pendingCalls: [Ticket: PendingCall] = [:]

    var nextGeneration: UInt64 = 1
    /// The subscription the core currently holds on each key (a subscribe sets it;
    /// an unsubscribe, or the delivery of the stream's end, clears it). A stream
    /// delivery is made only while its subscription is still held (`isHeld`).
    private(set) var heldKeys: [String: Subscription] = [:]
    /// Streams whose plugin is running them; an emitter is live (`isLive`) while it
    /// is here. Changed only through `activate` and `deactivate`.
    private(set) var activeStreams: [String: ActiveStream] = [:]

    var queue: [Queued] = []
    var drainScheduled = false
    var drainingThread: pthread_t?
    /// Threads in `waitUntilIdle`'s first, spinning phase: one of them will make the
    /// deliveries, so the delivery thread leaves them to it (`drainDeferred`).
    var spinningWaiters = 0
    /// A turn of the delivery thread is on its way (queued, not yet started): it will
    /// see whatever is queued before it starts, so no other turn is needed.
    var turnPending = false
    /// The delivery thread left a drain to a waiter (spinning, or promised by a hold);
    /// when no waiter is left to make it, it is handed back (`handsBackDrain`).
    var drainDeferred = false
    /// Promises of a `waitUntilIdle` to come (`PluginHost.holdDeliveries`).
    var deliveryHolds = 0
    /// How many times the delivery thread was woken (each wake-up costs a futex).
    private(set) var turnsGiven = 0
    /// The deliveries a drain admitted and is making now, outside the lock (one round
    /// of `admitRound`). Which of them is in the core's hands is `HostCore.inHandler`.
    var inFlight: ArraySlice<Queued> = []
    /// The threads running plugin code because of a host request (a call, a stream's
    /// start or stop, the shutdown notice), one entry per invocation. Waiting for the
    /// host to be idle on one of them would wait for itself.
    var invokingThreads: [pthread_t] = []
    var waiters = 0
    /// Emitters whose `startStream` has not returned yet. The core may end such a
    /// stream meanwhile (from another thread); its `stopStream` is then deferred to
    /// `stopWhenStarted`, so a plugin never hears stop before start for one emitter.
    var starting: Set<ObjectIdentifier> = []
    var stopWhenStarted: Set<ObjectIdentifier> = []

    var isIdle: Bool { queue.isEmpty && !drainScheduled && invokingThreads.isEmpty }

    /// Whether a drain is left to a waiting thread rather than the delivery thread: one
    /// is spinning in `waitUntilIdle` now, or one is promised and none sleeps there (a
    /// sleeping waiter makes no deliveries, so they must not wait for it).
    var leavesDrainToWaiter: Bool { spinningWaiters > 0 || (deliveryHolds > 0 && waiters == 0) }

    /// Whether a drain left to a waiter must go back to the delivery thread: no waiter
    /// will make it, and it is still to be made.
    var handsBackDrain: Bool { drainDeferred && !leavesDrainToWaiter && !queue.isEmpty && drainingThread == nil }

    var isOnDeliveryThread: Bool {
        guard let drainingThread else { return false }
        return pthread_equal(drainingThread, pthread_self()) != 0
    }

    var isOnInvokingThread: Bool {
        invokingThreads.contains { pthread_equal($0, pthread_self()) != 0 }
    }

    mutating func beginInvocation() {
        invokingThreads.append(pthread_self())
    }

    mutating func endInvocation() {
        if let index = invokingThreads.lastIndex(where: { pthread_equal($0, pthread_self()) != 0 }) {
            invokingThreads.remove(at: index)
        }
    }

    /// The core ended `stream`: whether the plugin may be told now (false: its start
    /// is still running, and the stop waits for it).
    mutating func stopNowOrWhenStarted(_ stream: ActiveStream) -> Bool {
        let id = ObjectIdentifier(stream.emitter)
        guard starting.contains(id) else { return true }
        stopWhenStarted.insert(id)
        return false
    }

    /// `startStream` returned: whether the core ended the stream meanwhile, so the
    /// plugin must now be told to stop.
    mutating func finishStarting(_ emitter: StreamEmitter) -> Bool {
        let id = ObjectIdentifier(emitter)
        starting.remove(id)
        return stopWhenStarted.remove(id) != nil
    }

    /// Why `request`, waiting on this thread, would never end; nil when it may wait.
    func waitForItself(_ request: String) -> HostError? {
        if isOnDeliveryThread { return .inDeliveryHandler(request) }
        if isOnInvokingThread { return .inPlugin(request) }
        return nil
    }

    /// The core subscribes on `key`: a new subscription holds it, the old one no more.
    mutating func hold(_ key: String) -> Subscription {
        defer { nextGeneration += 1 }
        let subscription = Subscription(generation: nextGeneration)
        heldKeys.updateValue(subscription, forKey: key)?.letGo()
        return subscription
    }

    /// The core lets go of `key`; whether it held it.
    mutating func release(_ key: String) -> Bool {
        guard let subscription = heldKeys.removeValue(forKey: key) else { return false }
        subscription.letGo()
        return true
    }

    mutating func releaseAll() {
        for subscription in heldKeys.values { subscription.letGo() }
        heldKeys.removeAll()
    }

    mutating func activate(_ stream: ActiveStream) {
        stream.emitter.subscription.isLive = true
        activeStreams[stream.emitter.key] = stream
    }

    mutating func deactivate(_ key: String) -> ActiveStream? {
        let stream = activeStreams.removeValue(forKey: key)
        stream?.emitter.subscription.isLive = false
        return stream
    }

    mutating func deactivateAll() -> [ActiveStream] {
        let streams = Array(activeStreams.values)
        for stream in streams { stream.emitter.subscription.isLive = false }
        activeStreams.removeAll()
        return streams
    }

    /// Queues a delivery; returns true when the delivery thread must be woken.
    /// `afterShutdown` marks the answer to a call made after shutdown (H-1: every call
    /// is answered), the one delivery a closed host still makes.
    mutating func enqueue(
        _ delivery: consuming Delivery, from subscription: Subscription? = nil, afterShutdown: Bool = false
    ) -> Bool {
        guard !isClosed || afterShutdown else { return false }
        queue.append(Queued(delivery: delivery, subscription: subscription, afterShutdown: afterShutdown))
        if drainScheduled { return false }
        drainScheduled = true
        if leavesDrainToWaiter {
            drainDeferred = true
            return false
        }
        return needsTurn()
    }

    /// Whether the delivery thread must be given a turn now (one is not already on
    /// its way); marks one as on its way.
    mutating func needsTurn() -> Bool {
        if turnPending { return false }
        turnPending = true
        turnsGiven &+= 1
        return true
    }

    /// Whether the delivery at `index` of the current round (`HostCore.inHandler`, -1
    /// for none) is on `key`.
    func isInHandler(_ key: String, at index: Int) -> Bool {
        guard inFlight.indices.contains(index) else { return false }
        switch inFlight[index].delivery {
        case .item(let inHandlerKey, _), .end(let inHandlerKey): return inHandlerKey == key
        case .response: return false
        }
    }

    /// Admits the next round of `batch`, from `next` on: at most `maxRound` deliveries,
    /// which become `inFlight` and are made outside the lock; `next` moves past them.
    /// What is decided here must hold until each delivery is made (`Queued.isDue`):
    /// - whether the host is closed, which cannot change while a drain runs;
    /// - an item is made while its subscription is held, which only ever goes from
    ///   held to let go, so it is read again just before the item is made;
    /// - an end lets its key go as it is admitted, so it makes a round of its own: the
    ///   items before it on that key must still find their subscription held. An end
    ///   whose subscription was let go already is dropped here.
    mutating func admitRound(of batch: [Queued], from next: inout Int) -> Range<Int> {
        var first = next
        var end = next
        while end < batch.count && end - first < Self.maxRound {
            guard case .end(let key) = batch[end].delivery else {
                end += 1
                continue
            }
            guard end == first else { break }
            let queued = batch[end]
            end += 1
            guard !isClosed || queued.afterShutdown, let subscription = queued.subscription, subscription.isHeld
            else {
                first = end
                continue
            }
            _ = release(key)
            break
        }
        inFlight = batch[first..<end]
        next = end
        return first..<end
    }

    static let maxRound = 64

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

/// One subscription the core made on a key. `isLive` is read and written only under
/// the host's monitor, which is what makes the class `@unchecked Sendable`; `held` is
/// written under it too, and read by a drain outside it: atomic, and sequentially
/// consistent with `HostCore.inHandler` (see `HostCore.drainClaimed`). They spare a
/// lookup by key on every emit and every delivery.
final class Subscription: @unchecked Sendable {
    /// Subscriptions on one host are numbered in order (the order `subscribedKeys` lists).
    let generation: UInt64
    private let held = Atomic<Bool>(true)
    /// Its plugin may still emit on it.
    var isLive = false

    init(generation: UInt64) { self.generation = generation }

    /// The core still holds it: its deliveries may be made (H-4). Once let go, never again.
    var isHeld: Bool { held.load(ordering: .sequentiallyConsistent) }

    /// Called under the host's monitor.
    func letGo() { held.store(false, ordering: .sequentiallyConsistent) }
}
