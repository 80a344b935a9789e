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

    /// A class: the renderer goes through every stream for every entry, and a copy of a
    /// struct retained and released each of its filter's strings.
    final class Stream: Sendable {
        let filter: RequestLog.Filter
        let later: HTTPLater

        init(filter: RequestLog.Filter, later: HTTPLater) {
            self.filter = filter
            self.later = later
        }

        /// Read in place: `stream.filter.matches(_:)` from outside copied the filter.
        func matches(_ entry: RequestLog.Entry) -> Bool { filter.matches(entry) }
    }

    private(set) var polls: [Poll] = []
    private(set) var streams: [Stream] = []
    /// Streams' events are rendered and sent off the world's thread: the request path
    /// only hands the entry over (inspector.md, "Speed"), and the renderer takes what has
    /// piled up in one go, one write per stream for the lot.
    private let renderer = DispatchQueue(label: "cxshell.log-streams")
    private let handedOver = Monitor(HandedOver())
    /// What the renderer keeps from one entry to the next, for as long as it renders: a
    /// memo made for each batch wrote every batch's first entry afresh, and a loaded
    /// machine's batches are small. Only the renderer's serial queue takes it, so its lock
    /// is never waited on; it is one because the queue's closures share only what is `Sendable`.
    private let renderMemo = Monitor(RenderMemo())
    /// Past this many entries waiting, the streams are ended (their clients resume with
    /// Last-Event-ID) rather than let the backlog grow.
    static let maxBehind = 50_000
    /// How long entries gather before they are rendered and sent. Under load, a renderer
    /// that woke for each entry, and woke the door to write it, cost the request path
    /// more in thread switches than the rendering itself (counted with callgrind); a person
    /// or a test reading the stream sees an entry this much later.
    static let gatherMilliseconds = 5

    struct HandedOver {
        var entries: [HandedEntry] = []
        var scheduled = false
    }

    /// An entry on its way to the streams it was appended for, held by reference: an entry
    /// copied is a retain and a release for every string and array of its record (~0.5k
    /// instructions each way), and the hand-over and the renderer's loop would each copy it.
    final class HandedEntry: Sendable {
        let entry: RequestLog.Entry
        let streams: [Stream]

        init(_ entry: consuming RequestLog.Entry, streams: [Stream]) {
            self.entry = entry
            self.streams = streams
        }
    }

    var isEmpty: Bool { polls.isEmpty && streams.isEmpty }

    mutating func add(_ poll: Poll) {
        polls.removeAll { $0.later.isGone }
        polls.append(poll)
    }

    mutating func add(_ stream: Stream) {
        streams.removeAll { $0.later.isGone }
        streams.append(stream)
    }

    /// `entry` was appended to the log: the polls it matches are answered with the log's
    /// `entries` (matching, after, at most), the streams it matches get it.
    mutating func appended(
        _ entry: consuming RequestLog.Entry,
        entries: (_ matching: RequestLog.Filter, _ after: Int64, _ limit: Int) -> [RequestLog.Entry]
    ) {
        // Asked first, here and for the streams: removing nothing from an empty array
        // still costs a call that rebuilds it (~160 instructions), once per request.
        if !polls.isEmpty {
            polls.removeAll { poll in
                if poll.later.isGone { return true }
                guard entry.seq > poll.after, poll.filter.matches(entry) else { return false }
                let found = entries(poll.filter, poll.after, poll.limit)
                poll.later.send(.complete(Self.answer(found, after: poll.after)))
                return true
            }
        }
        if streams.contains(where: { $0.later.isGone }) { streams.removeAll { $0.later.isGone } }
        guard !streams.isEmpty else { return }
        let targets = streams
        let handing = HandedEntry(consume entry, streams: targets)
        let (schedule, backlog) = handedOver.withLock { handed in
            handed.entries.append(handing)
            defer { handed.scheduled = true }
            return (!handed.scheduled, handed.entries.count)
        }
        if backlog > Self.maxBehind {
            // The streams' clients read slower than the world writes: end them, so they
            // come back with Last-Event-ID instead of this process holding the backlog.
            for stream in targets { stream.later.send(.end) }
            streams.removeAll()
        }
        if schedule {
            renderer.asyncAfter(deadline: .now() + .milliseconds(Self.gatherMilliseconds)) {
                [handedOver, renderMemo] in
                renderMemo.withLock { memo in Self.render(handedOver, memo: &memo) }
            }
        }
    }

    /// About what one entry's event takes (a push's, with its body and one delivery), and
    /// how many a stream's write makes room for up front: grown from empty, a write was
    /// copied about a dozen times a batch; a filtered stream in a backlog must not
    /// reserve a megabyte for every thousand entries it mostly skips.
    static let eventBytesEstimate = 1_024
    static let eventsReserved = 256

    /// Renders and sends what was handed over, until nothing is left.
    private static func render(_ handedOver: Monitor<HandedOver>, memo: inout RenderMemo) {
        while true {
            let batch = handedOver.withLock { handed in
                defer { handed.entries.removeAll(keepingCapacity: true) }
                if handed.entries.isEmpty { handed.scheduled = false }
                return handed.entries
            }
            guard !batch.isEmpty else { return }
            // Each stream's events for the lot, in one write; an event is rendered once,
            // straight into the first stream's bytes, and copied for any other.
            var writes: [(later: HTTPLater, output: ByteOutput)] = []
            for handed in batch {
                var rendered: (write: Int, range: Range<Int>)?
                for stream in handed.streams where stream.matches(handed.entry) {
                    let write: Int
                    if let found = writes.firstIndex(where: { $0.later === stream.later }) {
                        write = found
                    } else {
                        let output = ByteOutput(
                            capacity: min(batch.count, Self.eventsReserved) * Self.eventBytesEstimate,
                            headRoom: StreamBytes.framingRoom)
                        writes.append((stream.later, output))
                        write = writes.count - 1
                    }
                    if let rendered {
                        let event = writes[rendered.write].output.withBytes { Array($0[rendered.range]) }
                        writes[write].output.append(event)
                    } else {
                        let start = writes[write].output.count
                        Self.event(handed.entry, into: &writes[write].output, memo: &memo)
                        rendered = (write, start..<writes[write].output.count)
                    }
                }
            }
            for index in writes.indices {
                if let piece = Self.piece(taking: &writes[index].output) { writes[index].later.send(piece) }
            }
        }
    }

    /// `GET /api/v1/log`'s answer: the entries and the cursor for the next call.
    static func answer(_ entries: [RequestLog.Entry], after: Int64, newestFirst: Bool = false) -> HTTPResponse {
        let next = newestFirst ? "null" : String(entries.last?.seq ?? after)
        let text = #"{"entries":["# + entries.map(\.summary).joined(separator: ",") + #"],"next":"# + next + "}"
        return HTTPResponse(status: 200, headers: InspectorAnswer.jsonHeaders, body: Array(text.utf8))
    }

    /// What `output` holds as a stream's piece, its memory handed over with no copy
    /// (made with `StreamBytes.framingRoom` before it, the transport frames it in place);
    /// nil when it holds nothing.
    static func piece(taking output: inout ByteOutput) -> HTTPLater.Piece? {
        output.takeMemory().map {
            .write(StreamBytes(block: $0.block, headRoom: $0.headRoom, count: $0.count, size: $0.size))
        }
    }

    /// One entry as a Server-Sent Event.
    static func event(_ entry: RequestLog.Entry, into output: inout ByteOutput, memo: inout RenderMemo) {
        output.append("event: log\nid: ")
        output.appendDecimal(entry.seq)
        output.append("\ndata: ")
        RequestLog.render(entry, whole: false, into: &output, memo: &memo)
        output.append("\n\n")
    }

    /// The most backlog one resumed stream is sent before it ends for the client to resume
    /// again: well under the transport's bound on a stream's unsent bytes (1 MiB), which a
    /// backlog written at once would pass before an HTTP/2 client's window let it out.
    static let backlogSlice = 512 << 10

    /// What a stream resumed after `lastID` first gets, appended to `output`: a gap when
    /// entries it missed were dropped, then the retained entries after it that match, up
    /// to `limit` bytes of them (an entry is never cut, and at least one goes); true when
    /// nothing that matches is left after them.
    static func backlog(
        _ log: RequestLog, after lastID: Int64, filter: RequestLog.Filter, limit: Int = .max,
        into output: inout ByteOutput
    ) -> Bool {
        let start = output.count
        var memo = RenderMemo()
        let missed = log.firstSeq - lastID - 1
        if missed > 0 { output.append(utf8Of: "event: gap\ndata: {\"dropped\":\(missed)}\n\n") }
        var after = lastID
        while true {
            let page = log.entries(matching: filter, after: after, limit: 1_000)
            for entry in page {
                let before = output.count
                event(entry, into: &output, memo: &memo)
                if output.count - start > limit && before > start {
                    output.truncate(to: before)
                    return false
                }
            }
            guard page.count == 1_000, let last = page.last else { break }
            after = last.seq
        }
        return true
    }
}
