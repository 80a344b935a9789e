/// Points where a test forces an interleaving that threads would only sometimes
/// produce (a gate, never a sleep). Empty in production; reached with `@testable`.
struct HostHooks: Sendable {
    /// On the subscriber's thread, after the stream is live and before the plugin's
    /// `startStream` runs: where an unsubscribe from elsewhere can land.
    var beforeStartStream: (@Sendable (_ key: String) -> Void)?
    /// On the subscriber's thread, after `startStream` returned and before a stop the
    /// core asked for meanwhile reaches the plugin: the plugin still holds a
    /// subscription that is already dead.
    var afterStartStream: (@Sendable (_ key: String) -> Void)?
    /// On an unsubscribing or replacing thread, just before it waits out a delivery
    /// on `key` that the core may be handling.
    var beforeWaitingOutDelivery: (@Sendable (_ key: String) -> Void)?
}

extension PluginHost {
    /// The hooks of this host (tests only).
    var hooks: HostHooks {
        get { core.hooks.withLock { $0 } }
        set { core.hooks.withLock { $0 = newValue } }
    }
}
