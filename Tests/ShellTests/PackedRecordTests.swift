import Foundation
import HTTPMessage
import Testing

@testable import ShellKit

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

    /// A record as the network door fills one, its parts drawn by `next`.
    static func record(_ next: () -> Int) -> RequestLog.Record {
        func bytes(_ most: Int) -> [UInt8] { (0..<(next() % (most + 1))).map { _ in UInt8(next() % 256) } }
        func text(_ most: Int) -> String {
            String((0..<(next() % (most + 1))).map { _ in ["a", "é", "\"", "👋", ":", "\u{0}"][next() % 6] })
        }
        var record = RequestLog.Record(request: .members { _ in })
        let kind = next() % 4
        let body = next() % 3 == 0 ? [] : bytes(next() % 2 == 0 ? 40 : 9000)
        if kind != 0 {
            // Names and values of any bytes (the transport's), empty ones, repeated names.
            let fields = (0..<(next() % 12)).map { _ in (bytes(next() % 2 == 0 ? 3 : 300), bytes(200)) }
            let headers = HTTPHeaders(count: fields.count) { index in
                (
                    fields[index].0.withUnsafeBytes { UnsafeRawBufferPointer(start: $0.baseAddress, count: $0.count) },
                    fields[index].1.withUnsafeBytes { UnsafeRawBufferPointer(start: $0.baseAddress, count: $0.count) }
                )
            }
            record.request = .network(
                HTTPRequest(
                    headers: headers, body: body, serverName: next() % 2 == 0 ? nil : text(20), tls: next() % 2 == 0,
                    http2: next() % 2 == 0))
            if !body.isEmpty { record.body = body }
        } else if next() % 2 == 0 {
            record.body = body
        }
        if kind >= 2 {
            record.exchange = .init(
                tls: next() % 2 == 0, http2: next() % 2 == 0,
                responseHeaders: (0..<(next() % 4)).map { _ in (text(12), text(40)) },
                responseBody: bytes(next() % 2 == 0 ? 30 : 5000))
        }
        return record
    }

    @Test func everyPartComesBackAsItWentInThroughOneSlot() {
        var state: UInt64 = 0xC0FFEE  // SplitMix64: replayable
        func next() -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int(truncatingIfNeeded: (z ^ (z >> 31)) >> 1)
        }
        // One slot for all of them, as a ring's is: large records, then small, then large.
        var packed = PackedRecord()
        for index in 0..<3_000 {
            let original = Self.record(next)
            var filled = original
            packed.clear()
            packed.take(from: &filled)
            // What stays in the record is only what the bytes do not hold.
            if case .network = filled.request { Issue.record("record \(index): the request was kept") }
            #expect(filled.body == nil && filled.exchange == nil, "record \(index)")
            #expect(Parts(packed.restore(into: filled)) == Parts(original), "record \(index)")
        }
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
                record.request = .network(request)
                record.body = request.body
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
                record.request = .network(request)
                record.body = request.body
                record.exchange = .init(
                    tls: true, http2: true, responseHeaders: [("apns-id", "A-\(round)")], responseBody: [1, 2])
                record.effect = "delivered"
            }
            let seq = packed.append(source: "apns", status: 200, at: Int64(round), fill)
            let appended = unpacked.appendHandingEntry(source: "apns", status: 200, at: Int64(round), fill)
            let handed = try #require(appended)
            let kept = try #require(packed.entry(seq))
            #expect(kept.text == handed.text && kept.summary == handed.summary)
            #expect(kept.searchable == handed.searchable)
            #expect(HARExport.entry(kept) == HARExport.entry(handed))
            if round % 2 == 0 { #expect(kept.text.contains(#""path":"/3/device/\#(round)?k="#)) }
        }
    }
}
