import CXHost
import Dispatch
import EchoPlugin
import PushPlugin

/// Registers more plugins on a new app host (the libraries `cxshell --plugin` loaded);
/// returns what ends them once that host is shut down.
public typealias ExtraPlugins = @Sendable (PluginHost) -> @Sendable () -> Void

/// The plugins every app host has, by name: what a loaded library may not register.
public let builtInPlugins = AppProcess.builtIn

/// One life of the app's process: a host with the app's plugins. When the process
/// dies its host is shut down, and whatever it still delivers is discarded, because
/// the core died with it.
final class AppProcess: Sendable {
    /// The plugins every app has, before any loaded library's.
    static let builtIn = [PushPlugin.pluginDescriptor, EchoPlugin.pluginDescriptor]

    /// The one thread every app's deliveries run on (when the world is not already
    /// making them on its own thread, waiting for the app to be idle): thousands of
    /// running apps must not mean thousands of threads.
    static let deliveries = DispatchQueue(label: "cx.world.deliveries")

    let host: PluginHost
    let push: PushPlugin
    private let liveness = Liveness()
    /// Ends what `plugins` installed, once the host is shut down.
    private let uninstall: @Sendable () -> Void

    /// `plugins` registers the loaded libraries' plugins on the new host (ExtraPlugins).
    init(system: any PushSystem, plugins: ExtraPlugins, core: @escaping @Sendable (Delivery) -> Void) {
        let liveness = liveness
        host = PluginHost(label: "cx.app", deliveryTarget: Self.deliveries) { delivery in
            if liveness.isAlive { core(delivery) }
        }
        push = PushPlugin(system: system)
        // Names are unique in a fresh host, so registration cannot fail.
        try? host.register(push)
        try? host.register(EchoPlugin())
        uninstall = plugins(host)
    }

    /// Ends the process: nothing it produces reaches the core any more.
    func end() {
        liveness.kill()
        // The shell ends processes between requests, never from inside a plugin.
        try? host.shutdown()
        uninstall()
    }

    private final class Liveness: Sendable {
        private let alive = Monitor(true)
        var isAlive: Bool { alive.withLock { $0 } }
        func kill() { alive.withLock { $0 = false } }
    }
}
