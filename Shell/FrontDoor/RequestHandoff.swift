import CFrontDoor
import CXHost
import Foundation
import HTTPMessage

/// Requests handed from the door's thread to one other thread, which answers them in
/// batches: the door's thread keeps doing TLS, HTTP/2 framing and sockets while the
/// other handles what it read, so the two run on two cores. Each request's answer is
/// given later (the transport's `cx_http_answer_later`) and settled from the handling
/// thread once its batch is done, so a batch's handler can write what it owes the world
/// (report lines) before any of its answers goes out.
final class RequestHandoff: @unchecked Sendable {
    struct Item {
        let request: HTTPRequest
        let door: OpaquePointer
        let id: cx_http_later
    }

    /// How many requests may wait or be in hand at once: below the transport's bound on
    /// answers given later (4,096), which the inspector's long polls and streams share.
    static let limit = 3_072
    /// The most requests one batch takes: a batch's answers wait for its last request, so
    /// small batches keep latency low while still sparing a lock and a write per request.
    static let batchSize = 32

    private let queue = Monitor(State())
    /// The handler, which holds what it serves (the shell's world): once `stop` has
    /// joined the thread, only this object holds it, and whoever drops this drops the world.
    private let batches: @Sendable ([HTTPRequest]) -> [HTTPResponse]
    private var thread = pthread_t()
    /// Answers given later that the door still holds, by id, with the ids whose client
    /// went away before the handling thread got to them. An entry goes when its answer
    /// is given (a final piece sent), its client goes, or its batch settles: both stay as
    /// small as the answers open now.
    let laters = Monitor(Laters())

    /// How many answers given later the handoff keeps track of now (a moment's figure).
    var tracked: Int { laters.withLock { $0.open.count + $0.gone.count } }

    struct State {
        var waiting: [Item] = []
        var inHand = 0
        var refused = 0
        var stopped = false
        /// Whether the thread was started and not joined yet.
        var running = false
    }

    struct Laters {
        var open: [cx_http_later: HTTPLater] = [:]
        var gone: Set<cx_http_later> = []
    }

    init(_ batches: @escaping @Sendable ([HTTPRequest]) -> [HTTPResponse]) {
        self.batches = batches
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
            queue.withLock { $0.stopped = true }
            return
        }
        queue.withLock { $0.running = true }
    }

    /// Takes a request on the door's thread; false when too many are in hand already
    /// (the caller then answers 503 at once).
    func take(_ item: Item) -> Bool {
        queue.withLock { state in
            guard state.waiting.count + state.inHand < Self.limit, !state.stopped else {
                state.refused += 1
                return false
            }
            state.waiting.append(item)
            if state.waiting.count == 1 { queue.broadcast() }
            return true
        }
    }

    /// Counts a request refused before it was offered (the transport could hold no more).
    func countRefused() { queue.withLock { $0.refused += 1 } }

    /// How many requests wait or are in hand now (a moment's figure).
    var count: Int { queue.withLock { $0.waiting.count + $0.inHand } }
    /// How many requests were answered 503 at once because the bound was reached.
    var refused: Int { queue.withLock { $0.refused } }

    /// Takes no more requests, lets the batch in hand (if any) be handled and settled (the
    /// door must outlive every answer settled for it), and returns once the handling
    /// thread has ended. Later calls return at once.
    func stop() {
        let join = queue.withLock { state in
            defer { state.running = false }
            state.stopped = true
            queue.broadcast()
            return state.running
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

    /// Takes every request waiting at once, swapping arrays (the door's side gets this
    /// thread's emptied one back, room kept: no allocation and no copy a request), then
    /// hands them on in batches of `batchSize`, each settled before the next. Taking a
    /// batch off the front of the queue moved every request behind it, hundreds under load.
    private func run() {
        var taken: [Item] = []
        while true {
            let stopped = queue.wait(
                until: { !$0.waiting.isEmpty || $0.stopped },
                then: { state -> Bool in
                    if state.stopped { return true }
                    swap(&taken, &state.waiting)
                    state.inHand = taken.count
                    return false
                })
            if stopped { return }
            var start = 0
            while start < taken.count {
                let end = min(start + Self.batchSize, taken.count)
                let responses = batches(taken[start..<end].map(\.request))
                // By index: iterating the items would copy each (its request's headers and body).
                for index in start..<end {
                    settle(door: taken[index].door, id: taken[index].id, responses[index - start])
                }
                // Past a stop, what is left is not handled, as what still waits is not.
                let goOn = queue.withLock { state -> Bool in
                    state.inHand -= end - start
                    return !state.stopped
                }
                if !goOn { return }
                start = end
            }
            taken.removeAll(keepingCapacity: true)
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
        let held = response.fault == nil ? response.later : nil
        let goneAlready = laters.withLock { laters -> Bool in
            if laters.gone.remove(id) != nil { return true }
            if let held { laters.open[id] = held }
            return false
        }
        guard let later = held else { return }
        if goneAlready { return later.markGone() }
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
