import CXHost
import Foundation
import FrontDoor
import HTTPMessage
import Testing

/// The front door handing its requests to a second thread (`FrontDoor(batches:)`): the
/// bound on requests in hand, forced by holding the handling thread at a gate.
@Suite(.serialized) struct RequestHandoffTests {
    /// What the handler holds (the shell's world) is free once `stop` returns, while the
    /// door itself is still held: a world still alive when the process exits shows as a
    /// leak under LeakSanitizer (a tray's notification is held through an enum's tagged
    /// pointer, which it cannot follow).
    @Test func stopLetsGoOfTheHandlerBeforeItReturns() throws {
        let scratch = ScratchDirectory("cx-handoff")
        defer { scratch.remove() }
        let ca = try TestCA.ensure(in: scratch.path)
        final class World: Sendable {}
        weak var held: World?
        let door = try {
            let world = World()
            held = world
            return try FrontDoor(
                address: "127.0.0.1", port: 0, ca: ca, tunnelHosts: { _ in false },
                batches: { batch in
                    withExtendedLifetime(world) { batch.map { _ in HTTPResponse(status: 200) } }
                })
        }()
        #expect(held != nil)
        door.stop()
        #expect(held == nil)
        withExtendedLifetime(door) {}
    }

    /// `stop` returns only once the handling thread has ended, so what a thread frees as it
    /// ends (OpenSSL's per-thread error queue and random generators, on the thread that
    /// verified and minted credentials) is freed before the process may exit. A
    /// thread-specific value with a slow destructor stands for that state.
    @Test func stopReturnsOnlyOnceTheHandlingThreadHasEnded() throws {
        let scratch = ScratchDirectory("cx-handoff")
        defer { scratch.remove() }
        let ca = try TestCA.ensure(in: scratch.path)
        let end = ThreadEnd()
        let door = try FrontDoor(
            address: "127.0.0.1", port: 0, ca: ca, tunnelHosts: { _ in false },
            batches: { batch in
                end.watchThisThread()
                return batch.map { _ in HTTPResponse(status: 200) }
            })
        let client = try #require(HTTP2TestClient(port: door.port))
        let stream = client.request("GET", "127.0.0.1", "/x", body: 0)
        for _ in 0..<3_000 where client.statuses[stream] == nil {
            if !client.pump() { usleep(10_000) }
        }
        #expect(client.statuses[stream] == "200")
        door.stop()
        #expect(end.happened)
    }

    @Test func requestsPastTheBoundAreAnswered503AndNeverHandled() throws {
        let scratch = ScratchDirectory("cx-handoff")
        defer { scratch.remove() }
        let ca = try TestCA.ensure(in: scratch.path)
        let gate = Monitor(false)
        let handled = Monitor(0)
        let largestBatch = Monitor(0)
        let door = try FrontDoor(
            address: "127.0.0.1", port: 0, ca: ca, tunnelHosts: { _ in false },
            batches: { batch in
                gate.wait(until: { $0 }, then: { _ in })
                handled.withLock { $0 += batch.count }
                largestBatch.withLock { $0 = max($0, batch.count) }
                return batch.map { _ in HTTPResponse(status: 200, body: Array("done\n".utf8)) }
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
        // The thousands that waited at the gate were taken at once and handed on 32 at a time.
        #expect(largestBatch.withLock { $0 } == 32)
    }

    /// One count for answers given later (the transport's): held answers (long polls
    /// here) and requests in hand share it, and a request the transport could not hold is
    /// refused with the busy answer before it is handed over, so every request handled is
    /// answered with its own answer. The gate keeps the pushes in hand while more arrive.
    @Test func aRequestTakenIsAlwaysAnsweredWithItsOwnAnswer() throws {
        let scratch = ScratchDirectory("cx-handoff")
        defer { scratch.remove() }
        let ca = try TestCA.ensure(in: scratch.path)
        let gate = Monitor(false)
        let polls = Monitor<[HTTPLater]>([])
        let delivered = Monitor(0)
        let door = try FrontDoor(
            address: "127.0.0.1", port: 0, ca: ca, tunnelHosts: { _ in false },
            busy: { _ in HTTPResponse(status: 503, body: Array("busy".utf8)) },
            batches: { batch in
                batch.map { request in
                    if request.path?.hasPrefix("/poll") == true {
                        var response = HTTPResponse(status: 500)
                        response.later = HTTPLater(waitMilliseconds: 0)
                        polls.withLock { $0.append(response.later!) }
                        return response
                    }
                    gate.wait(until: { $0 }, then: { _ in })
                    delivered.withLock { $0 += 1 }
                    return HTTPResponse(status: 200)
                }
            })
        defer { door.stop() }
        door.limitHeldAnswers(10)
        let client = try #require(HTTP2TestClient(port: door.port))
        for number in 0..<6 { _ = client.request("GET", "127.0.0.1", "/poll/\(number)", body: 0) }
        for _ in 0..<3_000 where polls.withLock({ $0.count }) < 6 {
            if !client.pump() { usleep(10_000) }
        }
        #expect(polls.withLock { $0.count } == 6)
        let pushes = (0..<10).map { client.request("POST", "127.0.0.1", "/push/\($0)", body: 0) }
        for _ in 0..<3_000 where door.requestsInHand + door.requestsRefused < 10 {
            if !client.pump() { usleep(10_000) }
        }
        #expect(door.requestsInHand == 4 && door.requestsRefused == 6)
        gate.withLock { open in
            open = true
            gate.broadcast()
        }
        for _ in 0..<3_000 where pushes.contains(where: { client.statuses[$0] == nil }) {
            if !client.pump() { usleep(10_000) }
        }
        let statuses = pushes.map { client.statuses[$0] }
        #expect(statuses.filter { $0 == "200" }.count == delivered.withLock { $0 })
        #expect(statuses.filter { $0 == "200" }.count == 4 && statuses.filter { $0 == "503" }.count == 6, "\(statuses)")
        for later in polls.withLock({ $0 }) { later.send(.complete(HTTPResponse(status: 204))) }
    }

    /// What the handoff tracks of answers given later shrinks as they end: long polls the
    /// handler answers, and requests whose client left before their batch settled. (It
    /// once kept every one: +2.6 MB per 10,000 long polls.)
    @Test func theAnswersTrackedShrinkWhenAnsweredOrGone() throws {
        let scratch = ScratchDirectory("cx-handoff")
        defer { scratch.remove() }
        let ca = try TestCA.ensure(in: scratch.path)
        let gate = Monitor(true)
        let polls = Monitor<[HTTPLater]>([])
        let door = try FrontDoor(
            address: "127.0.0.1", port: 0, ca: ca, tunnelHosts: { _ in false },
            batches: { batch in
                gate.wait(until: { $0 }, then: { _ in })
                return batch.map { request in
                    guard request.path?.hasPrefix("/poll") == true else { return HTTPResponse(status: 200) }
                    var response = HTTPResponse(status: 500)
                    response.later = HTTPLater(waitMilliseconds: 0)
                    polls.withLock { $0.append(response.later!) }
                    return response
                }
            })
        defer { door.stop() }
        let client = try #require(HTTP2TestClient(port: door.port))
        let streams = (0..<300).map { client.request("GET", "127.0.0.1", "/poll/\($0)", body: 0) }
        client.pump { polls.withLock { $0.count } == 300 }
        #expect(door.answersTracked == 300)
        for later in polls.withLock({ $0 }) { later.send(.complete(HTTPResponse(status: 204))) }
        client.pump { streams.allSatisfy { client.statuses[$0] != nil } }
        #expect(streams.allSatisfy { client.statuses[$0] == "204" })
        #expect(door.answersTracked == 0)
        // Clients that leave while their requests wait at the gate.
        gate.withLock { $0 = false }
        do {  // the client closes its connection as it goes out of scope
            let leaving = try #require(HTTP2TestClient(port: door.port))
            for number in 0..<50 { _ = leaving.request("POST", "127.0.0.1", "/push/\(number)", body: 0) }
            leaving.pump { door.requestsInHand == 50 }
        }
        for _ in 0..<3_000 where door.answersTracked < 50 { usleep(10_000) }
        #expect(door.answersTracked == 50)
        gate.withLock { open in
            open = true
            gate.broadcast()
        }
        for _ in 0..<3_000 where door.requestsInHand > 0 { usleep(10_000) }
        #expect(door.answersTracked == 0)
    }

    /// Thousands of answers held at once, settled in a shuffled order while more
    /// requests arrive: each reaches its own stream (the transport finds a held answer
    /// by its id in O(1), and its removals must leave every other one findable).
    @Test func answersHeldAtOnceAndSettledOutOfOrderEachReachTheirOwnStream() throws {
        let scratch = ScratchDirectory("cx-handoff")
        defer { scratch.remove() }
        let ca = try TestCA.ensure(in: scratch.path)
        let held = Monitor<[(number: Int, later: HTTPLater)]>([])
        let door = try FrontDoor(
            address: "127.0.0.1", port: 0, ca: ca, tunnelHosts: { _ in false },
            batches: { batch in
                batch.map { request in
                    // Held with no deadline: the answer comes through `later`.
                    let later = HTTPLater(waitMilliseconds: 0)
                    let number = Int(request.path?.split(separator: "/").last ?? "") ?? -1
                    held.withLock { $0.append((number, later)) }
                    var response = HTTPResponse(status: 500)
                    response.later = later
                    return response
                }
            })
        defer { door.stop() }
        // The status each request is owed: its number, folded into 200…299.
        func status(_ number: Int) -> String { String(200 + number % 100) }
        var clients: [HTTP2TestClient] = []
        var expected: [(client: Int, stream: Int32, status: String)] = []
        func open(_ numbers: Range<Int>, perConnection: Int = 900) throws {
            for first in stride(from: numbers.lowerBound, to: numbers.upperBound, by: perConnection) {
                let client = try #require(HTTP2TestClient(port: door.port))
                clients.append(client)
                for number in first..<min(first + perConnection, numbers.upperBound) {
                    let stream = client.request("GET", "127.0.0.1", "/held/\(number)", body: 0)
                    expected.append((clients.count - 1, stream, status(number)))
                }
            }
            let count = numbers.upperBound - numbers.lowerBound
            let before = held.withLock { $0.count }
            pumpAll { held.withLock { $0.count } >= before + count }
        }
        // Every client in turn (none may wait on another), until `done` or 30 s.
        func pumpAll(until done: () -> Bool) {
            for _ in 0..<3_000 where !done() {
                if !clients.map({ $0.pump() }).contains(true) { usleep(10_000) }
            }
        }
        var generator = SplitMix(seed: 22)
        func settle(_ count: Int) {
            let taken = held.withLock { all -> [(number: Int, later: HTTPLater)] in
                all.shuffle(using: &generator)
                defer { all.removeFirst(count) }
                return Array(all.prefix(count))
            }
            for (number, later) in taken {
                later.send(.complete(HTTPResponse(status: Int(status(number))!)))
            }
        }
        try open(0..<2_700)
        #expect(held.withLock { $0.count } == 2_700)
        settle(1_350)
        // New answers go into the index while half of the first ones are still in it.
        try open(2_700..<3_000)
        settle(held.withLock { $0.count })
        pumpAll { expected.allSatisfy { clients[$0.client].statuses[$0.stream] != nil } }
        let wrong = expected.filter { clients[$0.client].statuses[$0.stream] != $0.status }
        #expect(
            wrong.count == 0, "of \(expected.count) streams, these got another's answer or none: \(wrong.prefix(5))")
    }
}

/// Tells when a thread it watches has ended: a thread-specific value whose destructor,
/// run as the thread exits, takes its time (100 ms) before it says so.
final class ThreadEnd: @unchecked Sendable {
    private var key = pthread_key_t()
    private let ended = Monitor(false)

    init() {
        pthread_key_create(&key) { value in
            usleep(100_000)
            let end = Unmanaged<ThreadEnd>.fromOpaque(value!).takeRetainedValue()
            end.ended.withLock { $0 = true }
        }
    }

    deinit { pthread_key_delete(key) }

    /// Watches the calling thread (once per thread).
    func watchThisThread() {
        guard pthread_getspecific(key) == nil else { return }
        pthread_setspecific(key, Unmanaged.passRetained(self).toOpaque())
    }

    var happened: Bool { ended.withLock { $0 } }
}

/// A seeded generator, so a shuffle that finds a bug finds it again.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
