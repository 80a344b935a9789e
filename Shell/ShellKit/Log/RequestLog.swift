import Foundation
import HTTPMessage
import OrderedJSON

/// Every request that reached the world, through any door (inspector.md, "The log"): one
/// entry per request, appended when it is answered, after its deliveries. `seq` starts at
/// 1 and grows by one per entry, never reused (not even across `clear`). At most `max`
/// entries are kept; past that the oldest go, and `dropped` counts them.
public struct RequestLog: Sendable {
    /// One entry. It keeps what the request gave it and is rendered only when read, so
    /// that logging costs the request path next to nothing.
    public struct Entry: Sendable {
        public private(set) var seq: Int64
        public private(set) var milliseconds: Int64
        public private(set) var source: String
        public private(set) var status: Int
        /// The record as filled, but for what its `packed` bytes hold.
        fileprivate var filled: Record
        /// Whether the entry shows its secrets whole (`--log-secrets`), or redacted.
        private(set) var secretsShown: Bool

        init(seq: Int64, milliseconds: Int64, source: String, status: Int, secretsShown: Bool) {
            self.seq = seq
            self.milliseconds = milliseconds
            self.source = source
            self.status = status
            self.secretsShown = secretsShown
            filled = .empty
        }

        /// The record as it was filled, made whole again from its packed bytes.
        var record: Record { filled.packed.restore(into: filled) }

        /// Makes this entry a new one, its record empty, in the place of the one it was.
        mutating func reuse(seq: Int64, milliseconds: Int64, source: String, status: Int, secretsShown: Bool) {
            self.seq = seq
            self.milliseconds = milliseconds
            self.source = source
            self.status = status
            self.secretsShown = secretsShown
            // The packed bytes stay, for the next record to write over.
            var packed = PackedRecord()
            swap(&packed, &filled.packed)
            filled = .empty
            packed.clear()
            swap(&packed, &filled.packed)
        }

        public var devices: [String] { filled.devices }

        /// Whether the request touched `device`.
        public func touches(_ device: String) -> Bool { filled.touches(device) }

        /// The entry as JSON text, its request body cut at `shownBodyBytes`.
        public var summary: String { RequestLog.render(self, whole: false) }
        /// The entry as JSON text, its request body whole.
        public var text: String { RequestLog.render(self, whole: true) }

        /// Text a `q` filter looks in: the request, the reason or error, the effect, with
        /// secrets redacted as every read shows them (a search cannot find a secret).
        var searchable: String {
            let record = record
            return [
                String(decoding: record.requestJSON(body: nil, redacted: !secretsShown), as: UTF8.self),
                shown(record.body).map { String(decoding: $0, as: UTF8.self) } ?? "",
                record.reason ?? "", record.error ?? "", record.effect ?? "",
            ].joined(separator: "\n")
        }

        /// `body` (the record's, made whole by the caller) as every read shows it: its
        /// secrets redacted unless they are shown.
        func shown(_ body: [UInt8]?) -> [UInt8]? {
            guard let body else { return nil }
            return secretsShown ? body : Redaction.body(body)
        }
    }

    /// What a request told the log about itself, beyond its source and status.
    public struct Record: Sendable {
        /// The request as the door saw it; its members are written only when the entry is read.
        public var request: Request
        /// The body as sent.
        public var body: [UInt8]?
        public var reason: String?
        public var error: String?
        public var effect: String?
        /// The chaos rule that met the request, if one did.
        public var chaos: String?
        /// Delivery lines, as written on standard output.
        public var deliveries: [String] = []
        /// How long the request took in the world, in microseconds.
        public var microseconds: Int64 = 0
        /// For a request that came over the network: how it came and what it was
        /// answered (the HAR export reads them).
        public var exchange: Exchange?
        /// The devices the request touched. A push touches one, kept with no array made
        /// for it: an entry is made per request.
        fileprivate var reached = Reached.none
        /// What the record keeps as bytes of its own rather than as the request's values
        /// (`PackedRecord`); `RequestLog.Entry.record` puts them back.
        var packed = PackedRecord()

        fileprivate enum Reached {
            case none
            case one(String)
            case many([String])
        }

        /// What the log shows as a request's `request` member.
        public enum Request: Sendable {
            /// A request that came over the network, kept as it is: its method, path, host,
            /// authority and headers (secrets redacted as the read asks) are written from it.
            case network(HTTPRequest)
            /// The members a door writes itself (`"op":…`, `"topic":…`), without braces.
            case members(@Sendable (inout JSONWriter) -> Void)
        }

        /// A network request's transport and its answer.
        public struct Exchange: Sendable {
            public var tls: Bool
            public var http2: Bool
            public var responseHeaders: [(name: String, value: String)]
            public var responseBody: [UInt8]

            public init(tls: Bool, http2: Bool, responseHeaders: [(name: String, value: String)], responseBody: [UInt8])
            {
                self.tls = tls
                self.http2 = http2
                self.responseHeaders = responseHeaders
                self.responseBody = responseBody
            }
        }

        public init(request: Request) {
            self.request = request
        }

        /// A record with nothing in it yet, for an entry to fill in place.
        static var empty: Record { Record(request: .members { _ in }) }

        /// A record whose request's members `members` writes.
        public init(request members: @escaping @Sendable (inout JSONWriter) -> Void) {
            self.request = .members(members)
        }

        /// The devices the request touched, in order.
        public var devices: [String] {
            get {
                switch reached {
                case .none: []
                case .one(let device): [device]
                case .many(let devices): devices
                }
            }
            set { reached = newValue.count == 1 ? .one(newValue[0]) : newValue.isEmpty ? .none : .many(newValue) }
        }

        /// Keeps a request that came over the network, its body and its answer, packed
        /// into the record's own bytes; they come back as its `request`, `body` and
        /// `exchange` in an entry read from the log (`RequestLog.Entry.record`).
        ///
        /// Inlined: made a function of its own, it was given the request borrowed (the
        /// packed path only reads it), and the unpacked path copied it to keep it.
        @inline(__always)
        public mutating func keep(network request: consuming HTTPRequest, answer response: HTTPResponse) {
            guard keepsUnpacked else { return packed.take(network: request, answer: response) }
            if !request.body.isEmpty { body = request.body }
            exchange = .init(
                tls: request.tls, http2: request.http2, responseHeaders: response.headers, responseBody: response.body)
            // Moved in last: read after it was moved, the request was copied.
            self.request = .network(request)
        }

        /// Whether `keep(network:answer:)` keeps the request as it is: for an entry a
        /// stream renders at once, where packing it and making it whole again cost more
        /// than the cold free it saves (`cxbench instructions`: a streamed APNs push 85.6k
        /// packed, 80.5k not).
        fileprivate var keepsUnpacked = false

        /// Records that the request touched `device` alone.
        public mutating func touched(_ device: String) { reached = .one(device) }

        /// Whether the request touched `device`, with no array made.
        func touches(_ device: String) -> Bool {
            switch reached {
            case .none: false
            case .one(let one): one == device
            case .many(let devices): devices.contains(device)
            }
        }
    }

    /// Writes JSON object members into bytes, straight: an entry is rendered per request
    /// while a stream is open, and building values first would cost several times more.
    /// Member names are the program's own literals and go as written (nothing in them
    /// needs escaping); values are escaped.
    public struct JSONWriter {
        var output: ByteOutput
        /// What is written so far.
        var bytes: [UInt8] { output.bytes }
        private var first = true
        /// Whether header values and a target's query show their secrets redacted.
        var redacts = false
        /// What a renderer keeps from entry to entry: the last secret header value
        /// redacted, the last header fields written.
        var memo = RenderMemo()

        /// A writer with room for `capacity` bytes before it grows.
        init(capacity: Int = 0) { output = ByteOutput(capacity: capacity) }

        public mutating func member(_ name: StaticString, _ value: String?) {
            key(name)
            if let value { output.appendJSONString(value) } else { output.append("null") }
        }

        /// A string given as its UTF-8 bytes (valid UTF-8).
        mutating func member(_ name: StaticString, utf8 value: [UInt8]) {
            key(name)
            value.withUnsafeBufferPointer { output.appendJSONString(utf8: $0) }
        }

        /// The request's host (`HTTPRequest.authorityHost`, or else its `serverHost`):
        /// a lowercase ASCII host from its bytes in place, with no `String` made.
        mutating func member(_ name: StaticString, hostOf request: HTTPRequest) {
            let written = request.withAuthorityHost { host -> Bool in
                guard let host, Self.isASCII(host), !host.contains(where: { (65...90).contains($0) }) else {
                    return false
                }
                key(name)
                output.appendJSONString(utf8: host)
                return true
            }
            if !written { member(name, request.authorityHost ?? request.serverHost) }
        }

        public mutating func member(_ name: StaticString, _ value: Bool) {
            key(name)
            output.append(value ? "true" : "false")
        }

        /// The first value of header field `field` (or else of `other`) as sent, `null`
        /// when there is none: ASCII from its bytes in place, with no `String` made.
        public mutating func member(
            _ name: StaticString, header field: StaticString, or other: StaticString? = nil, in headers: HTTPHeaders
        ) {
            key(name)
            guard let index = headers.firstIndex(named: field) ?? other.flatMap({ headers.firstIndex(named: $0) })
            else { return output.append("null") }
            headers.withValueBytes(at: index) { value in
                if Self.isASCII(value) {
                    output.appendJSONString(utf8: value)
                } else {
                    output.appendJSONString(String(decoding: value, as: UTF8.self))
                }
            }
        }

        /// The request's target (`:path`), its query's secret members redacted when the
        /// writer redacts: ASCII with nothing to redact from its bytes in place, with no
        /// `String` made (a stream renders every push's path).
        public mutating func member(_ name: StaticString, targetOf request: HTTPRequest) {
            let written = request.withPath { path -> Bool in
                guard let path, Self.isASCII(path), !redacts || !Self.holdsQuery(path) else { return false }
                key(name)
                output.appendJSONString(utf8: path)
                return true
            }
            if !written { member(name, redacts ? request.path.map(Redaction.path) : request.path) }
        }

        /// An object of the fields, leaving out HTTP/2's pseudo-headers (`:path`, …), their
        /// secrets redacted when the writer redacts.
        public mutating func member(_ name: StaticString, headers: HTTPHeaders) {
            key(name)
            if let kept = memo.written(headers, redacted: redacts) {
                return kept.withUnsafeBufferPointer { output.append($0) }
            }
            let objectStart = output.count
            output.append(UInt8(ascii: "{"))
            var written = 0
            headers.forEachField { name, value in
                guard name.first != UInt8(ascii: ":") else { return }
                if written > 0 { output.append(UInt8(ascii: ",")) }
                let place = written
                written += 1
                // What the last entry sent at this place, it is written as it was then.
                if let kept = memo.written(at: place, name: name, value: value, redacted: redacts) {
                    return kept.withUnsafeBufferPointer { output.append($0) }
                }
                let start = output.count
                writeField(name, value)
                output.withBytes { bytes in
                    memo.keep(
                        at: place, name: name, value: value, redacted: redacts,
                        written: UnsafeBufferPointer(rebasing: bytes[start...]))
                }
            }
            output.append(UInt8(ascii: "}"))
            output.withBytes {
                memo.keep(headers, redacted: redacts, written: UnsafeBufferPointer(rebasing: $0[objectStart...]))
            }
        }

        /// One field, `"name":"value"`, its secret redacted when the writer redacts.
        private mutating func writeField(_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) {
            // ASCII reads as the same text in place, and a secret whose bytes are
            // its characters is redacted in place too: no `String` made of a field
            // (a stream renders every push's fields, and making them text was most
            // of an entry). Anything else goes as text.
            if Self.isASCII(name) {
                let secret = redacts && Redaction.isSecretHeader(name)
                // Most fields need no escape: `"name":"value"` in one write.
                if !secret, Self.isPlain(name), Self.isPlain(value) {
                    return writePlain(name, value)
                }
                if !secret, Self.isASCII(value) {
                    output.appendJSONString(utf8: name)
                    output.append(UInt8(ascii: ":"))
                    return output.appendJSONString(utf8: value)
                }
                if secret, let shown = memo.secret.shownHeaderValue(value) {
                    output.appendJSONString(utf8: name)
                    output.append(UInt8(ascii: ":"))
                    return shown.withUnsafeBufferPointer { output.appendJSONString(utf8: $0) }
                }
            }
            let (name, value) = (String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
            output.appendJSONString(name)
            output.append(UInt8(ascii: ":"))
            output.appendJSONString(redacts ? Redaction.header(name: name, value: value) : value)
        }

        /// Whether a target has a `?`: `memchr`, as `Redaction.path` looks for it.
        private static func holdsQuery(_ target: UnsafeBufferPointer<UInt8>) -> Bool {
            guard let base = target.baseAddress else { return false }
            return memchr(base, Int32(UInt8(ascii: "?")), target.count) != nil
        }

        /// Eight bytes at a time: every field of every entry a stream shows is asked.
        static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            ByteWord.none(in: bytes) { $0.hasHighByte }
        }

        /// ASCII that a JSON string holds as it is: no quote, backslash or control byte.
        private static func isPlain(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            ByteWord.none(in: bytes) { $0.hasHighByte || $0.needsEscape }
        }

        /// `"name":"value"` of two plain texts, in one write.
        private mutating func writePlain(_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) {
            output.write(atMost: name.count + value.count + 5) { at in
                at.pointee = UInt8(ascii: "\"")
                var end = at + 1
                if let base = name.baseAddress { end.update(from: base, count: name.count) }
                end += name.count
                (end[0], end[1], end[2]) = (UInt8(ascii: "\""), UInt8(ascii: ":"), UInt8(ascii: "\""))
                end += 3
                if let base = value.baseAddress { end.update(from: base, count: value.count) }
                end += value.count
                end.pointee = UInt8(ascii: "\"")
                return end + 1
            }
        }

        /// `,"name":` (no comma first) in one write: three appends each checked the room
        /// and the buffer's uniqueness again.
        mutating func key(_ name: StaticString) {
            let comma = first ? 0 : 1
            first = false
            let length = name.utf8CodeUnitCount
            output.write(atMost: comma + length + 3) { at in
                at.pointee = UInt8(ascii: ",")
                at[comma] = UInt8(ascii: "\"")
                (at + comma + 1).update(from: name.utf8Start, count: length)
                at[comma + 1 + length] = UInt8(ascii: "\"")
                at[comma + 2 + length] = UInt8(ascii: ":")
                return at + comma + length + 3
            }
        }
    }

    /// The longest request body an entry shows (the whole is at `/log/{seq}`).
    public static let shownBodyBytes = 4096

    public let max: Int
    /// Whether entries appended from now on show their secrets whole (`--log-secrets`).
    public var showsSecrets = false
    /// The retained entries, a ring once `max` are kept: the oldest is at `oldest`, and
    /// an entry appended then takes its place. The entry that goes is freed in the same
    /// request; trimming thousands in one request held it up by milliseconds.
    private var kept: [Entry] = []
    private var oldest = 0
    public private(set) var nextSeq: Int64 = 1
    public private(set) var dropped: Int64 = 0
    /// Requests answered since the start, by source and status (never cleared).
    private(set) var counts = BySource<[Int: Int]>()

    /// How many entries a log keeps when it is not told (`serve --log-max`).
    public static let defaultMax = 10_000

    public init(max: Int = defaultMax) {
        self.max = Swift.max(0, max)
    }

    public var retained: Int { kept.count }

    /// The retained entry at `index`, oldest first.
    private func retainedEntry(at index: Int) -> Entry { kept[(oldest + index) % kept.count] }

    /// Counts a request and appends its entry; `fill` writes the entry's record in place,
    /// and is called only when the log keeps entries (`--log-max 0` costs a request
    /// nothing but its count). Its seq.
    @discardableResult
    public mutating func append(
        source: String, status: Int, at milliseconds: Int64, _ fill: (inout Record) -> Void
    ) -> Int64 {
        let seq = nextSeq
        guard let index = place(source: source, status: status, at: milliseconds) else { return seq }
        fill(&kept[index].filled)
        return seq
    }

    /// Appends as `append(source:status:at:_:)` does, for a reader that renders the entry
    /// at once (a stream, handed `newestEntry()`): the entry keeps a network request as it
    /// came, unpacked (`Record.keepsUnpacked`). False when the log keeps no entries.
    mutating func appendUnpacked(
        source: String, status: Int, at milliseconds: Int64, _ fill: (inout Record) -> Void
    ) -> Bool {
        guard let index = place(source: source, status: status, at: milliseconds) else { return false }
        kept[index].filled.keepsUnpacked = true
        fill(&kept[index].filled)
        return true
    }

    /// The entry appended last. The log must retain one (`retained > 0`).
    func newestEntry() -> Entry {
        precondition(!kept.isEmpty, "the log retains no entry")
        return retainedEntry(at: kept.count - 1)
    }

    /// Counts a request and gives its seq an entry with an empty record, made where it is
    /// kept; its place in `kept`, or nil when the log keeps no entries.
    private mutating func place(source: String, status: Int, at milliseconds: Int64) -> Int? {
        counts[source, default: [:]][status, default: 0] += 1
        let seq = nextSeq
        nextSeq += 1
        guard max > 0 else {
            dropped += 1
            return nil
        }
        // Made where it is kept, and its record filled there: a record returned and
        // stored, or an entry made and stored, was copied and the original destroyed
        // (~0.8k and ~0.5k instructions a push).
        if kept.count < max {
            kept.append(
                Entry(seq: seq, milliseconds: milliseconds, source: source, status: status, secretsShown: showsSecrets))
            return kept.count - 1
        }
        let index = oldest
        kept[oldest].reuse(
            seq: seq, milliseconds: milliseconds, source: source, status: status, secretsShown: showsSecrets)
        oldest = (oldest + 1) % max
        dropped += 1
        return index
    }

    /// Forgets every entry; `seq` goes on from where it was.
    public mutating func clear() {
        kept.removeAll()
        oldest = 0
    }

    public func entry(_ seq: Int64) -> Entry? {
        // Retained entries' seqs are consecutive: only the oldest go, or all of them.
        let first = firstSeq
        guard seq >= first, seq - first < kept.count else { return nil }
        let entry = retainedEntry(at: Int(seq - first))
        return entry.seq == seq ? entry : nil
    }

    /// The oldest retained entry's seq (the next one's when none is retained).
    public var firstSeq: Int64 { kept.isEmpty ? nextSeq : kept[oldest].seq }

    /// What `GET /api/v1/log` selects.
    public struct Filter: Sendable {
        public var device: String?
        public var source: String?
        /// `200`, or a class: `4xx`.
        public var status: String?
        public var text: String?

        public init(device: String? = nil, source: String? = nil, status: String? = nil, text: String? = nil) {
            self.device = device
            self.source = source
            self.status = status
            self.text = text
        }

        /// Whether `text` is a status filter: a status (`200`) or a class (`4xx`).
        public static func isStatus(_ text: String) -> Bool {
            text.count == 3 && text.first.map { "12345".contains($0) } == true
                && (text.dropFirst().allSatisfy(\.isNumber) || text.hasSuffix("xx"))
        }

        public func matches(_ entry: Entry) -> Bool {
            if let device, !entry.touches(device) { return false }
            if let source, entry.source != source { return false }
            if let status {
                let code = String(entry.status)
                if status.count == 3 && status.hasSuffix("xx") {
                    if code.first != status.first { return false }
                } else if code != status {
                    return false
                }
            }
            if let text, !entry.searchable.localizedCaseInsensitiveContains(text) { return false }
            return true
        }
    }

    /// Up to `limit` entries after `after` that match, in `seq` order (or newest first).
    public func entries(matching filter: Filter, after: Int64 = 0, limit: Int, newestFirst: Bool = false) -> [Entry] {
        var found: [Entry] = []
        let start = Int(Swift.min(Swift.max(0, after + 1 - firstSeq), Int64(kept.count)))
        let indices =
            newestFirst
            ? stride(from: kept.count - 1, to: start - 1, by: -1) : stride(from: start, to: kept.count, by: 1)
        for index in indices {
            let entry = retainedEntry(at: index)
            guard filter.matches(entry) else { continue }
            found.append(entry)
            if found.count == limit { break }
        }
        return found
    }

    static func render(_ entry: Entry, whole: Bool) -> String {
        let record = entry.record
        var out = ByteOutput(
            capacity: 512 + (record.body?.count ?? 0) + record.deliveries.reduce(0) { $0 + $1.utf8.count })
        var memo = RenderMemo()
        render(entry, record, whole: whole, into: &out, memo: &memo)
        return out.withBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// The entry's JSON, written straight into bytes: a stream renders one per request,
    /// keeping `memo` from one to the next.
    static func render(_ entry: Entry, whole: Bool, into out: inout ByteOutput, memo: inout RenderMemo) {
        // An entry kept unpacked (a stream's) is read where it is: `record` would copy it,
        // a retain and a release for each of its strings and arrays.
        if entry.filled.packed.holdsRecord {
            render(entry, entry.record, whole: whole, into: &out, memo: &memo)
        } else {
            render(entry, entry.filled, whole: whole, into: &out, memo: &memo)
        }
    }

    /// `render(_:whole:into:memo:)` of an entry whose record the caller has made whole.
    private static func render(
        _ entry: Entry, _ record: Record, whole: Bool, into out: inout ByteOutput, memo: inout RenderMemo
    ) {
        func member(_ key: StaticString, _ value: String?) {
            guard let value else { return }
            out.append(key)
            out.appendJSONString(value)
        }
        out.append(#"{"seq":"#)
        out.appendDecimal(entry.seq)
        out.append(#","time":""#)
        timestamp(entry.milliseconds, into: &out, memo: &memo)
        out.append(#"","source":"#)
        out.appendJSONString(entry.source)
        switch record.reached {
        case .none: break
        case .one(let device): member(#","device":"#, device)
        case .many(let devices):
            out.append(#","devices":["#)
            for (index, device) in devices.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                out.appendJSONString(device)
            }
            out.append(UInt8(ascii: "]"))
        }
        var truncated = false
        var shown: [UInt8]?
        if let bytes = entry.shown(record.body) {
            // ASCII (most bodies are JSON) is its own text, and any cut of it ends on a
            // character: it goes as it is, with no `String` made of it to validate.
            if bytes.withUnsafeBufferPointer(JSONWriter.isASCII) {
                shown = whole || bytes.count <= shownBodyBytes ? bytes : Array(bytes[..<shownBodyBytes])
            } else {
                let body = String(decoding: bytes, as: UTF8.self)
                shown = Array((whole ? body : Self.prefix(body, bytes: shownBodyBytes)).utf8)
            }
            truncated = shown!.count < bytes.count
        }
        out.append(#","request":"#)
        record.writeRequestJSON(body: shown, redacted: !entry.secretsShown, into: &out, memo: &memo)
        out.append(#","status":"#)
        out.appendDecimal(Int64(entry.status))
        member(#","reason":"#, record.reason)
        member(#","error":"#, record.error)
        member(#","effect":"#, record.effect)
        member(#","chaos":"#, record.chaos)
        if truncated { out.append(#","truncated":true"#) }
        // Delivery lines are JSON objects already: they go in as written.
        out.append(#","deliveries":["#)
        for (index, line) in record.deliveries.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(utf8Of: line)
        }
        out.append("]}")
    }

    /// The longest prefix of `text` within `bytes` UTF-8 bytes that ends on a character.
    static func prefix(_ text: String, bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        var end = text.utf8.index(text.utf8.startIndex, offsetBy: bytes)
        while end > text.startIndex, String.Index(end, within: text) == nil { end = text.utf8.index(before: end) }
        return String(text[..<end])
    }

    /// RFC 3339 in UTC with milliseconds: `2026-11-30T12:00:00.123Z`.
    public static func timestamp(_ milliseconds: Int64) -> String {
        var out = ByteOutput(capacity: 24)
        timestamp(milliseconds, into: &out)
        return out.withBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// `timestamp(_:into:)` of one of many entries: the text up to the milliseconds is
    /// copied from the last entry's when both fall in the same second, as a stream's
    /// entries mostly do (written digit by digit, it was ~450 instructions an entry).
    static func timestamp(_ milliseconds: Int64, into out: inout ByteOutput, memo: inout RenderMemo) {
        let (second, millisecond) = milliseconds.floorDividedBy(1000)
        guard second == memo.second else {
            let start = out.count
            timestamp(milliseconds, into: &out)
            out.withBytes { memo.keepSecond(second, text: UnsafeBufferPointer(rebasing: $0[start..<(start + 20)])) }
            return
        }
        let kept = memo.secondText
        out.write(atMost: 24) { text in
            withUnsafeBytes(of: kept) { UnsafeMutableRawPointer(text).copyMemory(from: $0.baseAddress!, byteCount: 20) }
            text[20] = UInt8(ascii: "0") + UInt8(millisecond / 100)
            text[21] = UInt8(ascii: "0") + UInt8(millisecond / 10 % 10)
            text[22] = UInt8(ascii: "0") + UInt8(millisecond % 10)
            text[23] = UInt8(ascii: "Z")
            return text + 24
        }
    }

    static func timestamp(_ milliseconds: Int64, into out: inout ByteOutput) {
        let (days, dayMilliseconds) = milliseconds.floorDividedBy(86_400_000)
        let (year, month, day) = civilDate(daysSince1970: days)
        let secondOfDay = dayMilliseconds / 1000
        out.write(atMost: 24) { text in
            var at = 0
            func field(_ value: Int64, _ count: Int, _ after: Unicode.Scalar) {
                var value = value
                for place in (0..<count).reversed() {
                    text[at + place] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
                text[at + count] = UInt8(ascii: after)
                at += count + 1
            }
            field(year, 4, "-")
            field(month, 2, "-")
            field(day, 2, "T")
            field(secondOfDay / 3600, 2, ":")
            field(secondOfDay / 60 % 60, 2, ":")
            field(secondOfDay % 60, 2, ".")
            field(dayMilliseconds % 1000, 3, "Z")
            return text + at
        }
    }

    /// The proleptic Gregorian date `days` after 1970-01-01, by arithmetic on 400-year
    /// eras (Howard Hinnant's `civil_from_days`): every entry a stream shows has a time,
    /// and `gmtime_r` cost ~400 instructions of it.
    static func civilDate(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let (era, dayOfEra) = (days + 719_468).floorDividedBy(146_097)  // eras start on 0000-03-01
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)  // from March 1
        let shiftedMonth = (5 * dayOfYear + 2) / 153  // March is 0
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = era * 400 + yearOfEra + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}

extension Int64 {
    /// The quotient rounded down and the remainder it leaves (never negative for a
    /// positive divisor): a time before 1970 still falls in the right day.
    fileprivate func floorDividedBy(_ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let (quotient, remainder) = quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }
}

extension RequestLog.Record {
    /// The request as a JSON object, with `body` last when given.
    func requestJSON(body: [UInt8]?, redacted: Bool) -> [UInt8] {
        var out = ByteOutput()
        var memo = RenderMemo()
        writeRequestJSON(body: body, redacted: redacted, into: &out, memo: &memo)
        return out.bytes
    }

    /// Appends `requestJSON(body:redacted:)` to `out`, with no array of its own.
    /// `body`: the body as shown, valid UTF-8.
    func writeRequestJSON(body: [UInt8]?, redacted: Bool, into out: inout ByteOutput, memo: inout RenderMemo) {
        var writer = RequestLog.JSONWriter()
        writer.redacts = redacted
        swap(&writer.output, &out)
        swap(&writer.memo, &memo)
        defer {
            swap(&writer.output, &out)
            swap(&writer.memo, &memo)
        }
        writer.output.append(UInt8(ascii: "{"))
        switch request {
        case .network(let request):
            writer.member("method", header: ":method", in: request.headers)
            writer.member("path", targetOf: request)
            writer.member("host", hostOf: request)
            // As the client wrote it, port included (the HAR export's URL); `host` is for filtering.
            writer.member("authority", header: ":authority", or: "host", in: request.headers)
            writer.member("headers", headers: request.headers)
        case .members(let members): members(&writer)
        }
        if let body { writer.member("body", utf8: body) }
        writer.output.append(UInt8(ascii: "}"))
    }
}
