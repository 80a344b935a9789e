import CXHost
import Dispatch
import HTTPMessage
import OrderedJSON

/// Who is waiting on the log (inspector.md, "Waiting instead of polling"): long polls
/// that answer with the first entries after their `after` that match, and streams of
/// Server-Sent Events that get every matching entry as it is appended. Both are told
/// of each entry by `appended`; a watcher whose client went away is dropped then.
struct LogWatchers {
    struct Poll {
        let filter: RequestLog.Filter
        let after: Int64
        let limit: Int
        let later: HTTPLater
    }

    struct Stream {
        let filter: RequestLog.Filter
        let later: HTTPLater
    }

    private(set) var polls: [Poll] = []
    private(set) var streams: [Stream] = []
    /// Streams' events are rendered and sent here, in order, off the world's thread: the
    /// request path only hands the entry over (inspector.md, "Speed").
    private let renderer = DispatchQueue(label: "cxshell.log-streams")
    /// Entries handed over and not yet sent; past `maxBehind` the streams are ended (their
    /// clients resume with Last-Event-ID) rather than let the backlog grow.
    private let behind = Monitor(0)
    static let maxBehind = 50_000

    var isEmpty: Bool { polls.isEmpty && streams.isEmpty }

    mutating func add(_ poll: Poll) {
        polls.removeAll { $0.later.isGone }
        polls.append(poll)
    }

    mutating func add(_ stream: Stream) {
        streams.removeAll { $0.later.isGone }
        streams.append(stream)
    }

    /// `entry` was appended to `log`: the polls it matches are answered, the streams it
    /// matches get it.
    mutating func appended(_ entry: RequestLog.Entry, in log: RequestLog) {
        polls.removeAll { poll in
            if poll.later.isGone { return true }
            guard entry.seq > poll.after, poll.filter.matches(entry) else { return false }
            let entries = log.entries(matching: poll.filter, after: poll.after, limit: poll.limit)
            poll.later.send(.complete(Self.answer(entries, after: poll.after)))
            return true
        }
        streams.removeAll { $0.later.isGone }
        guard !streams.isEmpty else { return }
        let targets = streams
        let backlog = behind.withLock { count in
            count += 1
            return count
        }
        if backlog > Self.maxBehind {
            // The streams' clients read slower than the world writes: end them, so they
            // come back with Last-Event-ID instead of this process holding the backlog.
            for stream in targets { stream.later.send(.end) }
            streams.removeAll()
        }
        renderer.async { [behind] in
            var event: [UInt8]?
            for stream in targets where stream.filter.matches(entry) {
                if event == nil { event = Self.event(entry) }
                stream.later.send(.write(event!))
            }
            behind.withLock { $0 -= 1 }
        }
    }

    /// `GET /api/v1/log`'s answer: the entries and the cursor for the next call.
    static func answer(_ entries: [RequestLog.Entry], after: Int64, newestFirst: Bool = false) -> HTTPResponse {
        let next = newestFirst ? "null" : String(entries.last?.seq ?? after)
        let text = #"{"entries":["# + entries.map(\.summary).joined(separator: ",") + #"],"next":"# + next + "}"
        return HTTPResponse(status: 200, headers: InspectorAnswer.jsonHeaders, body: Array(text.utf8))
    }

    /// One entry as a Server-Sent Event.
    static func event(_ entry: RequestLog.Entry) -> [UInt8] {
        Array("event: log\nid: \(entry.seq)\ndata: \(entry.summary)\n\n".utf8)
    }

    /// What a stream resumed after `lastID` first gets: a gap when entries it missed
    /// were dropped, then every retained entry after it that matches.
    static func backlog(_ log: RequestLog, after lastID: Int64, filter: RequestLog.Filter) -> [UInt8] {
        var bytes: [UInt8] = []
        let missed = log.firstSeq - lastID - 1
        if missed > 0 { bytes += Array("event: gap\ndata: {\"dropped\":\(missed)}\n\n".utf8) }
        var after = lastID
        while true {
            let page = log.entries(matching: filter, after: after, limit: 1_000)
            for entry in page { bytes += event(entry) }
            guard page.count == 1_000, let last = page.last else { break }
            after = last.seq
        }
        return bytes
    }
}

extension Session {
    /// Counts a request (its duration since `requestStarted`, its deliveries), appends its
    /// log entry, and tells whoever waits on the log.
    func appendLog(source: String, status: Int, deliveries: [String], _ record: () -> RequestLog.Record) {
        let seconds = Double(Self.monotonicNanoseconds() &- requestStarted) / 1e9
        metrics.observe(source: source, seconds: seconds, deliveries: deliveries)
        let seq = log.append(source: source, status: status, at: clock(), record)
        guard !watchers.isEmpty, let entry = log.entry(seq) else { return }
        watchers.appended(entry, in: log)
    }
}
