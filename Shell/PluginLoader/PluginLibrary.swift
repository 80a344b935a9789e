import CCX
import CX
import CXHost
import Glibc

/// A plugin library loaded into the shell (`--plugin PATH`): a shared library exporting
/// cx.h's `cx_plugin_entry`, which registers its plugins on every app host the world
/// makes. It leaves the `cx_*` functions undefined; `cxshell` provides them (it is
/// linked with `--export-dynamic`).
public final class PluginLibrary: Sendable {
    public let path: String
    /// The names of the plugins the library registers.
    private let names: [String]
    private let entry: Entry

    /// `cx_plugin_entry`. cx.h lets any thread call it, which makes sharing it sound.
    private struct Entry: @unchecked Sendable {
        let function: @convention(c) (OpaquePointer?, UInt32) -> cx_status
    }

    /// Why a library was refused, in a sentence that names the file.
    public struct Refusal: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// Loads `path` and tries its entry once on a host that already has the plugins in
    /// `taken` (the built-in ones, and earlier libraries'): refused when the library
    /// cannot be loaded, has no entry point, fails in it (another ABI version answers
    /// so) or registers a name already taken.
    public init(path: String, taken: [PluginDescriptor]) throws(Refusal) {
        self.path = path
        guard let library = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown error"
            throw Refusal(description: "the plugin library \(path) cannot be loaded: \(reason)")
        }
        guard let symbol = dlsym(library, "cx_plugin_entry") else {
            throw Refusal(
                description:
                    "the plugin library \(path) has no cx_plugin_entry (it must export cx_status cx_plugin_entry(cx_host *, uint32_t), cx.h)"
            )
        }
        // The library stays loaded for the life of the process: its code is called
        // from every app host.
        entry = Entry(function: unsafeBitCast(symbol, to: (@convention(c) (OpaquePointer?, UInt32) -> cx_status).self))
        let probe = PluginHost(label: "cx.plugin-probe") { _ in }
        for descriptor in taken { try? probe.register(Placeholder(descriptor)) }
        let handle = AdoptedHost.adopt(probe)
        let status = entry.function(handle, UInt32(CX_ABI_VERSION))
        try? probe.shutdown()
        names = AdoptedHost.release(handle)
        switch status {
        case CX_OK: return
        case CX_ERR_DUPLICATE_PLUGIN:
            throw Refusal(
                description:
                    "the plugin library \(path) registers a plugin under a name the shell already has (\(taken.map(\.name).joined(separator: ", ")))"
            )
        case CX_ERR_INVALID_ARGUMENT:
            throw Refusal(
                description:
                    "the plugin library \(path) refused ABI version \(CX_ABI_VERSION) (CX_ERR_INVALID_ARGUMENT): it was built for another cx.h"
            )
        default:
            throw Refusal(
                description:
                    "the plugin library \(path) failed in cx_plugin_entry: \(String(cString: cx_status_name(status)))"
            )
        }
    }

    /// Registers the library's plugins on an app host; what to call once that host
    /// was shut down (the plugins' `release` runs then).
    public func install(into host: PluginHost) -> @Sendable () -> Void {
        let handle = AdoptedHost.adopt(host)
        // It succeeded on the probe, whose taken names are this host's built-in ones.
        _ = entry.function(handle, UInt32(CX_ABI_VERSION))
        let owned = Handle(handle)
        return { AdoptedHost.release(owned.pointer) }
    }

    /// The descriptors of the plugins the library registers, as a later library's
    /// probe must find them taken.
    public var descriptors: [PluginDescriptor] { names.map { PluginDescriptor(name: $0, ops: []) } }

    private struct Handle: @unchecked Sendable {
        let pointer: OpaquePointer
        init(_ pointer: OpaquePointer) { self.pointer = pointer }
    }

    /// A name held in the probe host, so a library that registers it is refused.
    private final class Placeholder: Plugin {
        let descriptor: PluginDescriptor
        init(_ descriptor: PluginDescriptor) { self.descriptor = descriptor }
        func call(_ op: String, input: String, reply: Reply) throws { _ = reply.fail("a probe") }
    }
}
