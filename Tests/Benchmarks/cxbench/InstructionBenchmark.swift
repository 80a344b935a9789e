import Credentials
import Foundation
import Loopback
import OrderedJSON
import ShellKit

/// Instructions per push (issue 40), which repeat where wall-clock ratios on two shared
/// cores swing: callgrind counts every instruction the shell executes on both of its
/// threads while h2load sends `pushes` valid APNs pushes (and FCM messages), in clear text
/// and over TLS, and the same for nghttpd answering the same requests with a static 200
/// (the floor) over the same protocol. Counting is
/// zeroed after a warm-up and dumped after the run (`callgrind_control`), so start-up and
/// the world's setup are left out. `CXBENCH_KEEP_PROFILES=DIR` copies the dumps (the shell's
/// and nghttpd's, APNs then FCM) and the shell's stripped binary into DIR, for
/// `callgrind_annotate`. A last run sends the APNs pushes again with the log's live stream
/// open (a curl reading `/api/v1/stream`), so its count includes rendering every entry: the
/// instruction side of inspector.md's promise that a stream keeps 0.85x of the rate.
enum InstructionBenchmark {
    static let pushes = 5_000
    static let devices = 100

    static func run(executable: URL) {
        let work = NSTemporaryDirectory() + "cxbench-instructions-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: work + "/docroot/3/device", withIntermediateDirectories: true)
        try? FileManager.default.createDirectory(
            atPath: work + "/docroot/v1/projects/cxshell", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        // Valgrind 3.19 cannot read the toolchain's DWARF 5: a copy without debug info
        // (symbols kept) is what it runs, unless CXBENCH_DEBUG_INFO says the build's is
        // DWARF 4 (Docs/Performance.md, "Reproducing a profile"), for costs by line.
        let binary = work + "/cxshell"
        let keepsDebugInfo = ProcessInfo.processInfo.environment["CXBENCH_DEBUG_INFO"] == "1"
        guard (try? FileManager.default.copyItem(atPath: executable.path, toPath: binary)) != nil,
            keepsDebugInfo || command(["strip", "--strip-debug", binary]),
            let shell = try? FrontDoorBenchmark.Shell(
                URL(fileURLWithPath: binary),
                launcher: ["valgrind", "-q", "--tool=callgrind", "--callgrind-out-file=\(work)/shell.cg"])
        else {
            report("instructions_per_push", [], target: "apns <= 2.0 x nghttpd", met: false, note: "no valgrind run")
            return
        }
        defer { shell.stop() }
        keep(binary, as: "cxshell")
        // The world: iOS devices registered; one Android app; an APNs key and an FCM access token.
        let tokens = FrontDoorBenchmark.iosTokens(shell: shell, count: devices)
        _ = shell.send(#"{"op":"device","platform":"android"}"#)
        _ = shell.send(#"{"op":"launch"}"#)
        let registered = shell.send(#"{"op":"call","plugin":"push","method":"register","input":""}"#)
        guard let jwt = FrontDoorBenchmark.providerToken(shell: shell),
            let output = (try? JSON.parse(text: registered))?["output"]?.stringValue,
            let fcmToken = (try? JSON.parse(text: output))?["token"]?.stringValue,
            let access = FrontDoorBenchmark.accessToken(shell: shell, work: work)
        else {
            report("instructions_per_push", [], target: "apns <= 2.0 x nghttpd", met: false, note: "no world")
            return
        }
        shell.drainInBackground()
        let watcher = Process()
        watcher.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        watcher.arguments = ["curl", "-s", "-N", "-o", "/dev/null", "http://127.0.0.1:\(shell.port)/api/v1/stream"]
        defer { if watcher.isRunning { kill(watcher.processIdentifier, SIGKILL) } }
        for token in tokens {
            _ = FileManager.default.createFile(atPath: work + "/docroot/3/device/\(token)", contents: nil)
        }
        _ = FileManager.default.createFile(atPath: work + "/docroot/v1/projects/cxshell/messages:send", contents: nil)
        try? Data(#"{"aps":{"alert":"bench"},"n":1}"#.utf8).write(to: URL(fileURLWithPath: work + "/apns.json"))
        try? Data(#"{"message":{"token":"\#(fcmToken)","data":{"n":"1"}}}"#.utf8).write(
            to: URL(fileURLWithPath: work + "/fcm.json"))
        // nghttpd in clear text and over TLS (with the shell's server certificate), each
        // under callgrind, each counting its own dumps.
        var floors: [(process: Process, port: Int, out: String, dumps: Int)] = []
        defer {
            for floor in floors {
                floor.process.terminate()
                floor.process.waitUntilExit()
            }
        }
        for tls in [false, true] {
            guard let port = try? LoopbackPort.free() else { return }
            let out = work + (tls ? "/nghttpd-tls.cg" : "/nghttpd.cg")
            let nghttpd = Process()
            nghttpd.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            nghttpd.arguments =
                [
                    "valgrind", "-q", "--tool=callgrind", "--callgrind-out-file=\(out)", "nghttpd", "-n", "2", "-d",
                    work + "/docroot", String(port),
                ] + (tls ? [shell.directory + "/server-key.pem", shell.directory + "/server.pem"] : ["--no-tls"])
            nghttpd.standardOutput = FileHandle.nullDevice
            nghttpd.standardError = FileHandle.nullDevice
            guard (try? nghttpd.run()) != nil else { return }
            floors.append((nghttpd, port, out, 0))
            while !LoopbackPort.accepts(port) { usleep(20_000) }
        }
        // Each service in clear text, then over TLS, where the ten connections' handshakes fall
        // in the counted run, for both servers.
        let plain: [(name: String, target: Double, body: String, authorization: String, paths: [String])] = [
            ("apns", 2.0, work + "/apns.json", "bearer \(jwt)", tokens.map { "/3/device/\($0)" }),
            ("fcm", 2.3, work + "/fcm.json", "Bearer \(access)", ["/v1/projects/cxshell/messages:send"]),
        ]
        let services =
            [false, true].flatMap { tls in
                plain.map {
                    (
                        name: $0.name + (tls ? "_tls" : ""), target: $0.target, body: $0.body,
                        authorization: $0.authorization, paths: $0.paths, tls: tls, streamed: false
                    )
                }
            } + [
                (
                    name: "apns_streamed", target: plain[0].target, body: plain[0].body,
                    authorization: plain[0].authorization, paths: plain[0].paths, tls: false, streamed: true
                )
            ]
        var shellDumps = 0
        var unstreamed: Double?
        for service in services {
            if service.streamed {
                guard (try? watcher.run()) != nil else { continue }
                // The stream is open once the shell answers its headers; its entries follow.
                while !streamIsOpen(port: shell.port) { usleep(20_000) }
            }
            func perRequest(_ pid: Int32, _ port: Int, _ out: String, _ dump: inout Int, warmUp: Int = 1_000) -> Double?
            {
                let scheme = service.tls ? "https" : "http"
                let uris = service.paths.map { "\(scheme)://127.0.0.1:\(port)\($0)" }.joined(separator: "\n") + "\n"
                try? uris.write(toFile: work + "/uris", atomically: true, encoding: .utf8)
                func load(_ count: Int) -> FrontDoorBenchmark.Run {
                    FrontDoorBenchmark.h2load(
                        uris: work + "/uris", body: service.body, authorization: service.authorization, pushes: count,
                        log: work + "/h2load.log")
                }
                _ = load(warmUp)  // caches, tables and lazily made paths are made now
                guard command(["callgrind_control", "--zero", String(pid)]) else { return nil }
                let run = load(Self.pushes)
                guard run.succeeded == Self.pushes, command(["callgrind_control", "--dump", String(pid)]) else {
                    return nil
                }
                dump += 1
                let counted = instructions(in: "\(out).\(dump)")
                keep("\(out).\(dump)", as: "\(service.name)-\(URL(fileURLWithPath: out).lastPathComponent)")
                return counted.map { Double($0) / Double(Self.pushes) }
            }
            // The shell's first warm-up fills its log, so that every push counted also frees the
            // entry it replaces, as in a shell that has run a while.
            let ours = perRequest(
                shell.process.processIdentifier, shell.port, work + "/shell.cg", &shellDumps,
                warmUp: shellDumps == 0 ? RequestLog.defaultMax : 1_000)
            if service.streamed {
                guard let ours, let unstreamed else {
                    report(
                        "instructions_per_push_\(service.name)", [], target: "streamed_over_unstreamed <= 1.176",
                        met: false, note: "a run under callgrind did not answer every request")
                    continue
                }
                // The stream's share of a push's cost, against inspector.md's 0.85x: at most
                // 1/0.85 of the instructions of a push with no stream open.
                let share = ours / unstreamed
                report(
                    "instructions_per_push_\(service.name)",
                    [
                        ("pushes", Double(Self.pushes)), ("instructions_per_push", ours),
                        ("unstreamed_instructions_per_push", unstreamed), ("streamed_over_unstreamed", share),
                    ], target: "streamed_over_unstreamed <= 1.176", met: share <= 1.0 / 0.85,
                    note: "callgrind, both threads, h2c, a curl reading /api/v1/stream throughout")
                continue
            }
            let index = service.tls ? 1 : 0
            let floor = perRequest(
                floors[index].process.processIdentifier, floors[index].port, floors[index].out, &floors[index].dumps)
            guard let ours, let floor else {
                report(
                    "instructions_per_push_\(service.name)", [], target: "ratio <= \(service.target)", met: false,
                    note: "a run under callgrind did not answer every request")
                continue
            }
            if service.name == "apns" { unstreamed = ours }
            report(
                "instructions_per_push_\(service.name)",
                [
                    ("pushes", Double(Self.pushes)), ("instructions_per_push", ours),
                    ("nghttpd_instructions_per_request", floor), ("ratio", ours / floor),
                ], target: "ratio <= \(service.target)", met: ours / floor <= service.target,
                note:
                    "callgrind, both threads, \(service.tls ? "TLS" : "h2c"), 10 connections x 100 streams, after a warm-up"
            )
        }
    }

    /// Whether the shell counts the stream's connection beside the one asking.
    static func streamIsOpen(port: Int) -> Bool {
        let metrics = FrontDoorBenchmark.output(of: ["curl", "-s", "http://127.0.0.1:\(port)/metrics"])
        let line = metrics.flatMap {
            String(decoding: $0, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("cx_connections ") }
        }
        return line.flatMap { Int($0.dropFirst("cx_connections ".count)) }.map { $0 >= 2 } ?? false
    }

    /// Copies `path` into `CXBENCH_KEEP_PROFILES` under `name`, when that is set.
    static func keep(_ path: String, as name: String) {
        guard let directory = ProcessInfo.processInfo.environment["CXBENCH_KEEP_PROFILES"] else { return }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: directory + "/" + name)
        try? FileManager.default.copyItem(atPath: path, toPath: directory + "/" + name)
    }

    /// The `summary:` line of a callgrind dump: the instructions it counted.
    static func instructions(in path: String) -> Int? {
        // callgrind_control returns once the dump is asked for; the file follows.
        for _ in 0..<100 {
            if let text = try? String(contentsOfFile: path, encoding: .utf8),
                let line = text.split(separator: "\n").first(where: { $0.hasPrefix("summary:") })
            {
                return Int(line.dropFirst("summary:".count).trimmingCharacters(in: .whitespaces))
            }
            usleep(50_000)
        }
        return nil
    }

    static func command(_ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
