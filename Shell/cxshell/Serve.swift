import CXHost
import Foundation
import FrontDoor
import HTTPMessage
import OrderedJSON
import ShellKit

/// `cxshell serve`: the line protocol on standard input and output.
enum Serve {
    static let help = """
        usage: cxshell serve [--listen ADDRESS:PORT] [--ca-dir DIR] [--keep-running] [--log-max N]
                             [--api-token TOKEN] [--api-host NAME]... [--no-inspector] [--broker]
                             [--log-secrets] [--plugin LIBRARY]... [--fixture FILE]
                             [--state FILE [--state-every SECONDS]]

        Reads protocol requests from standard input, one JSON object per line, and writes
        replies and deliveries to standard output, one JSON object per line. Each request
        is handled completely, and the app's host is idle, before the next is read; the
        deliveries it caused are written before its reply. A line of white space only
        gets no reply.
        Exits with status 0 at the end of input, on SIGINT / SIGTERM, or when the reader
        of its output goes away (with --keep-running it serves on, writing nothing); each
        way stops the broker it started and removes its files first.

        --listen ADDRESS:PORT also serves the network front door on that port (0: any
        free one): as an HTTPS proxy (CONNECT to the service hosts), over TLS (ALPN h2 and
        http/1.1) and in clear text (HTTP/1.1, and HTTP/2 with prior knowledge): APNs, FCM
        HTTP v1, Google's OAuth token endpoint, the http channel's webhooks and PubNub's
        REST API. The first output line then says where:
        {"listening":{"address":…,"ca":…}}. Each network
        request writes its deliveries and one {"network":…} report line before it is
        answered. --ca-dir DIR holds the test CA (default .cxshell/ca).

        The same port serves the inspector to requests addressed to the shell itself
        (localhost, an IP address, or a name given with --api-host): a JSON API under
        /api/v1/ that drives and reads the world, the log of every request, /metrics,
        /livez and /readyz (Docs/Inspector.md). --api-token TOKEN requires
        "Authorization: Bearer TOKEN" on it (the page asks for it in its sign-in form);
        a --listen address that is not loopback
        needs one (or --no-inspector). --log-max N keeps the last N log entries
        (default 10000; 0 keeps none). Secrets a request carries (bearer tokens, API
        keys, passwords, private keys, JWT signatures) are redacted wherever the log is
        read; --log-secrets shows them whole, for a world only its owner can read.
        --keep-running: the end of input does not end
        the shell (SIGINT / SIGTERM do), so it can run as a service driven over HTTP.

        Messages from channels (Appwrite's MQTT) arrive on their own time: each writes its
        deliveries and one {"network":"mqtt",…} report line as it comes, between any two
        other lines. The protocol: Docs/Shell.md; the front door: Docs/FrontDoor.md;
        the channels: Docs/Channels.md.

        --broker starts a real mosquitto of the world's own on a free loopback port and
        writes {"broker":"mqtt://127.0.0.1:PORT"} first: the endpoint for Appwrite
        registrations, and the broker a chaos rule's broker_down stops (Docs/Chaos.md).

        --plugin LIBRARY loads a shared library exporting cx.h's cx_plugin_entry and
        registers its plugins on every app the world runs, beside the built-in push and
        echo; a library that cannot be loaded, has no entry, fails in it or takes a name
        already taken is refused at start (Docs/Rust.md).

        --fixture FILE plays a scenario file (requests one a line, `{…}` or `op {…}`) on
        the world at start, before the port opens; a refused line stops the start, naming it.

        --state FILE keeps the world across restarts: loaded at start (a damaged file, or
        one from a newer cxshell, stops the start and is left as it was), then saved
        atomically at once, every --state-every seconds (default 10) and at every clean
        stop: devices as after a reboot, their tokens, credentials, chaos rules and the
        clock's offset (Docs/Install.md). A world loaded from a state file does not play
        its --fixture again.

        Every flag can also come from the environment, for a service's configuration:
        CXSHELL_LISTEN, CXSHELL_CA_DIR, CXSHELL_LOG_MAX, CXSHELL_API_TOKEN, CXSHELL_API_HOST
        (names separated by commas), CXSHELL_PLUGINS (paths separated by colons),
        CXSHELL_FIXTURE, CXSHELL_STATE, CXSHELL_STATE_EVERY, and the switches CXSHELL_KEEP_RUNNING, CXSHELL_NO_INSPECTOR,
        CXSHELL_BROKER, CXSHELL_LOG_SECRETS (1/true/yes/on or 0/false/no/off). A flag wins
        over its variable; an empty variable counts as unset; a bad value is refused at
        start with a sentence naming the variable (Docs/Install.md).

        serve starts itself again once, in place, with glibc.malloc.hugetlb=1 (a large
        world's heap on huge pages, Docs/Scaling.md) and glibc.malloc.tcache_count=1024
        (Docs/Performance.md) added to GLIBC_TUNABLES; a tunable GLIBC_TUNABLES already
        names is kept as it is.
        """

    static func run(_ given: [String]) -> Int32 {
        // A served world may grow to a million devices (Docs/Scaling.md).
        HeapTunables.adopt()
        func refuse(_ sentence: String) -> Int32 {
            FileHandle.standardError.write(Data("cxshell serve: \(sentence)\n".utf8))
            // A start refused after the broker started leaves no broker behind.
            ServeOutput.shared.stop()
            return 2
        }
        let options: ServeOptions
        switch ServeOptions.parse(given, environment: ProcessInfo.processInfo.environment) {
        case .failure(let refusal):
            return refuse(refusal.description.hasPrefix("unknown argument") ? "\(refusal)\n\(help)" : "\(refusal)")
        case .success(let parsed): options = parsed
        }
        let plugins: @Sendable (PluginHost) -> @Sendable () -> Void
        switch PluginOptions.load(paths: options.plugins) {
        case .failure(let refusal): return refuse("\(refusal)")
        case .success(let loaded): plugins = loaded
        }
        let inspector =
            options.inspector ? InspectorSettings(token: options.apiToken, hosts: Set(options.apiHosts)) : nil
        // One world, one request at a time: the line protocol and the network take turns
        // under this lock. The network's requests are handled in batches on a thread of
        // their own, beside the door's; a batch's lines go out in one write before its
        // answers do (and before any later line-protocol output, so the output keeps the
        // order of handling).
        // Signals are watched before the first line goes out: a driver that reads the
        // broker's line and then sends SIGTERM meets a clean stop, not the default action.
        // A reader that goes away is seen by the write, not by a SIGPIPE that would end
        // the shell with its broker left running.
        signal(SIGPIPE, SIG_IGN)
        StopSignals.watch { ServeOutput.shared.end() }
        let session = Session(logMax: options.logMax)
        session.inspector = inspector
        session.logShowsSecrets = options.logSecrets
        session.plugins = plugins
        if options.broker {
            do {
                let endpoint = try session.startBroker()
                ServeOutput.shared.stop = session.closeOutside
                writeLines([#"{"broker":"\#(endpoint)"}"#])
            } catch {
                FileHandle.standardError.write(Data("cxshell serve: \(error)\n".utf8))
                return 1
            }
        }
        // A state file is read before anything else touches the world, and written once
        // at once, so that a path that cannot be written is refused now, not at the stop.
        var stateFile: StateFile?
        var kept = false
        if let path = options.state {
            let file = StateFile(path: path)
            switch file.read() {
            case .failure(let problem): return refuse("the state file \(path) \(problem)")
            case .success(let bytes?):
                do {
                    try session.restore(snapshot: bytes)
                } catch {
                    return refuse("the state file \(path) was not loaded (\(error)); it was left as it was")
                }
                kept = true
                // Loaded all the same: a broker may come up later; the project waits for a register.
                for (project, endpoint) in session.appwriteProjectsWithoutBroker {
                    FileHandle.standardError.write(
                        Data(
                            "cxshell serve: the state file's Appwrite project \(project) has no broker: \(endpoint) could not be set up, so its pushes over Appwrite Push fail until it is registered again (appwrite_project)\n"
                                .utf8))
                }
            case .success(nil): break
            }
            if let problem = file.write(session.snapshot()) {
                return refuse("the state file \(path) cannot be written: \(problem)")
            }
            stateFile = file
        }
        // The fixture seeds a new world: one kept in a state file was seeded already.
        // It runs before the port opens: /readyz answering 200 means it ran.
        if !kept, let fixture = options.fixture, let refusal = Self.play(fixture: fixture, on: session) {
            return refuse(refusal)
        }
        ServeOutput.shared.keepRunning = options.keepRunning
        let faults = session.handshakeFaults
        let world = Monitor(ServedSession(session: session))
        if let stateFile {
            // Saved at every clean stop, after the last request, and every --state-every s.
            let closeOutside = ServeOutput.shared.stop
            ServeOutput.shared.stop = {
                stateFile.write(world.withLock { $0.session.snapshot() }, last: true)
                closeOutside()
            }
            let every = UInt32(options.stateEvery)
            Thread.detachNewThread {
                while true {
                    sleep(every)
                    if let problem = stateFile.write(world.withLock { $0.session.snapshot() }) {
                        FileHandle.standardError.write(
                            Data("cxshell serve: the state file \(stateFile.path) cannot be written: \(problem)\n".utf8)
                        )
                    }
                }
            }
        }
        var door: FrontDoor?
        if let listen = options.listen, let (address, port) = ServeOptions.splitAddress(listen) {
            if let inspector, inspector.token == nil, Self.isLoopback(address) == false {
                return refuse(
                    "--listen \(listen) is not a loopback address: the inspector would let anyone who reaches it drive the world; give --api-token TOKEN, or --no-inspector"
                )
            }
            do {
                let ca = try TestCA.ensure(in: options.caDirectory)
                door = try FrontDoor(
                    address: address, port: port, ca: ca, tunnelHosts: Session.isServiceHost,
                    // A refused handshake's report line goes out before its alert does. The
                    // world's lock only when a tls_fail rule may meet it: a long request in
                    // the world stalls no connection's handshake otherwise.
                    handshakes: { host in
                        guard faults.mayFail(serverName: host) else { return true }
                        return world.withLock { world in
                            let (allowed, lines) = world.session.handshake(serverName: host)
                            world.add(lines)
                            world.flush()
                            return allowed
                        }
                    },
                    busy: Session.busyAnswer,
                    // The door's thread does TLS, HTTP/2 and sockets; this one, the world:
                    // each batch's lines are written before any of its answers goes out.
                    batches: { batch in
                        world.withLock { world in
                            var responses: [HTTPResponse] = []
                            responses.reserveCapacity(batch.count)
                            while !batch.isEmpty {
                                responses.append(
                                    world.session.handle(network: batch.take(), writingLinesTo: &world.pending))
                            }
                            world.flush()
                            return responses
                        }
                    })
                let shown = address.contains(":") ? "[\(address)]:\(door!.port)" : "\(address):\(door!.port)"
                let opened = door!
                let path = URL(fileURLWithPath: ca.certificate).standardizedFileURL.path
                world.withLock {
                    $0.session.hub.frontDoorAddress = shown
                    $0.session.connectionCount = { opened.connections }
                    $0.session.caPath = path
                }
                writeLines([#"{"listening":{"address":"\#(shown)","ca":"\#(path)"}}"#])
            } catch {
                FileHandle.standardError.write(Data("cxshell serve: \(error)\n".utf8))
                ServeOutput.shared.stop()
                return 1
            }
        }
        // Channel messages (MQTT) arrive on their own time: each is handled between
        // two requests, under the same lock, and written as it comes (channels.md).
        // The thread holds the world weakly and is joined at the end of input, so the
        // world ends with `run`, as before.
        let hub = world.withLock { $0.session.hub }
        let arrivalsEnded = DispatchSemaphore(value: 0)
        Thread.detachNewThread { [weak world] in
            while !hub.isClosed {
                guard hub.waitForArrivals(timeout: 3600) else { continue }
                guard let world else { break }
                world.withLock { world in
                    world.flush()
                    writeLines(world.session.handleArrivals())
                }
            }
            arrivalsEnded.signal()
        }
        guard let input = LineReader(descriptor: 0) else {
            ServeOutput.shared.stop()
            return 1
        }
        while let line = input.next() {
            // One write per request keeps a driver that waits for the reply from waiting
            // on a buffer, without a system call per line.
            world.withLock { world in
                world.session.handle(line: line, writingLinesTo: &world.pending)
                world.flush()
            }
        }
        // A service driven over HTTP goes on until a signal ends it.
        while options.keepRunning { pause() }
        door?.stop()
        hub.close()
        arrivalsEnded.wait()
        ServeOutput.shared.end()
    }

    /// Plays a fixture (a scenario file: requests one a line, each `{…}` or `op {…}`,
    /// with optional expectations) on the world; the sentence that stops the start when
    /// it cannot be read or one of its lines is refused, naming the line.
    static func play(fixture path: String, on session: Session) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else {
            return "the fixture \(path) cannot be read"
        }
        let scenario: Scenario
        do {
            scenario = try Scenario(name: path, text: String(decoding: data, as: UTF8.self))
        } catch {
            return "the fixture \(path) is not a scenario file: line \(error.line): \(error.message)"
        }
        let run = ScenarioRunner.run(scenario, on: session, source: "fixture")
        guard let failed = run.firstFailure else { return nil }
        // A refused request says why in its reply; a failed expectation in the runner's words.
        let reply = failed.output.last.flatMap { try? JSON.parse(text: $0) }
        let why = reply?["ok"] == false ? reply?["error"]?.stringValue : nil
        return
            "the fixture \(path) stopped at line \(failed.step.line) (\(failed.request)): \(why ?? failed.failure ?? "")"
    }

    /// Whether `address` is a loopback address; nil when it is no IP literal at all (the
    /// front door names that problem itself).
    static func isLoopback(_ address: String) -> Bool? {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { return nil }
        var loopback = in6addr_loopback
        return memcmp(&v6, &loopback, MemoryLayout<in6_addr>.size) == 0
    }
}

/// The world and the network's lines not written yet, as the bytes that go out.
struct ServedSession {
    let session: Session
    /// Whole lines, each ended by a newline.
    var pending = ByteOutput()

    mutating func add(_ lines: [String]) { Session.appendLines(lines, to: &pending) }

    /// Writes the pending lines.
    mutating func flush() {
        defer { pending.truncate(to: 0) }
        writeOutput(pending)
    }
}

/// Writes lines to standard output in one write (see `ServeOutput` for a reader gone).
func writeLines(_ lines: [String]) {
    guard !lines.isEmpty, !ServeOutput.shared.isGone else { return }
    var output = ByteOutput(capacity: lines.reduce(0) { $0 + $1.utf8.count + 1 })
    Session.appendLines(lines, to: &output)
    writeOutput(output)
}

/// Writes whole lines' bytes to standard output in one write.
private func writeOutput(_ output: ByteOutput) {
    guard output.count > 0, !ServeOutput.shared.isGone else { return }
    if !output.withBytes({ writeAll($0, to: 1) }) { ServeOutput.shared.readerWent() }
}

/// How `serve` ends, and what it does when the reader of its output goes away: without
/// --keep-running it ends as at the end of input; with it, it serves on and its lines go
/// nowhere (the log and the inspector still have them). Either way it ends by stopping
/// what the world started outside the process (its broker) and removing its files.
final class ServeOutput: @unchecked Sendable {
    static let shared = ServeOutput()
    private let lock = NSLock()
    private var gone = false
    private var stopAction: @Sendable () -> Void = {}
    /// Held by the first `end` until the process exits: a second (a signal while the
    /// reader goes) waits for the first's stop instead of exiting in the middle of it.
    private let ending = NSLock()
    /// Set before any thread but the main one writes.
    var keepRunning = false
    /// Stops what the world started outside the process (and saves the state file). The
    /// main thread sets it while a signal's thread may already read it: under the lock.
    var stop: @Sendable () -> Void {
        get { lock.withLock { stopAction } }
        set { lock.withLock { stopAction = newValue } }
    }

    var isGone: Bool { lock.withLock { gone } }

    func readerWent() {
        lock.withLock { gone = true }
        // The writer holds the world's lock, which the stop's last save takes: end on a
        // thread of its own while the writer lets go.
        if !keepRunning { Thread.detachNewThread { self.end() } }
    }

    /// Stops the world's outside parts and exits 0, from any thread: nothing the shell
    /// has not finished writing is lost, since every line goes out in one write.
    func end() -> Never {
        ending.lock()
        stop()
        _exit(0)
    }
}

/// SIGINT and SIGTERM end `serve` cleanly: the handler only writes to a pipe, which a
/// thread of its own reads before it ends the shell (a handler may do no more).
enum StopSignals {
    static let pipe: (read: Int32, write: Int32) = {
        var ends: [Int32] = [-1, -1]
        _ = Glibc.pipe(&ends)
        return (ends[0], ends[1])
    }()

    static func watch(_ end: @escaping @Sendable () -> Never) {
        let ends = pipe
        Thread.detachNewThread {
            var byte: UInt8 = 0
            while read(ends.read, &byte, 1) < 0 && errno == EINTR {}
            end()
        }
        // A parent may have spawned the shell with these signals blocked: unblock them.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for signal in [SIGINT, SIGTERM] {
            Glibc.signal(signal) { _ in
                var byte: UInt8 = 1
                _ = write(StopSignals.pipe.write, &byte, 1)
            }
            sigaddset(&unblock, signal)
        }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
    }
}

/// Reads lines of any length from a C stream (a 10 MB line is read whole, then
/// refused by the protocol's limit).
struct LineReader {
    let stream: UnsafeMutablePointer<FILE>

    init?(descriptor: Int32) {
        guard let stream = fdopen(descriptor, "r") else { return nil }
        self.stream = stream
    }

    func next() -> [UInt8]? {
        var buffer: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(buffer) }
        let count = getline(&buffer, &capacity, stream)
        guard count >= 0, let buffer else { return nil }
        var length = count
        if length > 0, buffer[length - 1] == 0x0A { length -= 1 }
        return buffer.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }
}

/// Writes every byte to a file descriptor, retrying short writes; false when the
/// reader went away.
func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
    bytes.withUnsafeBufferPointer { writeAll($0, to: descriptor) }
}

func writeAll(_ buffer: UnsafeBufferPointer<UInt8>, to descriptor: Int32) -> Bool {
    guard let base = buffer.baseAddress else { return true }
    var offset = 0
    while offset < buffer.count {
        let written = write(descriptor, base + offset, buffer.count - offset)
        if written < 0 {
            if errno == EINTR { continue }
            return false
        }
        offset += written
    }
    return true
}
