import CFrontDoor
import CXHost
import Foundation
import HTTPMessage
import Synchronization

/// Requests handed from the door's thread to one other thread, which answers them in
/// batches: the door's thread keeps doing TLS, HTTP/2 framing and sockets while the
/// other handles what it read, so the two run on two cores. Each request's answer is
/// given later (the transport's `cx_http_answer_later`) and settled from the handling
/// thread once its batch is done, so a batch's handler can write what it owes the world
/// (report lines) before any of its answers goes out.
final class RequestHandoff: @unchecked Sendable {
    struct Item {
        /// Moved out for the batch (nil after): a copy of a request is some ten
        /// references counted up and down again.
        var request: HTTPRequest?
        let door: OpaquePointer
        let id: cx_http_later
    }

    /// How many requests may wait or be in hand at once: below the transport's bound on
    /// answers given later (4,096), which the inspector's long polls and streams share.
    static let limit = 3_072
    /// The most requests one batch takes: a batch's answers wait for its last request, so
    /// small batches keep latency low while still sparing the world's lock and a write of
    /// report lines per request (cxshell serve takes each once a batch).
    static let batchSize = 32

    /// Requests from the door's thread to the handling thread, with no lock a request.
    private let ring: HandoffRing<Item>
    private let refusals = Atomic<Int>(0)
    /// Whether the thread was started and not joined yet.
    private let running = Monitor(false)
    /// The handler, which holds what it serves (the shell's world): once `stop` has
    /// joined the thread, only this object holds it, and whoever drops this drops the world.
    private let batches: @Sendable (inout RequestBatch) -> [HTTPResponse]
    private var thread = pthread_t()
    /// Answers given later that the door still holds, by id, with the ids whose client
    /// went away before the handling thread got to them. An entry goes when its answer
    /// is given (a final piece sent), its client goes, or its batch settles: both stay as
    /// small as the answers open now.
    let laters = Monitor(Laters())

    /// How many answers given later the handoff keeps track of now (a moment's figure).
    var tracked: Int { laters.withLock { $0.open.count + $0.gone.count } }

    struct Laters {
        var open: [cx_http_later: HTTPLater] = [:]
        var gone: Set<cx_http_later> = []
    }

    init(_ batches: @escaping @Sendable (inout RequestBatch) -> [HTTPResponse]) {
        self.batches = batches
        ring = HandoffRing(bound: Self.limit)
        // A thread of its own, joined in `stop`: what it leaves to its own end (OpenSSL's
        // per-thread error queue and random generators, freed as a thread exits) is gone
        // before the process may exit.
        let retained = Unmanaged.passRetained(self)
        let started = pthread_create(
            &thread, nil,
            { context in
                let handoff = Unmanaged<RequestHandoff>.fromOpaque(context!).takeRetainedValue()
                Thread.current.name = "door-world"
                handoff.run()
                return nil
            }, retained.toOpaque())
        guard started == 0 else {
            // No thread: every request is answered 503 at once, as when too many wait.
            retained.release()
            ring.stop()
            return
        }
        running.withLock { $0 = true }
    }

    /// Takes a request on the door's thread; false when too many are in hand already
    /// (the caller then answers 503 at once).
    func take(_ item: consuming Item) -> Bool {
        if ring.put(item) { return true }
        refusals.add(1, ordering: .relaxed)
        return false
    }

    /// Counts a request refused before it was offered (the transport could hold no more).
    func countRefused() { refusals.add(1, ordering: .relaxed) }

    /// How many requests wait or are in hand now (a moment's figure).
    var count: Int { ring.count }
    /// How many requests were answered 503 at once because the bound was reached.
    var refused: Int { refusals.load(ordering: .relaxed) }

    /// Takes no more requests, lets the batch in hand (if any) be handled and settled (the
    /// door must outlive every answer settled for it), and returns once the handling
    /// thread has ended. Later calls return at once.
    func stop() {
        ring.stop()
        let join = running.withLock { running in
            defer { running = false }
            return running
        }
        if join { pthread_join(thread, nil) }
    }

    /// The door's thread: the client of answer `id` went away.
    func gone(_ id: cx_http_later) {
        let later = laters.withLock { laters -> HTTPLater? in
            if let later = laters.open.removeValue(forKey: id) { return later }
            laters.gone.insert(id)
            return nil
        }
        later?.markGone()
    }

    /// Takes the requests waiting, `batchSize` at most at a time, oldest first, and hands
    /// each batch on; its answers are settled, and its room in the ring given back, before
    /// the next is taken. Past a stop, what still waits is not handled.
    private func run() {
        var items: [Item] = []
        items.reserveCapacity(Self.batchSize)
        while ring.take(most: Self.batchSize, into: &items) {
            var batch = RequestBatch(items.indices.map { items[$0].request.take() })
            let responses = batches(&batch)
            for index in items.indices {
                settle(door: items[index].door, id: items[index].id, responses[index])
            }
            track(items, responses)
            ring.release(items.count)
            items.removeAll(keepingCapacity: true)
        }
    }

    /// Gives the transport the answer the handler decided: now, with its fault, or held
    /// (an answer given later again: a long poll, a stream, a latency rule's wait).
    private func settle(door: OpaquePointer, id: cx_http_later, _ response: HTTPResponse) {
        let hold: Int64 = response.later.map { Int64($0.waitMilliseconds) } ?? -1
        withCHeaders(response.headers, unique: response.uniqueHeaders) { headers, count in
            response.body.withUnsafeBufferPointer { body in
                cx_front_door_settle(
                    door, id, Int32(response.status), headers, count, body.baseAddress, body.count,
                    response.fault?.rawValue ?? 0, response.fault == nil ? hold : -1)
            }
        }
    }

    /// After a batch's answers are settled: forgets the ids whose client went first, and
    /// keeps the answers held, under one lock a batch (a lock an answer was ~280
    /// instructions a push); a held answer's pieces then go to the transport.
    private func track(_ items: [Item], _ responses: [HTTPResponse]) {
        let held = laters.withLock { laters -> [(later: HTTPLater, item: Int, gone: Bool)] in
            var held: [(later: HTTPLater, item: Int, gone: Bool)] = []
            for index in items.indices {
                let id = items[index].id
                let gone = !laters.gone.isEmpty && laters.gone.remove(id) != nil
                guard responses[index].fault == nil, let later = responses[index].later else { continue }
                if !gone { laters.open[id] = later }
                held.append((later, index, gone))
            }
            return held
        }
        for (later, index, gone) in held {
            if gone {
                later.markGone()
            } else {
                attach(later, door: items[index].door, id: items[index].id)
            }
        }
    }

    /// Sends a held answer's pieces to the transport as they come.
    private func attach(_ later: HTTPLater, door: OpaquePointer, id: cx_http_later) {
        let handle = UInt(bitPattern: door)
        let laters = laters
        later.attach { piece in
            sendPiece(piece, door: OpaquePointer(bitPattern: handle)!, id: id)
            // The answer is given: the transport takes nothing more for it.
            switch piece {
            case .complete, .end: laters.withLock { _ = $0.open.removeValue(forKey: id) }
            case .begin, .write: break
            }
        }
    }
}
