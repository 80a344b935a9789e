import CFrontDoor
import HTTPMessage

#if canImport(Glibc)
    import Glibc
#endif

/// The network front door's transport (front-door.md): one port that takes an HTTPS
/// proxy's CONNECT (to `tunnelHosts` only; 403 for others), TLS with ALPN `h2` and
/// `http/1.1`, and clear-text HTTP/2 (prior knowledge) and HTTP/1.1. Its own thread does
/// the sockets, TLS and HTTP; every complete request goes to `batches` on a second thread
/// (`RequestHandoff`). It knows no service.
public final class FrontDoor: @unchecked Sendable {
    /// The C transport's handle; set once in `init`, released once in `stop`.
    private var door: OpaquePointer?
    private let box: Unmanaged<HandlerBox>
    /// The port it listens on (the one chosen when 0 was asked for).
    public let port: Int

    final class HandlerBox {
        let handoff: RequestHandoff
        let tunnelHosts: @Sendable (String) -> Bool
        let handshakes: @Sendable (String) -> Bool
        let busy: @Sendable (HTTPRequest) -> HTTPResponse
        init(
            handoff: RequestHandoff, tunnelHosts: @escaping @Sendable (String) -> Bool,
            handshakes: @escaping @Sendable (String) -> Bool, busy: @escaping @Sendable (HTTPRequest) -> HTTPResponse
        ) {
            self.handoff = handoff
            self.tunnelHosts = tunnelHosts
            self.handshakes = handshakes
            self.busy = busy
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Listens on `address` (an IPv4 or IPv6 literal) and `port` with `ca`'s server
    /// certificate, and serves until `stop`. `tunnelHosts` says which hosts a CONNECT
    /// may open a tunnel to; `handshakes`, whether a TLS handshake for a server name
    /// (SNI, else the CONNECT target, else "") may go on; it runs on the door's thread,
    /// before the handshake's answer is sent. `batches` takes the requests read so far
    /// from a `RequestBatch`, in order, on the handling thread, and returns their answers
    /// in the same order; none goes out before it returns. A request is taken only when the
    /// transport can hold its answer (`MAX_HELD_ANSWERS`, shared with long polls, streams
    /// and answers held by a deadline) and fewer than `RequestHandoff.limit` wait; else it
    /// gets `busy`'s answer at once (a 503 the request's service would give, on the door's
    /// thread: it must not touch the world), with nothing done. A request taken is always
    /// answered with its own answer.
    public init(
        address: String, port: Int, ca: TestCA, tunnelHosts: @escaping @Sendable (String) -> Bool,
        handshakes: @escaping @Sendable (String) -> Bool = { _ in true },
        busy: @escaping @Sendable (HTTPRequest) -> HTTPResponse = FrontDoor.plainBusy,
        batches: @escaping @Sendable (inout RequestBatch) -> [HTTPResponse]
    ) throws(Failure) {
        let handlers = HandlerBox(
            handoff: RequestHandoff(batches), tunnelHosts: tunnelHosts, handshakes: handshakes, busy: busy)
        box = Unmanaged.passRetained(handlers)
        var door: OpaquePointer?
        var bound: Int32 = 0
        var error = [CChar](repeating: 0, count: 256)
        let status = cx_front_door_start(
            address, Int32(port), ca.serverCertificate, ca.serverKey, frontDoorHandler, frontDoorTunnelFilter,
            frontDoorHandshakeFilter, frontDoorLaterGone, box.toOpaque(), &door, &bound, &error,
            error.count)
        guard status == 0 else {
            handlers.handoff.stop()
            box.release()
            let text = error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            throw Failure(description: String(decoding: text, as: UTF8.self))
        }
        self.door = door
        self.port = Int(bound)
    }

    /// How many requests wait for the handling thread or are in its hand (0 without one).
    public var requestsInHand: Int { box.takeUnretainedValue().handoff.count }
    /// How many requests were answered 503 at once because that many were in hand or held.
    public var requestsRefused: Int { box.takeUnretainedValue().handoff.refused }

    /// A 503 that names no service: the world is busy.
    public static let plainBusy: @Sendable (HTTPRequest) -> HTTPResponse = { _ in .busy }

    /// Lowers how many answers the transport holds at once (tests reach the bound with
    /// few requests); call before the first request.
    public func limitHeldAnswers(_ most: Int) {
        if let door { cx_front_door_limit_held(door, max(0, most)) }
    }

    /// How many answers given later the door's handoff tracks (a moment's figure): as many
    /// as are open, never more.
    public var answersTracked: Int { box.takeUnretainedValue().handoff.tracked }

    /// How many connections are open (a moment's figure).
    public var connections: Int { door.map { Int(cx_front_door_connections($0)) } ?? 0 }

    /// Closes every connection and the port.
    public func stop() {
        guard let door else { return }
        // The handling thread first: it settles answers on the door until it ends.
        box.takeUnretainedValue().handoff.stop()
        cx_front_door_stop(door)
        self.door = nil
        box.release()
    }

    deinit { stop() }
}

/// The C transport dropped an answer given later: its side takes nothing more.
private func frontDoorLaterGone(_ context: UnsafeMutableRawPointer?, _ id: cx_http_later) {
    guard let context else { return }
    Unmanaged<FrontDoor.HandlerBox>.fromOpaque(context).takeUnretainedValue().handoff.gone(id)
}

/// Headers as the C transport takes them (it copies them by length), alive while `body`
/// runs: their bytes and the array both in temporary storage (the stack, for an answer's
/// few headers), with no allocation. Every answer passes here.
func withCHeaders<T>(
    _ headers: [(name: String, value: String)], unique: UInt64 = 0,
    _ body: (UnsafePointer<cx_http_header>?, Int) -> T
) -> T {
    var size = 0
    // By index: iterating would copy each name and value (a retain and a release each).
    for index in headers.indices { size += headers[index].name.utf8.count + headers[index].value.utf8.count }
    return withUnsafeTemporaryAllocation(of: CChar.self, capacity: max(size, 1)) { text in
        withUnsafeTemporaryAllocation(of: cx_http_header.self, capacity: headers.count) { cHeaders in
            var at = text.baseAddress!
            /// Copies `string`'s UTF-8 to `at`; where it starts, and its length.
            func copy(_ string: String) -> (UnsafePointer<CChar>, Int) {
                let start = at
                let count = string.utf8.count
                let copied: Void? = string.utf8.withContiguousStorageIfAvailable { bytes in
                    if let base = bytes.baseAddress {
                        UnsafeMutableRawPointer(at).copyMemory(from: base, byteCount: count)
                    }
                }
                if copied == nil { UnsafeMutableRawBufferPointer(start: at, count: count).copyBytes(from: string.utf8) }
                at += count
                return (UnsafePointer(start), count)
            }
            for index in headers.indices {
                let (name, nameLength) = copy(headers[index].name)
                let (value, valueLength) = copy(headers[index].value)
                cHeaders.initializeElement(
                    at: index,
                    to: cx_http_header(
                        name: name, name_len: nameLength, value: value, value_len: valueLength,
                        unique: unique & (1 << index) != 0))
            }
            defer { cHeaders.deinitialize() }
            return body(UnsafePointer(cHeaders.baseAddress), headers.count)
        }
    }
}

/// Sends one piece of an answer given later to the C transport (any thread).
func sendPiece(_ piece: HTTPLater.Piece, door: OpaquePointer, id: cx_http_later) {
    switch piece {
    case .complete(let response):
        withCHeaders(response.headers, unique: response.uniqueHeaders) { headers, count in
            response.body.withUnsafeBufferPointer { body in
                cx_front_door_complete(door, id, Int32(response.status), headers, count, body.baseAddress, body.count)
            }
        }
    case .begin(let status, let headers):
        withCHeaders(headers) { headers, count in cx_front_door_stream_begin(door, id, Int32(status), headers, count) }
    case .write(let bytes):
        guard let block = bytes.take() else { return }
        cx_front_door_stream_write(door, id, block, bytes.headRoom, bytes.count, bytes.size)
    case .end:
        cx_front_door_stream_end(door, id)
    }
}

/// The C transport's CONNECT filter.
private func frontDoorTunnelFilter(_ context: UnsafeMutableRawPointer?, _ host: UnsafePointer<CChar>?) -> Bool {
    guard let context, let host else { return false }
    return Unmanaged<FrontDoor.HandlerBox>.fromOpaque(context).takeUnretainedValue().tunnelHosts(String(cString: host))
}

/// The C transport's TLS handshake filter.
private func frontDoorHandshakeFilter(_ context: UnsafeMutableRawPointer?, _ name: UnsafePointer<CChar>?) -> Bool {
    guard let context, let name else { return true }
    return Unmanaged<FrontDoor.HandlerBox>.fromOpaque(context).takeUnretainedValue().handshakes(String(cString: name))
}

/// The C transport's handler: the request as Swift values, the answer back as C.
private func frontDoorHandler(
    _ context: UnsafeMutableRawPointer?, _ request: UnsafePointer<cx_http_request>?, _ answer: OpaquePointer?
) {
    guard let context, let request = request?.pointee, let answer else { return }
    let box = Unmanaged<FrontDoor.HandlerBox>.fromOpaque(context).takeUnretainedValue()
    // Copied as bytes into one allocation: no field becomes a String until a service reads it.
    func bytes(_ pointer: UnsafePointer<CChar>?, _ length: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: pointer, count: pointer == nil ? 0 : length)
    }
    func parsed() -> HTTPRequest {
        let headers = HTTPHeaders(count: request.header_count) { index in
            let header = request.headers[index]
            return (bytes(header.name, header.name_len), bytes(header.value, header.value_len))
        }
        let body = request.body.map { Array(UnsafeBufferPointer(start: $0, count: request.body_len)) } ?? []
        return HTTPRequest(
            headers: headers, body: body, serverName: request.server_name.map { String(cString: $0) },
            tls: request.tls, http2: request.http2)
    }
    // Answered later, from the handling thread, unless the door holds too many already.
    // One count decides: the transport parks this answer right after the handler returns,
    // on this thread, so a request taken here is one whose answer it will hold. The
    // request moves into the handoff; one refused is read again for its 503, rather than
    // every request copied in case.
    guard let door = request.door else { return }
    let id = cx_http_answer_later(answer, 0)
    if !cx_front_door_can_hold(door) {
        box.handoff.countRefused()
    } else if box.handoff.take(RequestHandoff.Item(request: parsed(), door: door, id: id)) {
        return
    }
    // Not handed over: this goes now, and nothing was done.
    cx_http_answer_later_cancel(answer)
    let busy = box.busy(parsed())
    withCHeaders(busy.headers, unique: busy.uniqueHeaders) { headers, count in
        busy.body.withUnsafeBufferPointer {
            cx_http_answer_set(answer, Int32(busy.status), headers, count, $0.baseAddress, $0.count)
        }
    }
}
