/// Errors a host request reports synchronously. Everything else about a request
/// (unknown plugins, ops and streams, failing plugins) is answered through a delivery.
public enum HostError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The host was shut down; the request was not dispatched (H-8).
    case shutDown
    /// A plugin with this name is already registered.
    case duplicatePlugin(String)
    /// A call with this id is still waiting for its answer.
    case duplicateCallID(CallID)

    public var description: String {
        switch self {
        case .shutDown: "the host was shut down"
        case .duplicatePlugin(let name): "a plugin named '\(name)' is already registered"
        case .duplicateCallID(let id): "call \(id) is still waiting for its answer"
        }
    }
}
