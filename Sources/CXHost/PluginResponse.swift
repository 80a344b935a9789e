/// What the core receives for a call or a stream item: `ok` and UTF-8 text that the
/// host passes through byte for byte (H-7).
public struct PluginResponse: Sendable, Hashable {
    public var ok: Bool
    public var output: String

    public init(ok: Bool, output: String) {
        self.ok = ok
        self.output = output
    }

    public static func success(_ output: String) -> PluginResponse { PluginResponse(ok: true, output: output) }
    public static func failure(_ message: String) -> PluginResponse { PluginResponse(ok: false, output: message) }
}
