import Foundation
import Loopback

/// A real `mosquitto` broker (Debian's `mosquitto`) on a free loopback port, with its
/// own configuration and persistence directory, for tests and scenarios. It can be
/// stopped and started again on the same port; what it queued for persistent
/// sessions survives that (mosquitto saves its database when it stops).
///
/// With an `admin`, the broker runs mosquitto's dynamic-security plugin (Debian's
/// `mosquitto` ships it and `mosquitto_ctrl`): nobody connects without a client it
/// knows, and `admin` may administer it through `$CONTROL/dynamic-security/v1`.
public final class MQTTBroker: @unchecked Sendable {
    public private(set) var port = 0
    /// The dynamic-security administrator, when the broker enforces rights.
    public let admin: (username: String, password: String)?
    private let directory: URL
    /// The running broker's process id.
    private var pid: pid_t?
    /// Starts and stops take turns: a chaos rule's timer starts it again on its own thread.
    private let lock = NSLock()

    /// Where a device's `endpoint` points: `mqtt://127.0.0.1:PORT`.
    public var endpoint: String { "mqtt://127.0.0.1:\(port)" }

    /// Starts a broker; throws when `mosquitto` (or, with `admin`, its dynamic-security
    /// plugin) is not installed or does not start.
    public init(admin: (username: String, password: String)? = nil) throws {
        self.admin = admin
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("cx-mosquitto-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if let admin {
            try Self.run(
                Self.executable("mosquitto_ctrl", in: ["/usr/bin", "/usr/local/bin"]),
                [
                    "dynsec", "init", directory.appendingPathComponent("dynamic-security.json").path, admin.username,
                    admin.password,
                ])
        }
        var lastError: Error = MQTTFailure("no free port")
        // A port found free can be taken before mosquitto binds it: try a few.
        for _ in 0..<5 {
            port = try LoopbackPort.free()
            do {
                try start()
                return
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    deinit { close() }

    /// Stops the broker for good and removes its directory (configuration, persistence,
    /// log): what a clean stop of the shell leaves behind is nothing.
    public func close() {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The broker's directory, which `close()` removes.
    public var directoryPath: String { directory.path }

    /// Starts the broker (again) on its port.
    public func start() throws {
        try lock.withLock { try startUnlocked() }
    }

    private func startUnlocked() throws {
        guard pid == nil else { return }
        let configuration = directory.appendingPathComponent("mosquitto.conf")
        var settings = """
            listener \(port) 127.0.0.1
            allow_anonymous \(admin == nil)
            persistence true
            persistence_location \(directory.path)/
            log_dest file \(directory.path)/mosquitto.log
            max_queued_messages 10000

            """
        if admin != nil {
            settings += """
                plugin \(try Self.dynamicSecurityPlugin())
                plugin_opt_config_file \(directory.path)/dynamic-security.json

                """
        }
        try settings.write(to: configuration, atomically: true, encoding: .utf8)
        let executable = try Self.executable("mosquitto", in: ["/usr/sbin", "/usr/local/sbin"])
        let child = try Self.spawn(executable, ["-c", configuration.path])
        // Ready when it accepts a connection; it exits at once when it cannot bind.
        for _ in 0..<500 {
            if LoopbackPort.accepts(port) {
                pid = child
                return
            }
            var status: Int32 = 0
            if waitpid(child, &status, WNOHANG) == child {
                throw MQTTFailure("mosquitto exited instead of listening on 127.0.0.1:\(port)")
            }
            usleep(10_000)
        }
        kill(child, SIGTERM)
        var status: Int32 = 0
        waitpid(child, &status, 0)
        throw MQTTFailure("mosquitto did not start listening on 127.0.0.1:\(port)")
    }

    /// Stops the broker (SIGTERM: it saves its sessions and queues) and waits for it.
    public func stop() {
        lock.withLock {
            guard let pid else { return }
            kill(pid, SIGTERM)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            self.pid = nil
        }
    }

    /// A program of Debian's `mosquitto` on the PATH, or where Debian installs it.
    static func executable(_ name: String, in fallbacks: [String]) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":").map(String.init) + fallbacks {
            let candidate = directory + "/" + name
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw MQTTFailure("\(name) is not installed (Debian: apt-get install mosquitto; make test installs it)")
    }

    /// Where Debian's `mosquitto` keeps its dynamic-security plugin (a multiarch path).
    static func dynamicSecurityPlugin() throws -> String {
        let roots = ["/usr/lib", "/usr/local/lib"]
        for root in roots {
            let direct = root + "/mosquitto_dynamic_security.so"
            if FileManager.default.fileExists(atPath: direct) { return direct }
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] {
                let candidate = root + "/" + entry + "/mosquitto_dynamic_security.so"
                if FileManager.default.fileExists(atPath: candidate) { return candidate }
            }
        }
        throw MQTTFailure("mosquitto_dynamic_security.so is not installed (it comes with Debian's mosquitto)")
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's
    /// Glibc module does not show; false when it is missing or refuses.
    static func closeFrom(_ descriptor: Int32, in actions: inout posix_spawn_file_actions_t) -> Bool {
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return false }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, descriptor) == 0
    }

    /// Starts a program with no input or output, no other descriptor of ours, and signals
    /// as a fresh process has them. posix_spawn and waitpid, not Foundation's Process: its
    /// waitUntilExit spins a run loop that can miss the exit of a child started from a
    /// test's thread.
    private static func spawn(_ executable: String, _ arguments: [String]) throws -> pid_t {
        var child: pid_t = 0
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // A broker that kept a pipe end another thread just made (for a child of its own)
        // would hold that child's end of input or output open as long as it lives.
        guard closeFrom(3, in: &actions) else { throw MQTTFailure("posix_spawn cannot close descriptors here") }
        var argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        // The spawning thread may block signals (test runners' threads do); the child
        // must not inherit that, or SIGTERM would never stop it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var signals = sigset_t()
        sigemptyset(&signals)
        posix_spawnattr_setsigmask(&attributes, &signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        posix_spawnattr_setsigdefault(&attributes, &signals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let spawned = posix_spawn(&child, executable, &actions, &attributes, &argv, environ)
        guard spawned == 0 else {
            throw MQTTFailure("\(executable) could not be started: \(String(cString: strerror(spawned)))")
        }
        return child
    }

    /// Runs a program to its end; throws unless it exits 0.
    private static func run(_ executable: String, _ arguments: [String]) throws {
        let child = try spawn(executable, arguments)
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        guard status == 0 else {
            throw MQTTFailure("\(executable) \(arguments.prefix(2).joined(separator: " ")) failed")
        }
    }
}
