import CArguments
import CCX
import CXHost

/// Hosts the embedding process made itself (`cxshell`'s app hosts), given a `cx_host`
/// handle so a plugin library it loaded can register its plugins through
/// `cx_register_plugin` (cx.h, `cx_plugin_entry`). Their deliveries stay the embedding
/// process's; only the plugins' side of cx.h is used through the handle.
public enum AdoptedHost {
    /// A `cx_host` handle for `host`, alive until `release`.
    public static func adopt(_ host: PluginHost) -> OpaquePointer {
        handles.insert(.host(CHost(adopting: host)))
    }

    /// Ends the handle: the C plugins registered through it are released (their
    /// `release` runs) with every handle issued for them. Call once the host was shut
    /// down. The names those plugins had.
    @discardableResult
    public static func release(_ handle: OpaquePointer) -> [String] {
        guard case .host(let host)? = handles.entry(handle) else { return [] }
        handles.remove(handle)
        return host.releasePlugins()
    }
}
