import Credentials
import Foundation
import Loopback
import OrderedJSON

#if canImport(Glibc)
    import Glibc
#endif

/// The front door under h2load: valid APNs pushes over 10 connections × 100 streams
/// into a world of 1,000 devices (h2c), each carrying a provider token signed by a
/// key registered with `apns_key`, side by side with the same h2load against `nghttpd`
/// answering the same requests with a static 200 (the floor).
enum FrontDoorBenchmark {
    static let devices = 1_000
    static let pushes = 100_000

    static func run(executable: URL) {
        let pushes = max(Self.pushes / scale, 1_000)
        guard let shell = try? startShell(executable) else {
            report("front_door_pushes", [], target: "pushes_per_second >= 25000", met: false)
            return
        }
        let work = NSTemporaryDirectory() + "cxbench-front-door-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: work + "/docroot/3/device", withIntermediateDirectories: true)
        defer {
            try? FileManager.default.removeItem(atPath: work)
        }
        // The world: 1,000 iOS devices, launched and registered.
        var tokens: [String] = []
        for _ in 0..<devices {
            _ = shell.send(#"{"op":"device","platform":"ios"}"#)
            _ = shell.send(#"{"op":"launch"}"#)
            let reply = shell.send(#"{"op":"call","plugin":"push","method":"register","input":""}"#)
            if let output = (try? JSON.parse(text: reply))?["output"]?.stringValue,
                let token = (try? JSON.parse(text: output))?["token"]?.stringValue
            {
                tokens.append(token)
            }
        }
        // A real backend's path: a key registered with apns_key, and one provider token
        // signed by it on every request (reused, as Apple asks), so each is checked.
        guard let key = SigningKey(),
            let token = key.es256JWT(
                header: #"{"alg":"ES256","kid":"ABC123DEFG"}"#,
                claims: #"{"iss":"TEAM000001","iat":\#(Int(Date().timeIntervalSince1970))}"#),
            shell.send(
                #"{"op":"apns_key","key_id":"ABC123DEFG","team":"TEAM000001","public_key":\#(JSON.string(key.publicKeyPEM).compactText)}"#
            ).contains(#""ok":true"#)
        else {
            report("front_door_pushes", [], target: "pushes_per_second >= 25000", met: false, note: "no signing key")
            return
        }
        let authorization = "bearer \(token)"
        shell.drainInBackground()
        let body = work + "/push.json"
        try? Data(#"{"aps":{"alert":"bench"},"n":1}"#.utf8).write(to: URL(fileURLWithPath: body))
        func uris(_ port: Int) -> String {
            tokens.map { "http://127.0.0.1:\(port)/3/device/\($0)" }.joined(separator: "\n") + "\n"
        }
        try? uris(shell.port).write(toFile: work + "/shell-uris", atomically: true, encoding: .utf8)
        for token in tokens {
            _ = FileManager.default.createFile(atPath: work + "/docroot/3/device/\(token)", contents: nil)
        }

        guard let floorPort = try? LoopbackPort.free() else {
            report("front_door_pushes", [], target: "pushes_per_second >= 25000", met: false, note: "no free port")
            return
        }
        try? uris(floorPort).write(toFile: work + "/floor-uris", atomically: true, encoding: .utf8)
        let nghttpd = Process()
        nghttpd.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        nghttpd.arguments = ["nghttpd", "--no-tls", "-d", work + "/docroot", String(floorPort)]
        nghttpd.standardOutput = FileHandle.nullDevice
        nghttpd.standardError = FileHandle.nullDevice
        try? nghttpd.run()
        defer { nghttpd.terminate() }
        while !LoopbackPort.accepts(floorPort) { usleep(10_000) }

        // Interleaved rounds; each side keeps its best.
        var best = (shell: Run(), floor: Run())
        for _ in 0..<3 {
            let ours = h2load(
                uris: work + "/shell-uris", body: body, authorization: authorization, pushes: pushes,
                log: work + "/ours.log")
            if ours.perSecond > best.shell.perSecond { best.shell = ours }
            let floor = h2load(
                uris: work + "/floor-uris", body: body, authorization: authorization, pushes: pushes,
                log: work + "/floor.log")
            if floor.perSecond > best.floor.perSecond { best.floor = floor }
        }
        shell.stop()
        let ratio = best.shell.perSecond / max(best.floor.perSecond, 1)
        report(
            "front_door_pushes",
            [
                ("devices", Double(devices)), ("pushes", Double(pushes)), ("connections", 10), ("streams", 100),
                ("pushes_per_second", best.shell.perSecond), ("ok", Double(best.shell.succeeded)),
                ("p50_ms", best.shell.p50), ("p99_ms", best.shell.p99),
                ("nghttpd_requests_per_second", best.floor.perSecond), ("nghttpd_p99_ms", best.floor.p99),
                ("ours_over_floor", ratio),
            ],
            target: "pushes_per_second >= 25000", met: best.shell.perSecond >= 25_000 && best.shell.succeeded == pushes,
            note: "every push carries one ES256 provider token, signed by a key registered with apns_key and checked")
    }

    struct Run {
        var perSecond = 0.0
        var succeeded = 0
        var p50 = 0.0
        var p99 = 0.0
    }

    /// One h2load run: requests per second, 2xx answers, and latency percentiles from
    /// its per-request log (microseconds in the third column).
    static func h2load(uris: String, body: String, authorization: String, pushes: Int, log: String) -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "h2load", "-n", String(pushes), "-c", "10", "-m", "100", "-d", body, "-H", "apns-topic: com.example.app",
            "-H", "authorization: \(authorization)", "-i", uris, "--log-file", log,
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        guard (try? process.run()) != nil else { return Run() }
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        var run = Run()
        for line in output.split(separator: "\n") {
            if line.hasPrefix("finished in") {
                let fields = line.split(separator: " ")
                if let index = fields.firstIndex(where: { $0.hasPrefix("req/s") }), index > 0 {
                    run.perSecond = Double(fields[index - 1]) ?? 0
                }
            }
            if line.hasPrefix("status codes:") {
                run.succeeded = Int(line.split(separator: " ")[2]) ?? 0
            }
        }
        let latencies = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
            line -> Double? in
            let fields = line.split(separator: "\t")
            return fields.count >= 3 ? Double(fields[2]).map { $0 / 1000 } : nil
        }.sorted()
        if !latencies.isEmpty {
            run.p50 = latencies[latencies.count / 2]
            run.p99 = latencies[min(latencies.count - 1, latencies.count * 99 / 100)]
        }
        return run
    }

    /// `cxshell serve --listen 127.0.0.1:0`, driven through its standard input.
    final class Shell: @unchecked Sendable {
        let process = Process()
        let input = Pipe()
        let output = Pipe()
        var pending = [UInt8]()
        var port = 0
        let directory = NSTemporaryDirectory() + "cxbench-ca-\(UUID().uuidString)"

        init(_ executable: URL) throws {
            process.executableURL = executable
            process.arguments = ["serve", "--listen", "127.0.0.1:0", "--ca-dir", directory]
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            let first = try JSON.parse(text: readLine() ?? "")
            let address = first["listening"]?["address"]?.stringValue ?? ""
            port = Int(address.split(separator: ":").last ?? "") ?? 0
        }

        func readLine() -> String? {
            while true {
                if let newline = pending.firstIndex(of: 0x0A) {
                    defer { pending.removeSubrange(...newline) }
                    return String(decoding: pending[..<newline], as: UTF8.self)
                }
                let data = output.fileHandleForReading.availableData
                if data.isEmpty { return nil }
                pending += data
            }
        }

        /// One request line; its reply.
        func send(_ line: String) -> String {
            input.fileHandleForWriting.write(Data((line + "\n").utf8))
            while let output = readLine() {
                if output.hasPrefix(#"{"reply""#) { return output }
            }
            return ""
        }

        /// From now on the output is read and dropped as it comes.
        func drainInBackground() {
            let handle = output.fileHandleForReading
            Thread { while !handle.availableData.isEmpty {} }.start()
        }

        func stop() {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    static func startShell(_ executable: URL) throws -> Shell { try Shell(executable) }
}
