import CXHost
import Foundation
import FrontDoor
import HTTPMessage
import Testing

/// The front door handing its requests to a second thread (`FrontDoor(batches:)`): the
/// bound on requests in hand, forced by holding the handling thread at a gate.
@Suite(.serialized) struct RequestHandoffTests {
    @Test func requestsPastTheBoundAreAnswered503AndNeverHandled() throws {
        let ca = try TestCA.ensure(in: NSTemporaryDirectory() + "cx-handoff-\(UUID().uuidString)")
        let gate = Monitor(false)
        let handled = Monitor(0)
        let door = try FrontDoor(
            address: "127.0.0.1", port: 0, ca: ca, tunnelHosts: { _ in false },
            batches: { requests in
                gate.wait(until: { $0 }, then: { _ in })
                handled.withLock { $0 += requests.count }
                return requests.map { _ in HTTPResponse(status: 200, body: Array("done\n".utf8)) }
            })
        defer { door.stop() }
        // 40 connections of 100 streams: 4,000 requests at once, more than the bound.
        let total = 4_000
        let h2load = Process()
        h2load.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        h2load.arguments = ["h2load", "-n", "\(total)", "-c", "40", "-m", "100", "http://127.0.0.1:\(door.port)/x"]
        let output = Pipe()
        h2load.standardOutput = output
        try h2load.run()
        // The gate holds: the door keeps taking requests until the bound, then answers 503.
        let limit = 3_072
        var waited = 0
        while door.requestsInHand < limit || door.requestsRefused < total - limit, waited < 3_000 {
            usleep(10_000)
            waited += 1
        }
        #expect(door.requestsInHand == limit && door.requestsRefused == total - limit)
        #expect(handled.withLock { $0 } == 0)
        gate.withLock { open in
            open = true
            gate.broadcast()
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        h2load.waitUntilExit()
        let codes = try #require(text.split(separator: "\n").first { $0.hasPrefix("status codes:") })
        // "status codes: 3072 2xx, 0 3xx, 0 4xx, 928 5xx"
        let numbers = codes.split(separator: " ").compactMap { Int($0) }
        #expect(numbers == [limit, 0, 0, total - limit], "\(codes)")
        #expect(handled.withLock { $0 } == limit)
        #expect(door.requestsInHand == 0)
    }
}
