import Foundation
import HTTPMessage
import Testing

@testable import ShellKit
@testable import SimulatedDevice

/// A log entry keeps its request's fields, body and answer as bytes of its own
/// (`PackedRecord`), and reads them back as values: every part must come back as it
/// went in, whatever the slot held before.
struct PackedRecordTests {
    /// What a record holds of its request and answer, as comparable values.
    struct Parts: Equatable {
        var fields: [[UInt8]]?
        var serverName: String?
        var tls = false
        var http2 = false
        var requestBody: [UInt8]?
        var body: [UInt8]?
        var exchangeTLS: Bool?
        var exchangeHTTP2: Bool?
        var responseHeaders: [String]?
        var responseBody: [UInt8]?

        init(_ record: RequestLog.Record) {
            if case .network(let request) = record.request {
                var fields: [[UInt8]] = []
                request.headers.forEachField { name, value in
                    fields.append(Array(name))
                    fields.append(Array(value))
                }
                self.fields = fields
                serverName = request.serverName
                tls = request.tls
                http2 = request.http2
                requestBody = request.body
            }
            body = record.body
            if let exchange = record.exchange {
                exchangeTLS = exchange.tls
                exchangeHTTP2 = exchange.http2
                responseHeaders = exchange.responseHeaders.flatMap { [$0.name, $0.value] }
                responseBody = exchange.responseBody
            }
        }
    }

    /// A network request and its answer, their parts drawn by `next`.
    static func exchange(_ next: () -> Int) -> (HTTPRequest, HTTPResponse) {
        func bytes(_ most: Int) -> [UInt8] { (0..<(next() % (most + 1))).map { _ in UInt8(next() % 256) } }
        func text(_ most: Int) -> String {
            String((0..<(next() % (most + 1))).map { _ in ["a", "é", "\"", "👋", ":", "\u{0}"][next() % 6] })
        }
        // Names and values of any bytes (the transport's), empty ones, repeated names.
        let fields = (0..<(next() % 12)).map { _ in (bytes(next() % 2 == 0 ? 3 : 300), bytes(200)) }
        let headers = HTTPHeaders(count: fields.count) { index in
            (
                fields[index].0.withUnsafeBytes { UnsafeRawBufferPointer(start: $0.baseAddress, count: $0.count) },
                fields[index].1.withUnsafeBytes { UnsafeRawBufferPointer(start: $0.baseAddress, count: $0.count) }
            )
        }
        let request = HTTPRequest(
            headers: headers, body: next() % 3 == 0 ? [] : bytes(next() % 2 == 0 ? 40 : 9000),
            serverName: next() % 2 == 0 ? nil : text(20), tls: next() % 2 == 0, http2: next() % 2 == 0)
        let response = HTTPResponse(
            status: 200, headers: (0..<(next() % 4)).map { _ in (text(12), text(40)) },
            body: bytes(next() % 2 == 0 ? 30 : 5000))
        return (request, response)
    }

    @Test func everyPartComesBackAsItWentInThroughOneSlot() {
        var generator = IDGenerator(seed: 0xC0FFEE)  // replayable
        func next() -> Int { Int.random(in: 0...Int.max, using: &generator) }
        // One slot for all of them, as a ring's is: large records, then small, then large.
        var packed = PackedRecord()
        for index in 0..<3_000 {
            let (request, response) = Self.exchange(next)
            // What the network door kept before records were packed: the reference.
            var expected = RequestLog.Record(request: .network(request))
            if !request.body.isEmpty { expected.body = request.body }
            expected.exchange = .init(
                tls: request.tls, http2: request.http2, responseHeaders: response.headers, responseBody: response.body)
            packed.clear()
            packed.take(network: request, answer: response)
            #expect(Parts(packed.restore(into: .empty)) == Parts(expected), "record \(index)")
        }
    }

    /// A slot writes a record up to half again as large as the one that sized it over the
    /// bytes it has, gets new bytes for a larger one, and gives its bytes back when a large
    /// record (over 4 KiB) sized them and the next is under half of it: a ring of 10,000
    /// entries does not keep one large body's room in each slot it once passed through.
    @Test func aSlotKeepsItsBytesUnlessTheyAreFarTooMany() {
        var packed = PackedRecord()
        func take(body: Int) -> Int {
            let request = HTTPRequest(
                headers: [(":method", "POST"), (":path", "/3/device/aa")], body: [UInt8](repeating: 65, count: body),
                serverName: nil, tls: false, http2: true)
            packed.clear()
            packed.take(network: request, answer: HTTPResponse(status: 200))
            #expect(Parts(packed.restore(into: .empty)).requestBody == request.body, "a body of \(body) bytes")
            return packed.bytesHeld
        }
        let first = take(body: 600)
        #expect(first > 600)
        #expect(take(body: 300) == first)  // kept
        #expect(take(body: 880) == first)  // half again as large: kept
        let grown = take(body: 1_100)
        #expect(grown > 1_100)
        let large = take(body: 9_000)
        #expect(large > 9_000)
        #expect(take(body: 5_000) == large)  // over half: kept
        let small = take(body: 200)
        #expect(small > 200 && small < 1_000)  // under half: given back
    }

    /// A slot's bytes are the slot's own: an entry read before its slot is used again keeps
    /// what it was, and the slot's next record is its own.
    @Test func anEntryReadBeforeItsSlotIsReusedKeepsItsRecord() throws {
        var log = RequestLog(max: 1)
        func append(_ path: String, body: String) {
            log.append(source: "apns", status: 200, at: 0) { record in
                let request = HTTPRequest(
                    headers: [(":method", "POST"), (":path", path)], body: Array(body.utf8), serverName: nil,
                    tls: false, http2: true)
                record.keep(network: request, answer: HTTPResponse(status: 200))
            }
        }
        append("/3/device/aa", body: #"{"n":1}"#)
        let first = try #require(log.entry(1))
        append("/3/device/bb", body: #"{"n":22}"#)
        let second = try #require(log.entry(2))
        #expect(first.summary.contains(#""path":"/3/device/aa""#) && first.summary.contains(#"{\"n\":1}"#))
        #expect(second.summary.contains(#""path":"/3/device/bb""#) && second.summary.contains(#"{\"n\":22}"#))
    }

    /// An entry kept packed reads as one kept as it was filled (as the log keeps them
    /// while a stream is open): the same text and the same HAR entry, for network requests
    /// with their answers and for lines, through slots used again.
    @Test func aPackedEntryReadsAsOneKeptAsFilled() throws {
        var packed = RequestLog(max: 2)
        var unpacked = RequestLog(max: 2)
        for round in 0..<5 {
            func fill(_ record: inout RequestLog.Record) {
                guard round % 2 == 0 else {
                    record = RequestLog.Record { $0.member("op", "apns") }
                    record.body = Array(#"{"op":"apns","n":\#(round)}"#.utf8)
                    return
                }
                let request = HTTPRequest(
                    headers: [
                        (":method", "POST"), (":path", "/3/device/\(round)?k=secret"),
                        (":authority", "api.push.apple.com"),
                        ("authorization", "bearer a.b.c"), ("apns-topic", "com.example.app"), ("x", "é\"\u{1}"),
                    ],
                    body: Array(#"{"aps":{"alert":"é"}}"#.utf8), serverName: "api.push.apple.com", tls: true,
                    http2: true)
                // As the network door keeps them: packed, unless a stream is handed the entry.
                record.keep(
                    network: request,
                    answer: HTTPResponse(status: 200, headers: [("apns-id", "A-\(round)")], body: [1, 2]))
                record.effect = "delivered"
            }
            let seq = packed.append(source: "apns", status: 200, at: Int64(round), fill)
            let appended = unpacked.appendUnpacked(source: "apns", status: 200, at: Int64(round), fill)
            #expect(appended)
            let handed = unpacked.newestEntry()
            let kept = try #require(packed.entry(seq))
            #expect(kept.text == handed.text && kept.summary == handed.summary)
            #expect(kept.searchable == handed.searchable)
            #expect(HARExport.entry(kept) == HARExport.entry(handed))
            if round % 2 == 0 { #expect(kept.text.contains(#""path":"/3/device/\#(round)?k="#)) }
        }
    }

    /// A slot keeps its bytes for the next record, not the record: a line's entry in the
    /// place of a network request's shows no trace of that request.
    @Test func aLineInANetworkRequestsSlotShowsNothingOfIt() throws {
        var log = RequestLog(max: 1)
        log.append(source: "apns", status: 200, at: 0) { record in
            record.keep(
                network: HTTPRequest(
                    headers: [(":method", "POST"), (":path", "/3/device/aa")], body: Array("{}".utf8), serverName: nil,
                    tls: false, http2: true),
                answer: HTTPResponse(status: 200, headers: [("apns-id", "A")]))
        }
        let seq = log.append(source: "line", status: 200, at: 1) { $0.request = .members { $0.member("op", "tap") } }
        let entry = try #require(log.entry(seq))
        #expect(
            entry.text
                == #"{"seq":2,"time":"1970-01-01T00:00:00.001Z","source":"line","request":{"op":"tap"},"status":200,"deliveries":[]}"#
        )
        #expect(HARExport.entry(entry) == nil)
    }
}
