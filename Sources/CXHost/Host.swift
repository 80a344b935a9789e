import Dispatch

/// The host between an app core and its plugins (spec: host.md, rules H-1 … H-8).
///
/// Requests are dispatched on the caller's thread, synchronously and in order.
/// Everything the core receives (call responses, stream items, stream ends) goes to
/// the one `deliver` handler, one delivery at a time and in the order produced: on
/// the host's delivery thread, or, when `drainsOnWaitingThread` (the default), on a
/// thread waiting in `waitUntilIdle` while no delivery is running, which saves the
/// thread handoff. The handler may call back into the host.
public final class PluginHost: Sendable {
    let core: HostCore

    /// Creates a host that hands every delivery to `deliver`. Pass
    /// `drainsOnWaitingThread: false` when the handler must only ever run on the
    /// host's own delivery thread (the C ABI promises that). Hosts given the same
    /// `deliveryTarget` (a serial queue) share its one thread for their deliveries,
    /// each host still one delivery at a time and in order: a world of thousands of
    /// hosts then has one delivery thread, not one per busy host.
    public init(
        label: String = "cx.host", drainsOnWaitingThread: Bool = true, deliveryTarget: DispatchQueue? = nil,
        deliver: @escaping @Sendable (Delivery) -> Void
    ) {
        core = HostCore(
            label: label, drainsOnWaitingThread: drainsOnWaitingThread, target: deliveryTarget, handler: deliver)
    }

    deinit {
        // Only a plugin running on this thread could make this throw, and a running
        // plugin call holds the host; there is nothing left to wait for then.
        try? core.shutdown()
    }

    /// Makes a plugin reachable under its descriptor's name.
    /// Throws `duplicatePlugin` for a name in use, `shutDown` after shutdown.
    public func register(_ plugin: any Plugin) throws(HostError) {
        try core.register(plugin)
    }

    /// One-shot call (H-1): answered exactly once through a `.response` delivery with
    /// the returned id, by the plugin or, for an unknown plugin or op, a plugin that
    /// throws, or a host that was shut down, by the host with `ok = false` and a
    /// sentence naming the problem. Never throws `shutDown`.
    @discardableResult
    public func call(_ plugin: String, _ op: String, input: String = "") throws(HostError) -> CallID {
        try core.call(plugin: plugin, op: op, input: input, isNotify: false)
    }

    /// A one-shot call under an id the caller chose, for cores that correlate answers
    /// by their own request ids (the C ABI). As `call`, and throws `duplicateCallID`
    /// while a call with the same id is waiting for its answer.
    public func call(_ plugin: String, _ op: String, input: String = "", id: CallID) throws(HostError) {
        _ = try core.call(plugin: plugin, op: op, input: input, isNotify: false, chosenID: id)
    }

    /// Fire-and-forget call (H-2): dispatched in order like `call`; its answer is
    /// discarded. After shutdown it is not dispatched (and nothing is delivered).
    public func notify(_ plugin: String, _ op: String, input: String = "") throws(HostError) {
        _ = try core.call(plugin: plugin, op: op, input: input, isNotify: true)
    }

    /// Starts a stream under `key` (H-3, H-4). A key in use is first unsubscribed
    /// (its plugin is told to stop, with no end delivery). An unknown plugin or stream
    /// gets one `ok = false` item and an end. Throws `shutDown` after shutdown.
    public func subscribe(key: String, plugin: String, stream: String, input: String = "") throws(HostError) {
        try core.subscribe(key: key, plugin: plugin, stream: stream, input: input)
    }

    /// Ends the stream under `key` (H-4): once this returns, nothing more is delivered
    /// on it, even if a delivery was being made on another thread when it was called.
    /// An unknown key, or a call after shutdown, does nothing.
    public func unsubscribe(key: String) {
        core.unsubscribe(key: key)
    }

    /// As `unsubscribe(key:)`, and tells whether the key had a stream (false: nothing changed).
    @discardableResult
    public func unsubscribe(existingKey key: String) -> Bool {
        core.unsubscribe(key: key)
    }

    /// True once `shutdown` has begun: nothing is dispatched any more.
    public var isShutDown: Bool {
        core.monitor.withLock { $0.isShutDown }
    }

    /// The keys the core currently holds a stream under, oldest subscription first: a
    /// key is here from `subscribe` until `unsubscribe`, or until the plugin's end has
    /// been delivered. Empty after shutdown.
    public var subscribedKeys: [String] {
        core.subscribedKeys
    }

    /// Blocks until the host is idle (H-6): every request dispatched so far has
    /// returned from its plugin and every delivery produced so far has been made.
    /// A call a plugin holds open for later is not waited for.
    /// Throws `inDeliveryHandler` or `inPlugin`, at once and having done nothing, when
    /// called from the delivery handler or from plugin code this host is running on this thread
    /// (its `call`, `startStream`, `stopStream`): the wait could never end there.
    public func waitUntilIdle() throws(HostError) {
        try core.waitUntilIdle()
    }

    /// Promises a `waitUntilIdle` soon on a host that `drainsOnWaitingThread`: until the
    /// matching `releaseDeliveries()`, what is queued waits for that waiter, which makes
    /// it, instead of waking the delivery thread for it; that saves a thread wake-up per
    /// request when the waiter would have made the deliveries anyway. While a thread
    /// sleeps in `waitUntilIdle` (a plugin call still running), deliveries are made by
    /// the delivery thread as without a hold. Nothing else changes: order, rules H-1 …
    /// H-8, and what `waitUntilIdle` waits for. Does nothing on a host that does not
    /// drain on waiting threads.
    public func holdDeliveries() {
        core.holdDeliveries()
    }

    /// Ends one `holdDeliveries()`; what is still queued then goes to the delivery thread.
    /// Each hold is released exactly once (an unmatched release stops the process).
    public func releaseDeliveries() {
        core.releaseDeliveries()
    }

    /// Shuts down (H-8): stops every stream (no end deliveries), answers every pending
    /// call with `ok = false`, delivers those answers, and delivers nothing afterwards
    /// except the `ok = false` answers of calls made later. Later subscribes and
    /// registrations throw `shutDown`. Called from the delivery handler, the final
    /// answers are delivered right after the handler returns. Idempotent.
    /// Throws `inPlugin`, having done nothing, from plugin code this host is
    /// running on this thread.
    public func shutdown() throws(HostError) {
        try core.shutdown()
    }
}
