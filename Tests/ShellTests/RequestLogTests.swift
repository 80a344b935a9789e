import Foundation
import HTTPMessage
import OrderedJSON
import Testing

@testable import ShellKit

/// The log entry's text (inspector.md, "The log"), as the API and the stream show it:
/// written straight into bytes, so each member, separator and escape is checked here.
struct RequestLogTests {
    @Test func timestampsAreRFC3339InUTCWithMilliseconds() {
        #expect(RequestLog.timestamp(0) == "1970-01-01T00:00:00.000Z")
        #expect(RequestLog.timestamp(951_782_400_999) == "2000-02-29T00:00:00.999Z")
        #expect(RequestLog.timestamp(1_796_140_532_045) == "2026-12-01T15:55:32.045Z")
    }

    /// A renderer copies the text up to the milliseconds from the last entry's when both
    /// fall in one second: each time must read as it does alone, whichever second came before
    /// (the same, the next, an earlier day, one before 1970, and back).
    @Test func timesWrittenOneAfterAnotherReadAsTheyDoAlone() {
        let base: Int64 = 1_796_140_532_045
        let times: [Int64] = [
            base, base, base + 1, base - 45, base + 954, base + 955, base + 86_400_000, base, -1, -1_000, -999, 0, 999,
            1_000, base - 46,
        ]
        var memo = RenderMemo()
        var out = ByteOutput()
        for milliseconds in times {
            let start = out.count
            RequestLog.timestamp(milliseconds, into: &out, memo: &memo)
            let written = out.withBytes { String(decoding: $0[start...], as: UTF8.self) }
            #expect(written == RequestLog.timestamp(milliseconds), "\(milliseconds) ms")
        }
    }

    /// The date is arithmetic, not the C library's: it must agree with `gmtime_r` on every
    /// day, the century and 400-year leap rules included, and on days before 1970.
    @Test func timestampsAgreeWithTheCLibrarysCalendar() {
        func expected(_ milliseconds: Int64) -> String {
            var seconds = time_t(milliseconds.dividedRoundingDown(by: 1000))
            var parts = tm()
            gmtime_r(&seconds, &parts)
            let millisecond = milliseconds - milliseconds.dividedRoundingDown(by: 1000) * 1000
            return String(
                format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                parts.tm_hour, parts.tm_min, parts.tm_sec, Int32(millisecond))
        }
        let day: Int64 = 86_400_000
        var random = SystemRandomNumberGenerator()
        // Every day from 1899-12 to 2101-03 (1900 and 2100 are not leap years, 2000 is), and
        // 10,000 days drawn from 1600 to 9999, each at a random time of day and at its last
        // millisecond.
        let everyDay = Int64(-25_598)..<Int64(47_541)
        let drawn = (0..<10_000).map { _ in Int64.random(in: -135_140..<2_932_896, using: &random) }
        for days in Array(everyDay) + drawn {
            for milliseconds in [days * day + Int64.random(in: 0..<day, using: &random), (days + 1) * day - 1] {
                let written = RequestLog.timestamp(milliseconds)
                guard written == expected(milliseconds) else {
                    Issue.record("\(milliseconds) ms: \(written), the C library says \(expected(milliseconds))")
                    return
                }
            }
        }
    }

    @Test func decimalsAreWrittenAsStringWritesThem() {
        var random = SystemRandomNumberGenerator()
        let values: [Int64] =
            [0, 7, 10, -1, -10, 99, 100, .max, .min]
            + (0..<500).map { _ in
                Int64.random(in: .min ... .max, using: &random) >> Int64.random(in: 0...62, using: &random)
            }
        for value in values {
            var bytes: [UInt8] = [UInt8(ascii: "x")]
            JSON.writeDecimal(value, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == "x\(value)")
        }
    }

    @Test func anEntryShowsWhatItWasGivenInOrderWithItsTextEscaped() throws {
        var log = RequestLog(max: 4)
        log.append(source: "apns", status: 400, at: 1_796_140_532_045) { record in
            record = RequestLog.Record { $0.member("op", "apns") }
            record.devices = ["d1"]
            record.body = Array(#"{"a":"b\n"}"#.utf8)
            record.reason = #"Bad"Token"#
            record.chaos = "c1"
            record.deliveries = [#"{"delivery":1}"#]
        }
        log.append(source: "line", status: 200, at: 1_000) { record in
            record = RequestLog.Record { $0.member("op", nil) }
            record.devices = ["d1", "d2"]
            record.error = "tab\there"
            record.effect = "shown"
        }
        let first = try #require(log.entry(1))
        #expect(
            first.summary
                == #"{"seq":1,"time":"2026-12-01T15:55:32.045Z","source":"apns","device":"d1","#
                + #""request":{"op":"apns","body":"{\"a\":\"b\\n\"}"},"status":400,"reason":"Bad\"Token","#
                + #""chaos":"c1","deliveries":[{"delivery":1}]}"#)
        let second = try #require(log.entry(2))
        #expect(
            second.summary
                == #"{"seq":2,"time":"1970-01-01T00:00:01.000Z","source":"line","devices":["d1","d2"],"#
                + #""request":{"op":null},"status":200,"error":"tab\there","effect":"shown","deliveries":[]}"#)
    }

    /// An entry made in the place of one the log let go starts empty: its record is
    /// only what its request filled in, nothing of the entry it replaced.
    @Test func anEntryInTheOldestsPlaceKeepsNothingOfIt() throws {
        var log = RequestLog(max: 1)
        log.append(source: "apns", status: 400, at: 5) { record in
            record.request = .members { $0.member("op", "old") }
            record.body = Array("old body".utf8)
            record.touched("d1")
            record.reason = "BadDeviceToken"
            record.error = "old error"
            record.effect = "old effect"
            record.chaos = "c1"
            record.deliveries = ["{}"]
            record.microseconds = 7
        }
        log.append(source: "line", status: 200, at: 1_000) { $0.request = .members { $0.member("op", "new") } }
        #expect(log.retained == 1 && log.dropped == 1)
        let entry = try #require(log.entry(2))
        #expect(entry.source == "line" && entry.status == 200 && entry.milliseconds == 1_000 && entry.devices.isEmpty)
        #expect(
            entry.summary
                == #"{"seq":2,"time":"1970-01-01T00:00:01.000Z","source":"line","request":{"op":"new"},"#
                + #""status":200,"deliveries":[]}"#)
    }

    @Test func pastItsMaxTheOldestGoOneByOneAndSeqsGoOn() throws {
        var log = RequestLog(max: 3)
        func append(_ source: String) {
            log.append(source: source, status: 200, at: 0) { $0 = RequestLog.Record { $0.member("op", source) } }
        }
        for index in 1...7 { append("s\(index)") }
        #expect(log.retained == 3 && log.dropped == 4 && log.firstSeq == 5)
        #expect(log.entry(4) == nil && log.entry(8) == nil)
        #expect([5, 6, 7].map { log.entry($0)?.source } == ["s5", "s6", "s7"])
        let all = RequestLog.Filter()
        #expect(log.entries(matching: all, limit: 10).map(\.seq) == [5, 6, 7])
        #expect(log.entries(matching: all, after: 5, limit: 10).map(\.seq) == [6, 7])
        #expect(log.entries(matching: all, after: 2, limit: 2).map(\.seq) == [5, 6])
        #expect(log.entries(matching: all, limit: 2, newestFirst: true).map(\.seq) == [7, 6])
        #expect(log.entries(matching: all, after: 6, limit: 5, newestFirst: true).map(\.seq) == [7])
        #expect(log.entries(matching: RequestLog.Filter(source: "s6"), limit: 5).map(\.seq) == [6])
        log.clear()
        #expect(log.retained == 0 && log.firstSeq == 8 && log.entry(7) == nil)
        append("s8")
        append("s9")
        #expect(log.firstSeq == 8 && log.entries(matching: all, limit: 5).map(\.source) == ["s8", "s9"])
    }
    /// A stream's renderer keeps the last secret it redacted for the next entry: each
    /// value must still show as a fresh writer shows it, whatever came before it.
    @Test func aWriterKeepingItsLastRedactionShowsEachValueAsAFreshWriterDoes() {
        let jwt = "bearer eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJUIn0.c2lnbmF0dXJl"
        let values = [
            jwt, jwt,
            // The same length, a claim different: the shown text differs.
            jwt.replacingOccurrences(of: "eyJpc3MiOiJUIn0", with: "eyJpc3MiOiJVIn0"), jwt,
            "key=0123456789abcdefghij", "key=0123456789abcdefghik", "bearer eyJ.bad", "",
            // Not bytes that are characters: redacted as text, after and before those that are.
            "bearer é-token", "bearer é-token", "bearer e-token", jwt,
        ]
        var memo = RenderMemo()
        for value in values {
            let (kept, fresh) = Self.headers(HTTPHeaders([("authorization", value)]), redacts: true, memo: &memo)
            #expect(kept == fresh, "\(value)")
        }
    }

    /// The `headers` member written by a writer that keeps `memo` (and updates it), and by
    /// a fresh one.
    static func headers(_ headers: HTTPHeaders, redacts: Bool, memo: inout RenderMemo) -> (
        kept: [UInt8], fresh: [UInt8]
    ) {
        var kept = RequestLog.JSONWriter()
        kept.redacts = redacts
        kept.memo = memo
        kept.member("headers", headers: headers)
        memo = kept.memo
        var fresh = RequestLog.JSONWriter()
        fresh.redacts = redacts
        fresh.member("headers", headers: headers)
        return (kept.bytes, fresh.bytes)
    }

    /// A stream's renderer keeps the header fields it last wrote, by their place: each
    /// entry's fields must still show as a fresh writer shows them, whatever came before.
    /// Each entry's fields are the last one's with a change of the kinds a client makes
    /// (none, a value, a field more or less, two swapped, the redaction turned), or of a
    /// kind that keeps the bytes and moves the boundary between name and value (with a NUL
    /// in one, the bytes as the fields lie keep their NULs too).
    @Test func aWriterKeepingItsLastFieldsShowsEachEntryAsAFreshWriterDoes() {
        var random = SplitMix(seed: 0x4649_454C)
        let names = [
            "authorization", "apns-topic", "content-length", "x-api-key", "é-name", ":path", "ab", "a", "a\u{0}b",
        ]
        let values = [
            "bearer eyJhbGc.eyJpc3M.c2ln", "com.example", "31", "key=0123456789abcdefghij", "é", "bc", "c", "",
        ]
        var fields = [
            (name: "ab", value: "c"), (name: "authorization", value: values[0]), (name: "a\u{0}b", value: "c"),
        ]
        var redacts = true
        var memo = RenderMemo()
        for round in 0..<3_000 {
            switch Int.random(in: 0..<7, using: &random) {
            case 0: break
            case 1 where !fields.isEmpty:
                fields[Int.random(in: 0..<fields.count, using: &random)].value = values.randomElement(using: &random)!
            case 2 where fields.count < 8:
                fields.insert(
                    (names.randomElement(using: &random)!, values.randomElement(using: &random)!),
                    at: Int.random(in: 0...fields.count, using: &random))
            case 3 where !fields.isEmpty: fields.remove(at: Int.random(in: 0..<fields.count, using: &random))
            case 4 where fields.count > 1: fields.swapAt(0, fields.count - 1)
            case 5: redacts.toggle()
            default:
                // The same bytes, split elsewhere: "ab" "c" and "a" "bc".
                let splits = [[("ab", "c"), ("a", "bc")], [("a\u{0}b", "c"), ("a", "b\u{0}c")]]
                fields = fields.map { field in
                    guard let pair = splits.first(where: { $0[0] == field || $0[1] == field }) else { return field }
                    return pair[0] == field ? pair[1] : pair[0]
                }
            }
            let headers = HTTPHeaders(fields.map { (name: $0.name, value: $0.value) })
            let (kept, fresh) = Self.headers(headers, redacts: redacts, memo: &memo)
            #expect(kept == fresh, "round \(round): \(fields), redacted: \(redacts)")
        }
    }

    /// An entry's request host, authority and body are written from their bytes when those
    /// are their text (a lowercase ASCII host, ASCII), and as text otherwise; either way as
    /// the text reads: `authorityHost` (or else `serverHost`), the authority as sent, and the
    /// body decoded, cut at `shownBodyBytes` on a character in the list and whole at
    /// `/log/{seq}`.
    @Test func anEntrysHostAndBodyAreWhatTheirTextWrites() throws {
        let authorities: [[(name: String, value: String)]] = [
            [(":authority", "api.push.apple.com")], [(":authority", "API.Push.Apple.com:443")],
            [("host", "[::1]:8443")], [(":authority", "hôte.example")], [],
        ]
        let bodies: [[UInt8]] = [
            Array(#"{"aps":{"alert":"x"}}"#.utf8), Array(String(repeating: #"a"b\"#, count: 1_100).utf8),
            Array(String(repeating: "a", count: 4_096).utf8), Array(String(repeating: "é", count: 3_000).utf8),
            Array(String(repeating: "a", count: 4_095).utf8) + Array("é".utf8), [0x7B, 0xFF, 0x7D],
        ]
        for authority in authorities {
            for serverName in [nil, "fcm.googleapis.com"] {
                for body in bodies {
                    let request = HTTPRequest(
                        headers: [(":method", "POST"), (":path", "/x")] + authority, body: body,
                        serverName: serverName, tls: false, http2: true)
                    var log = RequestLog(max: 1)
                    log.append(source: "apns", status: 200, at: 0) {
                        $0.keep(network: request, answer: HTTPResponse(status: 200))
                    }
                    let entry = try #require(log.entry(1))
                    let text = String(decoding: body, as: UTF8.self)
                    let cut = RequestLog.prefix(text, bytes: RequestLog.shownBodyBytes)
                    let host: JSON = (request.authorityHost ?? request.serverHost).map { .string($0) } ?? .null
                    let about = "\(authority), \(serverName ?? "no server name"), \(body.count) bytes"
                    let listed = try JSON.parse(text: entry.summary)
                    #expect(listed["request"]?["host"] == host, "\(about)")
                    let sent: JSON = authority.first.map { .string($0.value) } ?? .null
                    #expect(listed["request"]?["authority"] == sent, "\(about)")
                    #expect(listed["request"]?["body"] == .string(cut), "\(about)")
                    #expect(listed["truncated"] == (cut.utf8.count < text.utf8.count ? true : nil), "\(about)")
                    let whole = try JSON.parse(text: entry.text)
                    #expect(whole["request"]?["body"] == .string(text) && whole["truncated"] == nil, "\(about)")
                }
            }
        }
    }

    /// An entry's path is written from its bytes in place when that is its text and there
    /// is nothing to redact; either way as `Redaction.path` shows the text, `null` when
    /// none was sent.
    @Test(
        arguments: [
            "/3/device/0a1b", "/v2/push/sub-key/s/devices/abc?type=apns2&auth=secret-token-123456789",
            "/publish/k/k/0/c/0?uuid=u", "/x?", "/h\u{e9}?auth=secret-token-123456789", "/a\"b\\c", "", nil,
        ] as [String?])
    func anEntrysPathIsWhatItsTextWrites(path: String?) throws {
        let request = HTTPRequest(
            headers: [(":method", "GET")] + (path.map { [(":path", $0)] } ?? []), body: [], serverName: nil,
            tls: false, http2: true)
        var log = RequestLog(max: 1)
        log.append(source: "pubnub", status: 200, at: 0) {
            $0.keep(network: request, answer: HTTPResponse(status: 200))
        }
        let listed = try JSON.parse(text: try #require(log.entry(1)).summary)
        #expect(listed["request"]?["path"] == path.map { .string(Redaction.path($0)) } ?? .null)
    }

    /// A request's header fields are written from their bytes in place unless a field
    /// needs more (text that is not ASCII, a secret to redact); the reference decodes every
    /// field and redacts each, as the writer once did. Over seeded fields of every kind they
    /// write the same bytes, redacted or not.
    @Test func headerFieldsWrittenFromTheirBytesAreWhatTheirTextWrites() {
        func reference(_ pairs: [(name: String, value: String)], redacts: Bool) -> [UInt8] {
            var out = Array(#""headers":{"#.utf8)
            var written = 0
            for pair in pairs where pair.name.utf8.first != UInt8(ascii: ":") {
                if written > 0 { out.append(UInt8(ascii: ",")) }
                written += 1
                JSON.writeString(pair.name, to: &out)
                out.append(UInt8(ascii: ":"))
                JSON.writeString(redacts ? Redaction.header(name: pair.name, value: pair.value) : pair.value, to: &out)
            }
            return out + Array("}".utf8)
        }
        let namePieces: [[UInt8]] = [
            Array(":path".utf8), Array("authorization".utf8), Array("Authorization".utf8), Array("x-api-key".utf8),
            Array("apns-topic".utf8), Array("cookie".utf8), Array("é".utf8), [0xFF], [0x0D], Array("-".utf8),
        ]
        let valuePieces: [[UInt8]] = [
            Array("bearer ".utf8), Array("eyJhbGc.eyJpc3M.".utf8), Array("c2ln".utf8), Array(" ".utf8), [0x22],
            [0x5C], [0x0A], [0x0D], [0x01], Array("é".utf8), [0xE2, 0x82], [0xFF], Array("key=".utf8),
            Array("a".utf8), Array("0123456789abcdef".utf8),
        ]
        var random = SplitMix(seed: 0x4C4F_4748)
        func bytes(_ pieces: [[UInt8]], _ most: Int) -> [UInt8] {
            (0..<Int.random(in: 1...most, using: &random)).flatMap { _ in pieces.randomElement(using: &random)! }
        }
        for round in 0..<3_000 {
            let fields = (0..<Int.random(in: 0...6, using: &random)).map { _ in
                (name: bytes(namePieces, 2), value: bytes(valuePieces, 8))
            }
            let headers = HTTPHeaders(count: fields.count) { index in
                fields[index].name.withUnsafeBytes { name in fields[index].value.withUnsafeBytes { (name, $0) } }
            }
            let pairs = fields.map {
                (name: String(decoding: $0.name, as: UTF8.self), value: String(decoding: $0.value, as: UTF8.self))
            }
            for redacts in [false, true] {
                var writer = RequestLog.JSONWriter()
                writer.redacts = redacts
                writer.member("headers", headers: headers)
                #expect(writer.bytes == reference(pairs, redacts: redacts), "round \(round), redacted: \(redacts)")
            }
            // One field's first value, or another's, as its decoded text writes.
            var writer = RequestLog.JSONWriter()
            writer.member("first", header: "cookie", or: "authorization", in: headers)
            var text = RequestLog.JSONWriter()
            text.member(
                "first", pairs.first { $0.name == "cookie" }?.value ?? pairs.first { $0.name == "authorization" }?.value
            )
            #expect(writer.bytes == text.bytes, "round \(round)")
        }
    }
}

extension Int64 {
    fileprivate func dividedRoundingDown(by divisor: Int64) -> Int64 {
        let (quotient, remainder) = quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? quotient - 1 : quotient
    }
}
