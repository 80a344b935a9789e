import Foundation
import OrderedJSON

/// Every request that reached the world, through any door (inspector.md, "The log"): one
/// entry per request, appended when it is answered, after its deliveries. `seq` starts at
/// 1 and grows by one per entry, never reused (not even across `clear`). At most `max`
/// entries are kept; past that the oldest go, and `dropped` counts them.
public struct RequestLog: Sendable {
    /// One entry: what the filters look at, and the entry as JSON text, made once.
    public struct Entry: Sendable {
        public let seq: Int64
        public let source: String
        public let devices: [String]
        public let status: Int
        /// Text a `q` filter looks in: the request, the reason or error, the effect.
        let searchable: String
        /// The whole entry; `summary` is the same with the request body cut at 4 KiB.
        public let text: String
        public let summary: String
    }

    /// What a request told the log about itself.
    public struct Record {
        public var source: String
        public var devices: [String] = []
        public var status: Int
        /// `method`, `path`, `headers`, … as the door saw them; `body` apart, as sent.
        public var request: JSONObject
        public var body: String?
        public var reason: String?
        public var error: String?
        public var effect: String?
        /// Delivery lines, as written on standard output.
        public var deliveries: [String] = []

        public init(source: String, status: Int, request: JSONObject) {
            self.source = source
            self.status = status
            self.request = request
        }
    }

    /// The longest request body an entry shows (the whole is at `/log/{seq}`).
    public static let shownBodyBytes = 4096

    public let max: Int
    private var kept: [Entry] = []
    /// `kept[head...]` are the retained entries, oldest first.
    private var head = 0
    public private(set) var nextSeq: Int64 = 1
    public private(set) var dropped: Int64 = 0
    /// Requests answered since the start, by source and status (never cleared).
    public private(set) var counts: [String: [Int: Int]] = [:]

    public init(max: Int = 10_000) {
        self.max = Swift.max(0, max)
    }

    public var retained: Int { kept.count - head }

    /// Counts a request and appends its entry; `record` is asked for only when the log
    /// keeps entries (`--log-max 0` costs a request nothing but its count). Its seq.
    @discardableResult
    public mutating func append(
        source: String, status: Int, at milliseconds: Int64, _ record: () -> Record
    ) -> Int64 {
        counts[source, default: [:]][status, default: 0] += 1
        let seq = nextSeq
        nextSeq += 1
        guard max > 0 else {
            dropped += 1
            return seq
        }
        var details = record()
        details.source = source
        details.status = status
        kept.append(Self.entry(details, seq: seq, at: milliseconds))
        if retained > max {
            head += 1
            dropped += 1
        }
        if head > 4096 && head * 2 > kept.count {
            kept.removeFirst(head)
            head = 0
        }
        return seq
    }

    /// Forgets every entry; `seq` goes on from where it was.
    public mutating func clear() {
        kept.removeAll()
        head = 0
    }

    public func entry(_ seq: Int64) -> Entry? {
        guard let first = kept[head...].first, seq >= first.seq else { return nil }
        let index = head + Int(seq - first.seq)
        return index < kept.count && kept[index].seq == seq ? kept[index] : nil
    }

    /// The oldest retained entry's seq (the next one's when none is retained).
    public var firstSeq: Int64 { kept[head...].first?.seq ?? nextSeq }

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

        public func matches(_ entry: Entry) -> Bool {
            if let device, !entry.devices.contains(device) { return false }
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
        let retained = kept[head...]
        if newestFirst {
            for entry in retained.reversed() where entry.seq > after && filter.matches(entry) {
                found.append(entry)
                if found.count == limit { break }
            }
        } else {
            let start = retained.first.map { head + Swift.max(0, Int(after + 1 - $0.seq)) } ?? kept.count
            for entry in kept[Swift.min(start, kept.count)...] where filter.matches(entry) {
                found.append(entry)
                if found.count == limit { break }
            }
        }
        return found
    }

    static func entry(_ record: Record, seq: Int64, at milliseconds: Int64) -> Entry {
        var object = JSONObject([
            ("seq", .integer(seq)), ("time", .string(Self.timestamp(milliseconds))), ("source", .string(record.source)),
        ])
        if record.devices.count == 1 {
            object["device"] = .string(record.devices[0])
        } else if record.devices.count > 1 {
            object["devices"] = .array(record.devices.map(JSON.string))
        }
        var request = record.request
        var whole = object
        var truncated = false
        if let body = record.body {
            var wholeRequest = request
            wholeRequest["body"] = .string(body)
            whole["request"] = .object(wholeRequest)
            let cut = Self.prefix(body, bytes: shownBodyBytes)
            truncated = cut.utf8.count < body.utf8.count
            request["body"] = .string(cut)
        } else {
            whole["request"] = .object(request)
        }
        object["request"] = .object(request)
        for (key, value) in [("status", JSON.integer(Int64(record.status)))]
            + [("reason", record.reason), ("error", record.error), ("effect", record.effect)].compactMap({ key, value in
                value.map { (key, JSON.string($0)) }
            })
        {
            object[key] = value
            whole[key] = value
        }
        if truncated { object["truncated"] = true }
        let deliveries = "[" + record.deliveries.joined(separator: ",") + "]"
        func render(_ object: JSONObject) -> String {
            String(object.compactText.dropLast()) + #","deliveries":"# + deliveries + "}"
        }
        let searchable = [
            record.request.compactText, record.body ?? "", record.reason ?? "", record.error ?? "",
            record.effect ?? "",
        ].joined(separator: "\n")
        let summary = render(object)
        return Entry(
            seq: seq, source: record.source, devices: record.devices, status: record.status, searchable: searchable,
            text: truncated ? render(whole) : summary, summary: summary)
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
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), Int(milliseconds % 1000))
    }
}
