import CXHost
import Foundation
import OrderedJSON
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The front door's bounds (front-door.md, "Robustness, limits and speed"), each proved
/// by a client that breaks it: one that never reads, one that never finishes its bodies,
/// a process with too few descriptors. Memory is the shell's own peak resident size
/// (`VmHWM`), read from `/proc` before and after; every flood is bounded in bytes.
@Suite(.serialized) struct FrontDoorLimitsTests {
    typealias Shell = FrontDoorTests.Shell

    /// Growth of the shell's peak resident memory past which a bound is broken (KiB).
    static let ceilingKiB = 16 * 1024

    /// Under AddressSanitizer every byte held costs an eighth more in shadow memory, and
    /// every allocation its redzones (and its allocator keeps more per size class): a
    /// ceiling there is twice as large.
    static func ceiling(_ kibibytes: Int, for shell: Shell) -> Int {
        let maps = (try? String(contentsOfFile: "/proc/\(shell.process.processIdentifier)/maps", encoding: .utf8)) ?? ""
        return maps.contains("asan") ? kibibytes * 2 : kibibytes
    }

    /// A shell whose memory means what the transport's bounds mean. Under AddressSanitizer (`make
    /// sanitize`) freed memory waits in a quarantine of 256 MiB before reuse, which would
    /// count every allocation a flood churns through; a small one keeps the peak honest.
    func measuredShell() throws -> Shell {
        let asan = ProcessInfo.processInfo.environment["ASAN_OPTIONS"].map { $0 + ":" } ?? ""
        // No log: its memory is bounded by --log-max (InspectorTests), and these tests
        // measure the transport's.
        return try Shell(
            environment: ["ASAN_OPTIONS": asan + "quarantine_size_mb=1:thread_local_quarantine_size_kb=64"],
            arguments: ["--log-max", "0"])
    }

    /// What a flood did, measured: its own result, the shell's peak memory growth and the
    /// ceiling for it.
    struct Flooded<Result> {
        let result: Result
        let grownKiB: Int
        let ceilingKiB: Int
    }

    /// Floods a measured shell that has one ready device, then checks that a well-behaved
    /// client is still served (a push, its delivery) and that the shell ends cleanly.
    func afterFlooding<Result>(
        ceiling: Int = ceilingKiB, _ flood: (Shell) throws -> Result
    ) throws -> Flooded<Result> {
        let shell = try measuredShell()
        let token = try FrontDoorTests().iosDevice(shell)
        let lines = shell.drainOutput()
        let before = shell.memoryKiB("VmHWM")
        let result = try flood(shell)
        let grown = shell.memoryKiB("VmHWM") - before
        #expect(try push(shell, token).hasPrefix("HTTP/2 200"))
        #expect(deliveries(in: lines) == 1)
        let measured = Flooded(result: result, grownKiB: grown, ceilingKiB: Self.ceiling(ceiling, for: shell))
        #expect(shell.stop() == 0)
        return measured
    }

    /// The delivery lines the shell wrote. It writes them before it answers, but the test's
    /// reader takes them from the pipe on its own thread: wait for it (at most 10 s).
    func deliveries(in lines: Monitor<[String]>, expected: Int = 1) -> Int {
        let deadline = Date().addingTimeInterval(10)
        var count = 0
        repeat {
            count = lines.withLock { $0.filter { $0.hasPrefix(#"{"delivery""#) }.count }
            if count >= expected { break }
            usleep(1_000)
        } while Date() < deadline
        return count
    }

    /// A push over h2c from curl: how a well-behaved client finds the shell afterwards.
    func push(_ shell: Shell, _ token: String) throws -> String {
        try shell.curl([
            "--http2-prior-knowledge", "-H", "apns-topic: com.example.app", "-H",
            "authorization: \(FrontDoorTests.providerToken)", "-d", #"{"aps":{"alert":"still here"}}"#,
            "http://127.0.0.1:\(shell.port)/3/device/\(token)",
        ])
    }

    /// Sends `unit` over and over without reading, until the shell closes the connection,
    /// stops reading it (the socket takes nothing for a second), or `limit` bytes went.
    /// Returns the bytes sent and whether the shell closed it.
    func flood(_ socket: Int32, preface: [UInt8] = [], unit: [UInt8], limit: Int) -> (sent: Int, closed: Bool) {
        _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
        let burst = preface + Array([[UInt8]](repeating: unit, count: max(1, 65536 / unit.count)).joined())
        var sent = 0
        var offset = 0
        while sent < limit {
            let count = burst[offset...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 {
                guard errno == EAGAIN else { return (sent, true) }
                var descriptor = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
                if poll(&descriptor, 1, 1000) == 0 { return (sent, false) }
                if descriptor.revents & Int16(POLLERR | POLLHUP) != 0 { return (sent, true) }
                continue
            }
            sent += count
            offset += count
            if offset == burst.count { offset = preface.count }
        }
        return (sent, false)
    }

    /// An h2c client that sends PING frames and never reads: its acks stay in nghttp2's
    /// queue once its unsent output passes the bound, and the queue's own limit closes it.
    @Test func aPingFloodThatNeverReadsIsClosedAndHeldToAFewMiB() throws {
        let flooded = try afterFlooding { shell in
            let socket = try #require(FrontDoorTests.connection(port: shell.port))
            defer { close(socket) }
            let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + [0, 0, 0, 4, 0, 0, 0, 0, 0]
            let ping: [UInt8] = [0, 0, 8, 6, 0, 0, 0, 0, 0] + [1, 2, 3, 4, 5, 6, 7, 8]
            return flood(socket, preface: preface, unit: ping, limit: 256 << 20)
        }
        let (sent, closed) = flooded.result
        print("bound: a PING flood: \(sent) bytes sent, closed \(closed), peak memory +\(flooded.grownKiB) KiB")
        #expect(closed, "the shell took \(sent) bytes of PINGs and neither closed the connection nor stopped reading")
        #expect(flooded.grownKiB < flooded.ceilingKiB, "the peak grew by \(flooded.grownKiB) KiB for \(sent) bytes")
    }

    /// An HTTP/1.1 client that pipelines requests and never reads its answers stops being
    /// read once its unsent answers pass the bound: its sends then block.
    @Test func pipelinedRequestsThatAreNeverReadStopBeingRead() throws {
        let limit = 48 << 20
        let flooded = try afterFlooding { shell in
            let socket = try #require(FrontDoorTests.connection(port: shell.port))
            defer { close(socket) }
            return flood(socket, unit: Array("GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n".utf8), limit: limit).sent
        }
        let sent = flooded.result
        print(
            "bound: pipelined HTTP/1.1: \(sent) bytes sent before the shell stopped reading, +\(flooded.grownKiB) KiB")
        #expect(sent < limit, "the shell went on reading past \(sent) bytes of requests whose answers wait")
        #expect(flooded.grownKiB < flooded.ceilingKiB, "the peak grew by \(flooded.grownKiB) KiB for \(sent) bytes")
    }

    /// Request bodies that never end: the window HTTP/2 gives back stops at the
    /// connection's bound (2 MiB) and, over many connections, at the door's (32 MiB), so a
    /// client that obeys flow control cannot send more, and one that does not is closed.
    @Test func unfinishedBodiesAreBoundedPerConnectionAndInAll() throws {
        let body = (1 << 20) - 1024
        // The clients are the flood's result, so they hold their bodies while the push after
        // it shows that a request that fits its first window is answered all the same.
        let flooded = try afterFlooding(ceiling: 48 * 1024) { shell -> [HTTP2TestClient] in
            // 200 streams on one connection.
            let one = try #require(HTTP2TestClient(port: shell.port))
            for _ in 0..<200 {
                one.request("POST", "fcm.googleapis.com", "/v1/projects/demo/messages:send", body: body, ends: false)
            }
            one.pumpUntilQuiet()
            #expect(!one.closed)
            #expect(one.bodyBytesSent <= (2 << 20) + (128 << 10), "one connection sent \(one.bodyBytesSent) bytes")
            #expect(one.bodyBytesSent >= 1 << 20, "the bound is 2 MiB: \(one.bodyBytesSent) bytes were let in")
            // Forty more, 4 streams each: more than the door holds in all (about 1.1 MiB
            // each gets in, as bodies' buffers double up to the connection's 2 MiB).
            let many = (0..<40).compactMap { _ in HTTP2TestClient(port: shell.port) }
            #expect(many.count == 40)
            for client in many {
                for _ in 0..<4 {
                    client.request(
                        "POST", "fcm.googleapis.com", "/v1/projects/demo/messages:send", body: body, ends: false)
                }
            }
            for _ in 0..<2_000 {
                let moved = many.map { $0.pump() }.contains(true)
                if !moved {
                    var descriptors = many.map { pollfd(fd: $0.socket, events: Int16(POLLIN), revents: 0) }
                    if poll(&descriptors, nfds_t(descriptors.count), 300) == 0 { break }
                }
            }
            return [one] + many
        }
        let all = flooded.result.reduce(0) { $0 + $1.bodyBytesSent }
        print("bound: unfinished bodies: \(flooded.result[0].bodyBytesSent) bytes on one connection, \(all) on 41")
        print("bound: unfinished bodies: peak memory +\(flooded.grownKiB) KiB")
        // The door's 32 MiB, and at most one window (64 KiB) more per connection.
        #expect(all <= (32 << 20) + 41 * 65_536, "41 connections sent \(all) bytes of unfinished bodies")
        #expect(flooded.grownKiB < flooded.ceilingKiB, "the peak grew by \(flooded.grownKiB) KiB for \(all) bytes")
    }

    /// The common default soft limit of 1,024 descriptors would not fit 1,024 connections:
    /// the shell raises its own (to 1,280, within the hard limit).
    @Test func theShellRaisesItsOwnOpenFileLimit() throws {
        let shell = try Shell(ulimit: "-Sn 1024")
        let limits = try String(contentsOfFile: "/proc/\(shell.process.processIdentifier)/limits", encoding: .utf8)
        let line = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max open files") })
        let soft = Int(line.split(separator: " ", omittingEmptySubsequences: true)[3]) ?? 0
        #expect(soft >= 1280, "\(line)")
        #expect(shell.stop() == 0)
    }

    /// Under a hard limit of 64 descriptors, 80 clients: accepting fails with EMFILE, and
    /// the loop waits for a descriptor instead of spinning on the listening socket.
    @Test func runningOutOfDescriptorsNeverSpins() throws {
        let shell = try Shell(ulimit: "-n 64")
        let token = try FrontDoorTests().iosDevice(shell)
        var clients: [Int32] = []
        defer { for socket in clients { close(socket) } }
        for _ in 0..<80 { clients.append(try #require(FrontDoorTests.connection(port: shell.port))) }
        // One round trip on the first client: the loop has seen the others arrive.
        let request = Array("GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        FrontDoorTests.write(request, to: clients[0])
        #expect(FrontDoorTests.answer(on: clients[0]).hasPrefix("HTTP/1.1 404"))
        let ticks = shell.cpuTicks()
        Thread.sleep(forTimeInterval: 1)
        let used = shell.cpuTicks() - ticks
        print("bound: out of descriptors: \(used) ticks of CPU in one second")
        #expect(used < 25, "the shell used \(used) ticks of CPU in one idle second with 80 clients waiting")
        for socket in clients { close(socket) }
        clients.removeAll()
        #expect(try push(shell, token).hasPrefix("HTTP/2 200"))
        #expect(shell.stop() == 0)
    }
}
