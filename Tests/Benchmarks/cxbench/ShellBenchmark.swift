import Foundation

/// End to end through `cxshell serve`, piped from a generator as a test driver in
/// another language would: a mix like a contract suite's, requests per second from
/// the first request line in to the last line out.
enum ShellBenchmark {
    /// The mix, in fixed proportions per cycle of ten requests. d1 is an iPhone with
    /// the app in the foreground and two `events` subscribers; d2 has the app in the
    /// background with one.
    static let cycle: [(what: String, line: String, deliveries: Int)] = {
        let foreground =
            #"{"op":"apns","device":"d1","headers":{"apns-topic":"com.example.app","apns-push-type":"background","apns-priority":"5"},"body":{"aps":{"content-available":1},"type":"sync","n":1}}"#
        let alert =
            #"{"op":"apns","device":"d2","headers":{"apns-topic":"com.example.app"},"body":{"aps":{"alert":{"title":"New booking","body":"10:30"}},"booking_id":"01J9ZK3Q"}}"#
        let tap = #"{"op":"tap","device":"d2","which":"newest"}"#
        let background = #"{"op":"background","device":"d2"}"#
        let rejected =
            #"{"op":"apns","token":"00ff","headers":{"apns-topic":"com.example.app"},"body":{"aps":{"alert":"x"}}}"#
        return [
            ("foreground push to 2 subscribers", foreground, 2), ("foreground push to 2 subscribers", foreground, 2),
            ("foreground push to 2 subscribers", foreground, 2), ("foreground push to 2 subscribers", foreground, 2),
            ("background alert to the tray", alert, 0), ("background alert to the tray", alert, 0),
            ("tap (opened)", tap, 1), ("tap (opened)", tap, 1), ("back to the background", background, 0),
            ("rejection (BadDeviceToken)", rejected, 0),
        ]
    }()

    static let setup = """
        {"op":"device","platform":"ios"}
        {"op":"launch"}
        {"op":"call","plugin":"push","method":"register"}
        {"op":"subscribe","key":"a","plugin":"push","stream":"events"}
        {"op":"subscribe","key":"b","plugin":"push","stream":"events"}
        {"op":"device","platform":"ios"}
        {"op":"launch"}
        {"op":"call","plugin":"push","method":"register"}
        {"op":"subscribe","key":"a","plugin":"push","stream":"events"}
        {"op":"background"}

        """

    static func run(executable: URL) {
        let cycles = 5_000 / scale
        let requests = cycles * cycle.count
        var input = setup
        for _ in 0..<cycles {
            for step in cycle { input += step.line + "\n" }
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
            report("shell_serve_mix", [], target: "requests_per_second >= 50000", met: false)
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
        let perCycle = cycle.reduce(0) { $0 + $1.deliveries }
        precondition(deliveries == cycles * perCycle, "expected \(cycles * perCycle) deliveries, got \(deliveries)")
        precondition(refused == cycles, "expected \(cycles) rejections, got \(refused)")
        let perSecond = Double(requests) / seconds
        var mix: [String: Int] = [:]
        for step in cycle { mix[step.what, default: 0] += 10 }
        let proportions = mix.sorted { $0.value > $1.value }.map { "\($0.value)% \($0.key)" }.joined(separator: ", ")
        report(
            "shell_serve_mix",
            [
                ("requests", Double(requests)), ("requests_per_second", perSecond),
                ("deliveries", Double(deliveries)), ("cores", Double(cores)),
            ], target: "requests_per_second >= 50000", met: perSecond >= 50_000, note: "mix: \(proportions)")
    }
}
