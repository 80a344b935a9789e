/// A plugin's handle on one subscription. It is live from `startStream` until the
/// plugin ends it or the core ends it (unsubscribe, replacement, shutdown); after
/// that every call is a no-op that returns false, so a plugin racing an
/// unsubscribe never delivers on a dead key (H-4).
public final class StreamEmitter: Sendable, Hashable {
    let core: HostCore
    /// The core's key for this subscription.
    public let key: String
    let subscription: Subscription

    init(core: HostCore, key: String, subscription: Subscription) {
        self.core = core
        self.key = key
        self.subscription = subscription
    }

    /// True until the stream ends.
    public var isActive: Bool { core.isActive(self) }

    /// Emits one item. Returns false (and drops it) when the stream has ended.
    @discardableResult
    public func emit(_ response: PluginResponse) -> Bool {
        core.emit(response, from: self)
    }

    /// Emits `ok = true` with `output`.
    @discardableResult
    public func emit(_ output: String) -> Bool { emit(.success(output)) }

    /// Ends the stream; the core gets one end delivery. Returns false when it had already ended.
    @discardableResult
    public func end() -> Bool {
        core.end(self)
    }

    public static func == (lhs: StreamEmitter, rhs: StreamEmitter) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
