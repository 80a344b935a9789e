/// Identifies one one-shot call; the host hands it out and names it again in the response.
public struct CallID: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public var description: String { "#\(rawValue)" }
}

/// One thing the host hands to the core. Deliveries are made one at a time, on the
/// host's delivery thread, in the order they were produced (H-5).
public enum Delivery: Sendable, Hashable {
    /// The answer to `call`, exactly once per call (H-1).
    case response(CallID, PluginResponse)
    /// One item of the stream subscribed under `key` (H-3).
    case item(key: String, PluginResponse)
    /// The stream under `key` ended: the plugin ended it, or it could not start.
    /// Ends the core causes (unsubscribe, replacement, shutdown) are never delivered (H-4).
    case end(key: String)
}
