import Foundation

/// End to end through `cxshell serve`, piped from a generator as a test driver in
/// another language would: a mix like a contract suite's, requests per second from
/// the first request line in to the last line out.
enum ShellBenchmark {
    /// The mix, in fixed proportions per cycle of ten requests, for one pair of
    /// devices: `foreground` is an iPhone with the app in the foreground and two
    /// `events` subscribers; `background` has the app in the background with one.
    static func cycle(foreground: String, background: String) -> [(what: String, line: String, deliveries: Int)] {
        let push =
            #"{"op":"apns","device":"\#(foreground)","headers":{"apns-topic":"com.example.app","apns-push-type":"background","apns-priority":"5"},"body":{"aps":{"content-available":1},"type":"sync","n":1}}"#
        let alert =
            #"{"op":"apns","device":"\#(background)","headers":{"apns-topic":"com.example.app"},"body":{"aps":{"alert":{"title":"New booking","body":"10:30"}},"booking_id":"01J9ZK3Q"}}"#
        let tap = #"{"op":"tap","device":"\#(background)","which":"newest"}"#
        let toBackground = #"{"op":"background","device":"\#(background)"}"#
        let rejected =
            #"{"op":"apns","token":"00ff","headers":{"apns-topic":"com.example.app"},"body":{"aps":{"alert":"x"}}}"#
        return [
            ("foreground push to 2 subscribers", push, 2), ("foreground push to 2 subscribers", push, 2),
            ("foreground push to 2 subscribers", push, 2), ("foreground push to 2 subscribers", push, 2),
            ("background alert to the tray", alert, 0), ("background alert to the tray", alert, 0),
            ("tap (opened)", tap, 1), ("tap (opened)", tap, 1), ("back to the background", toBackground, 0),
            ("rejection (BadDeviceToken)", rejected, 0),
        ]
    }

    /// Devices d1 … d(2 × pairs): odd ones in the foreground with two subscribers,
    /// even ones in the background with one.
    static func setup(pairs: Int) -> String {
        var lines: [String] = []
        for pair in 0..<pairs {
            for (index, keys) in [(2 * pair + 1, ["a", "b"]), (2 * pair + 2, ["a"])] {
                lines.append(#"{"op":"device","platform":"ios"}"#)
                lines.append(#"{"op":"launch"}"#)
                lines.append(#"{"op":"call","plugin":"push","method":"register"}"#)
                for key in keys {
                    lines.append(#"{"op":"subscribe","key":"\#(key)","plugin":"push","stream":"events"}"#)
                }
                if keys.count == 1 { lines.append(#"{"op":"background","device":"d\#(index)"}"#) }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func run(executable: URL) {
        run(executable: executable, pairs: 1)
        for pairs in [4, 32] { run(executable: executable, pairs: pairs) }
    }

    /// The mix spread over `pairs` pairs of devices, a cycle per pair in turn.
    static func run(executable: URL, pairs: Int) {
        let cycles = 5_000 / scale
        let pairCycles = (0..<pairs).map { cycle(foreground: "d\(2 * $0 + 1)", background: "d\(2 * $0 + 2)") }
        let requests = cycles * 10
        var input = setup(pairs: pairs)
        for index in 0..<cycles {
            for step in pairCycles[index % pairs] { input += step.line + "\n" }
        }
        let data = Data(input.utf8)
        let process = Process()
        process.executableURL = executable
        process.arguments = ["serve"]
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        let start = ContinuousClock.now
        do { try process.run() } catch {
            report("shell_serve_mix", [], target: "requests_per_second >= 50000", met: false, note: "\(error)")
            return
        }
        let writer = Thread {
            stdin.fileHandleForWriting.write(data)
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let seconds = (ContinuousClock.now - start).seconds
        let lines = output.split(separator: UInt8(ascii: "\n"))
        let deliveries = lines.filter { $0.starts(with: Array(#"{"delivery""#.utf8)) }.count
        let refused = lines.filter { $0.starts(with: Array(#"{"reply":null,"ok":false"#.utf8)) }.count
        let perCycle = pairCycles[0].reduce(0) { $0 + $1.deliveries }
        precondition(deliveries == cycles * perCycle, "expected \(cycles * perCycle) deliveries, got \(deliveries)")
        precondition(refused == cycles, "expected \(cycles) rejections, got \(refused)")
        let perSecond = Double(requests) / seconds
        var mix: [String: Int] = [:]
        for step in pairCycles[0] { mix[step.what, default: 0] += 10 }
        let proportions = mix.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.value)% \($0.key)" }
            .joined(separator: ", ")
        let values = [
            ("devices", Double(2 * pairs)), ("requests", Double(requests)), ("requests_per_second", perSecond),
            ("deliveries", Double(deliveries)), ("cores", Double(cores)),
        ]
        if pairs == 1 {
            report(
                "shell_serve_mix", values, target: "requests_per_second >= 50000", met: perSecond >= 50_000,
                note: "mix: \(proportions)")
            reportFloor(input: data, requests: requests, shellPerSecond: perSecond)
        } else {
            report("shell_serve_mix_\(2 * pairs)_devices", values, target: "reported", met: true)
        }
    }

    /// The same input through the line protocol's floor (Tests/Benchmarks/floor): a process
    /// that only reads each line, parses it with jansson and writes a line back, over
    /// the same pipes. The mix's figure over the floor's is what the shell costs beyond
    /// the pipe and the JSON (issue 22).
    static func reportFloor(input: Data, requests: Int, shellPerSecond: Double) {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("floor/line_floor.c")
        let binary = FileManager.default.temporaryDirectory.appendingPathComponent("cx-line-floor-\(getpid())")
        defer { try? FileManager.default.removeItem(at: binary) }
        let cc = Process()
        cc.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        cc.arguments = ["cc", "-O2", source.path, "-ljansson", "-o", binary.path]
        guard (try? cc.run()) != nil else {
            report("shell_serve_mix_over_floor", [], target: "reported", met: false, note: "cc could not run")
            return
        }
        cc.waitUntilExit()
        let floor = Process()
        floor.executableURL = binary
        let stdin = Pipe()
        let stdout = Pipe()
        floor.standardInput = stdin
        floor.standardOutput = stdout
        let start = ContinuousClock.now
        guard cc.terminationStatus == 0, (try? floor.run()) != nil else {
            report("shell_serve_mix_over_floor", [], target: "reported", met: false, note: "the floor did not build")
            return
        }
        let writer = Thread {
            stdin.fileHandleForWriting.write(input)
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        floor.waitUntilExit()
        let seconds = (ContinuousClock.now - start).seconds
        let lines = output.split(separator: UInt8(ascii: "\n")).count
        let floorPerSecond = Double(lines) / seconds
        report(
            "shell_serve_mix_over_floor",
            [
                ("floor_requests_per_second", floorPerSecond), ("mix_requests_per_second", shellPerSecond),
                ("mix_over_floor", shellPerSecond / floorPerSecond),
            ], target: "reported (issue 22: raise it by half)", met: true,
            note: "\(requests) mix requests; the floor answered \(lines) lines")
    }
}
