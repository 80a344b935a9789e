import Foundation
import OrderedJSON
import Testing

/// The benchmark's fixed-rate client (Tests/Benchmarks/load/fixed_rate.c) against a real
/// `cxshell serve`: every request answered and counted, and each latency counted from the
/// instant the request was due. Chaos latency rules make the waits, so every assertion is
/// a lower bound a slow machine cannot break.
@Suite(.serialized) struct FixedRateClientTests {
    /// Where the client is built: removed when the test process exits, as every run left
    /// one behind.
    static let binaryPath = NSTemporaryDirectory() + "cx-fixed-rate-test-\(getpid())"

    /// The client, built with `cc` once for the suite.
    static let client: URL? = {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Benchmarks/load/fixed_rate.c")
        let binary = URL(fileURLWithPath: binaryPath)
        atexit { unlink(FixedRateClientTests.binaryPath) }
        let cc = Process()
        cc.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        cc.arguments = [
            "cc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", source.path, "-lnghttp2", "-lssl", "-lcrypto",
            "-o", binary.path,
        ]
        guard (try? cc.run()) != nil else { return nil }
        cc.waitUntilExit()
        return cc.terminationStatus == 0 ? binary : nil
    }()

    /// The client's JSON line for `requests` at `rate` a second over `connections`, sent to
    /// one launched, registered iOS device of a shell that has `rule` (its output drained
    /// meanwhile); the shell is stopped, and must end cleanly, before it returns.
    func run(scheme: String = "http", rule: String, rate: Int, requests: Int, connections: Int) throws -> JSON {
        let client = try #require(Self.client, "fixed_rate.c did not build")
        let shell = try FrontDoorTests.Shell()
        defer { #expect(shell.stop() == 0) }
        let token = try FrontDoorTests().iosDevice(shell)
        _ = try shell.send(#"{"op":"chaos","rule":\#(rule)}"#)
        _ = shell.drainOutput()
        let uris = shell.directory + "/uris"
        let body = shell.directory + "/body"
        try "\(scheme)://127.0.0.1:\(shell.port)/3/device/\(token)\n".write(
            toFile: uris, atomically: true, encoding: .utf8)
        try #"{"aps":{"alert":"steady"}}"#.write(toFile: body, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = client
        process.arguments = [
            uris, body, String(rate), String(requests), String(connections), "apns-topic: com.example.app",
            "authorization: \(FrontDoorTests.providerToken)",
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return try JSON.parse(Array(data))
    }

    @Test(arguments: ["http", "https"])
    func everyRequestIsAnsweredAndWaitsAtLeastWhatTheServerHeldIt(scheme: String) throws {
        let result = try run(
            scheme: scheme, rule: #"{"service":"apns","then":{"latency_ms":{"fixed":100}}}"#, rate: 200,
            requests: 100, connections: 2)
        #expect(result["sent"] == 100)
        #expect(result["answered"] == 100)
        #expect(result["ok"] == 100)
        // 100 requests 5 ms apart take at least the schedule and the last one's wait.
        #expect(try #require(result["seconds"]?.numberValue?.doubleValue) >= 0.495 + 0.1)
        #expect(try #require(result["p50_ms"]?.numberValue?.doubleValue) >= 100)
    }

    /// The server takes 1,000 streams on a connection; at 10,000 a second with every answer
    /// held 200 ms, request i (i ≥ 1,000) can only go once one of requests i − 1,000 … i − 1
    /// has been answered, no sooner than 100 ms after it was due. Counted from when it left,
    /// its latency would be the 200 ms wait; counted from when it was due, it is at least
    /// 300 ms, for a third of the requests.
    @Test func aRequestThatCouldNotLeaveOnTimeCountsItsWaitToLeave() throws {
        let result = try run(
            rule: #"{"service":"apns","then":{"latency_ms":{"fixed":200}}}"#, rate: 10_000, requests: 1_500,
            connections: 1)
        #expect(result["answered"] == 1_500)
        #expect(result["ok"] == 1_500)
        #expect(try #require(result["p50_ms"]?.numberValue?.doubleValue) >= 200)
        #expect(try #require(result["p90_ms"]?.numberValue?.doubleValue) >= 300)
    }

    @Test func refusedPushesAreAnsweredButNotOK() throws {
        let result = try run(
            rule: #"{"service":"apns","then":{"answer":"Unregistered"}}"#, rate: 500, requests: 50, connections: 2)
        #expect(result["answered"] == 50)
        #expect(result["ok"] == 0)
    }
}
