import CNGHTTP2
import COpenSSL
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An HTTP/2 client made of nghttp2 (the framing is the library's, as in the product),
/// for tests that play a careless or hostile client: it sends only when `pump` is called,
/// reads only when asked to, and can leave request bodies unfinished. It obeys flow
/// control, so what it manages to send is what the server let it. Made with a CA, it
/// speaks through TLS (`TLSTestClient`, ALPN h2) and counts the records it receives.
final class HTTP2TestClient {
    let socket: Int32
    private var session: OpaquePointer?
    /// Bytes for the socket (through TLS, sealed) that it has not taken yet.
    private var unsent: [UInt8] = []
    private let tls: TLSTestClient?
    /// TLS records received (each counted by its header as its bytes arrive).
    var recordsReceived: Int { tls?.recordsReceived ?? 0 }
    /// The body bytes each answer brought.
    private(set) var bodyBytes: [Int32: Int] = [:]
    /// Body bytes each open request still has to send; nil for one that ends after them.
    private var bodies: [Int32: (left: Int, ends: Bool)] = [:]
    /// Request body bytes handed to nghttp2 (and so sent, or about to be).
    private(set) var bodyBytesSent = 0
    private(set) var statuses: [Int32: String] = [:]
    /// Each answer's header fields as they arrived, and whether each came as a literal
    /// never indexed (HPACK), which nghttp2 tells its reader.
    private(set) var headers: [Int32: [(name: String, value: String, neverIndexed: Bool)]] = [:]
    private(set) var resets: [Int32: UInt32] = [:]
    private(set) var closed = false
    /// The last stream id of the GOAWAY the server sent, if it sent one.
    private(set) var goawayLastStream: Int32?

    /// `ca`: speak through TLS, trusting that CA, with `serverName` as its SNI.
    init?(port: Int, ca: String? = nil, serverName: String = "api.push.apple.com") {
        guard let socket = FrontDoorTests.connection(port: port) else { return nil }
        self.socket = socket
        if let ca {
            guard let tls = TLSTestClient(ca: ca, serverName: serverName, alpn: "h2") else {
                close(socket)
                return nil
            }
            self.tls = tls
        } else {
            tls = nil
        }
        _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) {
            _, frame, name, nameLength, value, valueLength, flags, user in
            let client = Unmanaged<HTTP2TestClient>.fromOpaque(user!).takeUnretainedValue()
            guard let frame else { return 0 }
            let stream = frame.pointee.hd.stream_id
            let name = String(decoding: UnsafeBufferPointer(start: name, count: nameLength), as: UTF8.self)
            let value = String(decoding: UnsafeBufferPointer(start: value, count: valueLength), as: UTF8.self)
            if name == ":status" { client.statuses[stream] = value }
            let neverIndexed = flags & UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) != 0
            client.headers[stream, default: []].append((name, value, neverIndexed))
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, stream, error, user in
            let client = Unmanaged<HTTP2TestClient>.fromOpaque(user!).takeUnretainedValue()
            if error != 0 { client.resets[stream] = error }
            client.bodies[stream] = nil
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, stream, _, length, user in
            let client = Unmanaged<HTTP2TestClient>.fromOpaque(user!).takeUnretainedValue()
            client.bodyBytes[stream, default: 0] += length
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, user in
            let client = Unmanaged<HTTP2TestClient>.fromOpaque(user!).takeUnretainedValue()
            if let frame, frame.pointee.hd.type == UInt8(NGHTTP2_GOAWAY.rawValue) {
                client.goawayLastStream = frame.pointee.goaway.last_stream_id
            }
            return 0
        }
        nghttp2_session_client_new(&session, callbacks, Unmanaged.passUnretained(self).toOpaque())
        nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil, 0)
    }

    deinit {
        nghttp2_session_del(session)
        close(socket)
    }

    /// Opens a request; its body is `body` bytes of `a`, and it ends after them only
    /// when `ends`. Returns its stream id.
    @discardableResult
    func request(_ method: String, _ authority: String, _ path: String, body: Int, ends: Bool = true) -> Int32 {
        let headers = [
            (":method", method), (":scheme", tls == nil ? "http" : "https"), (":authority", authority), (":path", path),
            ("content-type", "application/json"),
        ]
        let copies: [(UnsafeMutablePointer<CChar>, UnsafeMutablePointer<CChar>)] = headers.map {
            (strdup($0.0)!, strdup($0.1)!)
        }
        defer {
            for (name, value) in copies {
                free(name)
                free(value)
            }
        }
        var nva = copies.map { name, value in
            nghttp2_nv(
                name: UnsafeMutableRawPointer(name).assumingMemoryBound(to: UInt8.self),
                value: UnsafeMutableRawPointer(value).assumingMemoryBound(to: UInt8.self), namelen: strlen(name),
                valuelen: strlen(value), flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
        }
        var provider = nghttp2_data_provider()
        provider.read_callback = { session, stream, buffer, length, flags, _, user in
            let client = Unmanaged<HTTP2TestClient>.fromOpaque(user!).takeUnretainedValue()
            guard let body = client.bodies[stream] else { return 0 }
            let count = min(length, body.left)
            if let buffer, count > 0 { memset(buffer, 0x61, count) }
            client.bodies[stream]?.left -= count
            client.bodyBytesSent += count
            if body.left - count == 0 {
                guard body.ends else { return count > 0 ? count : Int(NGHTTP2_ERR_DEFERRED.rawValue) }
                flags!.pointee |= UInt32(NGHTTP2_DATA_FLAG_EOF.rawValue)
            }
            return count
        }
        let stream = nghttp2_submit_request(session, nil, &nva, nva.count, &provider, nil)
        bodies[stream] = (body, ends)
        return stream
    }

    /// Sends what nghttp2 has to send until the socket takes no more, and when `read`,
    /// reads what has arrived. Returns whether any byte moved.
    @discardableResult
    func pump(read: Bool = true) -> Bool {
        var moved = false
        while !closed {
            if unsent.isEmpty, let tls {
                unsent = tls.seal()
                if unsent.isEmpty && !tls.connected { break }
            }
            if unsent.isEmpty {
                var data: UnsafePointer<UInt8>?
                let count = nghttp2_session_mem_send(session, &data)
                guard count > 0, let data else { break }
                let frames = UnsafeBufferPointer(start: data, count: count)
                unsent = tls?.seal(frames) ?? Array(frames)
            }
            let sent = unsent.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno != EAGAIN { closed = true }
                break
            }
            unsent.removeFirst(sent)
            moved = true
        }
        var chunk = [UInt8](repeating: 0, count: 65536)
        while read && !closed {
            let count = recv(socket, &chunk, chunk.count, 0)
            if count == 0 || (count < 0 && errno != EAGAIN) { closed = true }
            guard count > 0 else { break }
            let bytes = chunk[..<count]
            if let tls {
                let plain = bytes.withUnsafeBufferPointer { tls.open($0) }
                _ = nghttp2_session_mem_recv(session, plain, plain.count)
            } else {
                _ = nghttp2_session_mem_recv(session, chunk, count)
            }
            moved = true
        }
        return moved
    }

    /// Pumps until nothing moves for `quiet` milliseconds (the server has stopped
    /// taking or giving) or the connection closes; at most `limit` rounds.
    func pumpUntilQuiet(quiet: Int32 = 300, limit: Int = 100_000) {
        for _ in 0..<limit where !closed {
            if pump() { continue }
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            if !unsent.isEmpty { descriptor.events |= Int16(POLLOUT) }
            if poll(&descriptor, 1, quiet) == 0 { return }
        }
    }

    /// Pumps until `done` holds or the connection closes (at most 30 s of waiting).
    func pump(until done: () -> Bool) {
        for _ in 0..<300 where !done() && !closed {
            if pump() { continue }
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            if !unsent.isEmpty { descriptor.events |= Int16(POLLOUT) }
            _ = poll(&descriptor, 1, 100)
        }
    }
}
