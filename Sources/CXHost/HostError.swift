/// Errors a host request reports synchronously. Everything else about a request
/// (unknown plugins, ops and streams, failing plugins) is answered through a delivery.
public enum HostError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The host was shut down; the request was not dispatched (H-8).
    case shutDown
    /// A plugin with this name is already registered.
    case duplicatePlugin(String)
    /// A call with this id is still waiting for its answer.
    case duplicateCallID(CallID)
    /// `waitUntilIdle` (named) was called from the delivery handler, which it would
    /// wait for forever; nothing was done.
    case inDeliveryHandler(String)
    /// `waitUntilIdle` or `shutdown` (named) was called from plugin code this host is
    /// running on this thread (a plugin's `call`, `startStream`, `stopStream`), which it
    /// would wait for forever; nothing was done.
    case inPlugin(String)

    public var description: String {
        switch self {
        case .shutDown: "the host was shut down"
        case .duplicatePlugin(let name): "a plugin named '\(name)' is already registered"
        case .duplicateCallID(let id): "call \(id) is still waiting for its answer"
        case .inDeliveryHandler(let request):
            "\(request) was called from the delivery handler, which it would wait for forever"
        case .inPlugin(let request):
            "\(request) was called from a plugin the host is running on this thread, which it would wait for forever"
        }
    }
}
