/// The one answer a plugin owes a call. Only the first answer counts; an answer
/// after the host shut down (which already answered the call) is ignored.
/// A reply dropped without an answer answers `ok = false` itself, so the core is
/// never left waiting (Capacitor's hang on an unhandled method).
public final class Reply: Sendable {
    let core: HostCore
    let ticket: HostState.Ticket
    /// The plugin and op this reply answers, for messages.
    public let plugin: String
    public let op: String

    init(core: HostCore, ticket: HostState.Ticket, plugin: String, op: String) {
        self.core = core
        self.ticket = ticket
        self.plugin = plugin
        self.op = op
    }

    deinit {
        core.answer(ticket, with: .failure("plugin '\(plugin)' dropped the call to '\(op)' without answering"))
    }

    /// Answers the call. Returns false when it was already answered.
    @discardableResult
    public func respond(_ response: PluginResponse) -> Bool {
        core.answer(ticket, with: response)
    }

    /// Answers `ok = true` with `output`.
    @discardableResult
    public func succeed(_ output: String) -> Bool { respond(.success(output)) }

    /// Answers `ok = false` with `message`, a sentence naming the problem.
    @discardableResult
    public func fail(_ message: String) -> Bool { respond(.failure(message)) }
}
