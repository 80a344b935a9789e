/// What a plugin offers: its name and the ops and streams it answers to. The host
/// answers requests for anything else itself, naming what is valid.
public struct PluginDescriptor: Sendable, Hashable {
    public let name: String
    public let ops: [String]
    public let streams: [String]

    public init(name: String, ops: [String], streams: [String] = []) {
        self.name = name
        self.ops = ops
        self.streams = streams
    }
}

/// A native capability the core reaches through the host.
///
/// The host calls a plugin on the thread that made the request, never while
/// holding a lock, so a plugin may call back into the host. A plugin that throws
/// (or answers `ok = false`) hurts no one else.
public protocol Plugin: AnyObject, Sendable {
    /// Read once, when the plugin is registered.
    var descriptor: PluginDescriptor { get }

    /// Handles one call or notify for an op listed in the descriptor. Answer through
    /// `reply` exactly once, now or later and from any thread. Throwing before
    /// answering answers `ok = false` with the error's text.
    func call(_ op: String, input: String, reply: Reply) throws

    /// Starts a stream listed in the descriptor. Emit through `emitter` from any
    /// thread until `stopStream` is called or you end it. Throwing delivers one
    /// `ok = false` item with the error's text and ends the stream.
    func startStream(_ stream: String, input: String, emitter: StreamEmitter) throws

    /// The core ended the stream (unsubscribe, replacement or shutdown). The emitter
    /// is already inert; forget it.
    func stopStream(_ emitter: StreamEmitter)

    /// The host shut down: every stream was stopped and every pending call answered.
    func hostDidShutDown()
}

extension Plugin {
    public func startStream(_ stream: String, input: String, emitter: StreamEmitter) throws {
        emitter.end()
    }

    public func stopStream(_ emitter: StreamEmitter) {}

    public func hostDidShutDown() {}
}
