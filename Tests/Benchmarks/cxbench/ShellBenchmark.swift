import Foundation

/// End to end through `cxshell serve`: pushes per second from request line to
/// delivery line, piped from a generator, as a test driver in another language would.
enum ShellBenchmark {
    static func run(executable: URL) {
        let pushes = 50_000
        var input = """
            {"op":"device","platform":"ios"}
            {"op":"launch"}
            {"op":"call","plugin":"push","method":"register"}
            {"op":"subscribe","key":"push","plugin":"push","stream":"events"}

            """
        let line =
            #"{"op":"apns","headers":{"apns-topic":"com.example.app","apns-push-type":"background","apns-priority":"5"},"body":{"aps":{"content-available":1},"type":"sync","n":1}}"#
        input += String(repeating: line + "\n", count: pushes)
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
            report("shell_serve_pushes", [], target: "pushes_per_second >= 20000", met: false)
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
        let deliveries = output.split(separator: UInt8(ascii: "\n")).filter {
            $0.starts(with: Array(#"{"delivery""#.utf8))
        }
        precondition(deliveries.count == pushes, "expected \(pushes) deliveries, got \(deliveries.count)")
        let perSecond = Double(pushes) / seconds
        report(
            "shell_serve_pushes", [("pushes", Double(pushes)), ("pushes_per_second", perSecond)],
            target: "pushes_per_second >= 20000", met: perSecond >= 20_000)
    }
}
