import OrderedJSON

/// A `register` call for a channel other than the OS's: its name and the whole input
/// object, options included, as the core sent it (channels.md).
public struct ChannelRequest: Sendable, Equatable {
    public var channel: String
    public var options: JSONObject

    public init(channel: String, options: JSONObject) {
        self.channel = channel
        self.options = options
    }
}

/// Why a channel could not register, as one sentence the core can show (REG-3).
public struct ChannelRefusal: Error, Sendable, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
}

/// Where the app's other channels' SDKs (Appwrite's realtime client, a webhook
/// receiver) hand what they received to the plugin, under the same contract as the
/// OS's pushes.
public struct ChannelPushBridge: Sendable {
    let plugin: PushPlugin

    /// A message that arrived while the app runs: `received` to every subscriber
    /// (DEL-1: never buffered). Returns whether any subscriber got it.
    @discardableResult
    public func received(_ event: JSONObject) -> Bool {
        plugin.received(event: event)
    }

    /// The user tapped the notification a channel posted: `opened` under the TAP
    /// rules (the launch buffer included). `id` identifies the notification, so one
    /// tap reported twice is delivered once.
    public func opened(id: String, event: JSONObject) {
        plugin.opened(id: id, event: event)
    }
}
