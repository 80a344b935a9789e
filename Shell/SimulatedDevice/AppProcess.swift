import CXHost
import EchoPlugin
import PushPlugin

/// One life of the app's process: a host with the app's plugins. When the process
/// dies its host is shut down, and whatever it still delivers is discarded, because
/// the core died with it.
final class AppProcess: Sendable {
    let host: PluginHost
    let push: PushPlugin
    private let liveness = Liveness()

    init(system: any PushSystem, core: @escaping @Sendable (Delivery) -> Void) {
        let liveness = liveness
        host = PluginHost(label: "cx.app") { delivery in
            if liveness.isAlive { core(delivery) }
        }
        push = PushPlugin(system: system)
        // Names are unique in a fresh host, so registration cannot fail.
        try? host.register(push)
        try? host.register(EchoPlugin())
    }

    /// Ends the process: nothing it produces reaches the core any more.
    func end() {
        liveness.kill()
        // The shell ends processes between requests, never from inside a plugin.
        try? host.shutdown()
    }

    private final class Liveness: Sendable {
        private let alive = Monitor(true)
        var isAlive: Bool { alive.withLock { $0 } }
        func kill() { alive.withLock { $0 = false } }
    }
}
