import Foundation

/// One HTTP request as the front door's transport hands it to a service: what was
/// sent, nothing about the socket it came on. HTTP/2 pseudo-headers (`:method`,
/// `:path`, `:authority`, `:scheme`) come first, as sent; names are lowercase.
public struct HTTPRequest: Sendable {
    public let headers: HTTPHeaders
    /// Where `:path` is among the headers. The path is read as bytes where every request
    /// reads it (the route, an APNs token, an FCM project, the log's stream); made text
    /// when it arrived, its allocation and release were ~0.6k instructions an APNs push.
    @usableFromInline let pathIndex: Int?
    public var body: [UInt8]
    /// The TLS server name (SNI), or the host a proxy's CONNECT opened the tunnel to.
    public var serverName: String?
    public var tls: Bool
    /// HTTP/2 (else HTTP/1.1).
    public var http2: Bool

    /// The first value of `name`.
    public func header(_ name: StaticString) -> String? { headers.value(named: name) }

    /// `:path` as text, made each time it is asked for (`withPath` reads it in place).
    public var path: String? { pathIndex.map(headers.value(at:)) }

    /// `:path`'s bytes in place (nil: none was sent).
    @inlinable
    public func withPath<T>(_ body: (UnsafeBufferPointer<UInt8>?) -> T) -> T {
        guard let pathIndex else { return body(nil) }
        return headers.withValueBytes(at: pathIndex) { body($0) }
    }

    /// The credentials of the first `authorization` header when its scheme is `Bearer`
    /// (in any case, as RFC 9110 has it), else nil.
    public var bearerToken: String? {
        withBearerToken { token in token.map { String(decoding: $0, as: UTF8.self) } }
    }

    /// `bearerToken`'s bytes in place (nil: none): by bytes, since lowercasing the header
    /// and cutting it by Characters cost some 2,000 instructions of every FCM message.
    public func withBearerToken<T>(_ body: (UnsafeBufferPointer<UInt8>?) -> T) -> T {
        guard let index = headers.firstIndex(named: "authorization") else { return body(nil) }
        return headers.withValueBytes(at: index) { value in
            let scheme: StaticString = "bearer "
            let length = scheme.utf8CodeUnitCount
            guard value.count >= length else { return body(nil) }
            for index in 0..<length {
                let (byte, expected) = (value[index], scheme.utf8Start[index])
                guard
                    (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 == expected : byte == expected
                else { return body(nil) }
            }
            return body(UnsafeBufferPointer(rebasing: value[length...]))
        }
    }

    /// The first header, other than a pseudo-header, that was sent more than once.
    public var repeatedHeaderName: String? { headers.repeatedName }

    public var method: String? { header(":method") }

    /// Whether `:method` is `method`, compared as bytes in place: services ask it of
    /// every request, and `method` makes a `String` each time (~250 instructions).
    public func hasMethod(_ method: StaticString) -> Bool {
        guard let index = headers.firstIndex(named: ":method") else { return false }
        return headers.withValueBytes(at: index) { $0.equalsBytes(of: method) }
    }

    /// The host `:authority` (or `Host`) names, without a port, lowercased.
    public var authorityHost: String? {
        withAuthorityHost { host in host.map { Self.lowercasedText($0) } }
    }

    /// The bytes of `authorityHost` in place, in the case they were sent (nil: neither
    /// header): routing every request compares them without making text of them.
    public func withAuthorityHost<T>(_ body: (UnsafeBufferPointer<UInt8>?) -> T) -> T {
        guard let index = headers.firstIndex(named: ":authority") ?? headers.firstIndex(named: "host") else {
            return body(nil)
        }
        return headers.withValueBytes(at: index) { body(Self.host(inAuthority: $0)) }
    }

    /// The host the connection was opened for (SNI, or a CONNECT's target), lowercased.
    public var serverHost: String? { serverName.map(Self.hostWithoutPort) }

    /// Bytes, not characters. An authority that is already a bare lowercase host is
    /// returned as it is.
    static func hostWithoutPort(_ authority: String) -> String {
        var text = authority
        return text.withUTF8 { bytes in
            let host = host(inAuthority: bytes)
            guard host.contains(where: { (65...90).contains($0) }) || host.count != bytes.count else {
                return authority
            }
            return lowercasedText(host)
        }
    }

    /// The host of an authority (`host`, `host:port`, `[v6]`, `[v6]:port`): a view
    /// into the same bytes.
    static func host(inAuthority bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        let start = bytes.first == UInt8(ascii: "[") ? 1 : 0
        let end =
            start == 1
            ? bytes[1...].firstIndex(of: UInt8(ascii: "]")) ?? bytes.count
            : bytes.firstIndex(of: UInt8(ascii: ":")) ?? bytes.count
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    private static func lowercasedText(_ host: UnsafeBufferPointer<UInt8>) -> String {
        guard host.contains(where: { (65...90).contains($0) }) else { return String(decoding: host, as: UTF8.self) }
        return String(decoding: host.map { (65...90).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
    }
}

// Initializers delegate to the memberwise one, kept while the body declares none: one that
// assigns the members copies the request it built (Docs/Performance.md, "Copies the compiler
// makes of a large struct").
extension HTTPRequest {
    public init(headers: HTTPHeaders, body: [UInt8], serverName: String?, tls: Bool, http2: Bool) {
        self.init(
            headers: headers, pathIndex: headers.firstIndex(named: ":path"), body: body, serverName: serverName,
            tls: tls, http2: http2)
    }

    public init(
        headers: [(name: String, value: String)], body: [UInt8], serverName: String?, tls: Bool, http2: Bool
    ) {
        self.init(headers: HTTPHeaders(headers), body: body, serverName: serverName, tls: tls, http2: http2)
    }
}

/// A service's answer.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    /// The headers whose values are made for this answer alone, such as an id: bit `i`
    /// stands for `headers[i]` (set by `appendHeader(_:_:unique:)`). HTTP/2 sends them as
    /// literals never indexed, out of the connection's HPACK table; HTTP/1.1 ignores it.
    public var uniqueHeaders: UInt64 = 0
    public var body: [UInt8]
    /// When set, the real answer comes later through it, and this one is what is sent if
    /// its wait passes first.
    public var later: HTTPLater?
    /// When set, the transport sends no answer but this fault (chaos.md).
    public var fault: TransportFault?

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON answer: `content-type: application/json` and `body`. The header list is
    /// one made once and shared; a literal one was an allocation of every answer.
    public static func json(status: Int, body: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: status, headers: jsonContentType, body: body)
    }

    private static let jsonContentType: [(name: String, value: String)] = [("content-type", "application/json")]

    /// Appends a header; when `unique`, marks it in `uniqueHeaders` (past the 64th header
    /// no mark is kept, and the header goes indexed like any other).
    public mutating func appendHeader(_ name: String, _ value: String, unique: Bool = false) {
        if unique && headers.count < UInt64.bitWidth { uniqueHeaders |= 1 << headers.count }
        headers.append((name, value))
    }

    /// A 503 that names no service: the world has as many requests in hand as it holds.
    /// The transport sends it when it cannot take a request; the world, for a request of no
    /// service it knows.
    public static let busy = HTTPResponse(
        status: 503, headers: [("content-type", "text/plain"), ("retry-after", "1")],
        body: Array("the world has as many requests in hand as it can hold; try again\n".utf8))
}

/// What the transport does instead of answering (chaos.md, "Rules"): over HTTP/2, a
/// GOAWAY whose last stream id is below the request's (the client retries it on a new
/// connection) or a reset with REFUSED_STREAM; or the connection closed with no answer.
/// Over HTTP/1.1 every fault closes the connection with no answer.
public enum TransportFault: Int32, Sendable {
    case goaway = 1
    case resetStream = 2
    case close = 3
}

/// An answer given later (a long poll, a stream of events), from any thread. What is
/// sent before the transport has taken the request waits for it, in order; once the
/// client is gone (or the wait passed), what is sent is dropped and `isGone` says so.
public final class HTTPLater: @unchecked Sendable {
    public enum Piece: Sendable {
        /// The whole answer.
        case complete(HTTPResponse)
        /// A stream's status and headers; its pieces follow.
        case begin(status: Int, headers: [(name: String, value: String)])
        /// A piece of a stream, handed to the transport with no copy.
        case write(StreamBytes)
        case end
    }

    /// How long the request waits before the response it came with is sent; 0: no limit.
    public let waitMilliseconds: Int
    /// Guards what follows; `send` calls the sink under it, so pieces keep their order.
    private let lock = NSLock()
    private var sink: (@Sendable (Piece) -> Void)?
    private var early: [Piece] = []
    private var gone = false

    public init(waitMilliseconds: Int) {
        self.waitMilliseconds = waitMilliseconds
    }

    public var isGone: Bool { lock.withLock { gone } }

    public func send(_ piece: Piece) {
        lock.withLock {
            guard !gone else { return }
            if let sink { sink(piece) } else { early.append(piece) }
        }
    }

    /// The transport took the request: pieces go to `sink` from now on.
    public func attach(_ sink: @escaping @Sendable (Piece) -> Void) {
        lock.withLock {
            self.sink = sink
            for piece in early { sink(piece) }
            early.removeAll()
        }
    }

    /// The transport will take nothing more (the wait passed, or the client went away).
    public func markGone() {
        lock.withLock {
            gone = true
            sink = nil
            early.removeAll()
        }
    }
}

extension HTTPRequest {
    /// `application/x-www-form-urlencoded` fields (the first of each name).
    public static func formFields(_ body: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: UInt8(ascii: "&")) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = percentDecoded(parts[0]) else { continue }
            let value = parts.count > 1 ? percentDecoded(parts[1]) : ""
            if fields[name] == nil, let value { fields[name] = value }
        }
        return fields
    }

    /// Percent-decoding (`+` is a space in a form, not in a path); nil for an escape that
    /// is not `%` and two hex digits, or bytes that are not UTF-8.
    public static func percentDecoded(_ bytes: ArraySlice<UInt8>, plusIsSpace: Bool = true) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") && plusIsSpace {
                out.append(0x20)
            } else if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.endIndex, let high = hexDigit(bytes[index + 1]),
                    let low = hexDigit(bytes[index + 2])
                else { return nil }
                out.append(high << 4 | low)
                index += 2
            } else {
                out.append(byte)
            }
            index += 1
        }
        return String(validating: out, as: UTF8.self)
    }

    /// A hex digit's value; nil for anything else (a sign included).
    static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// Whether these bytes are `literal`'s: a name or value read in place, compared with
    /// the program's own text without making a `String` of it.
    @inlinable
    public func equalsBytes(of literal: StaticString) -> Bool {
        guard count == literal.utf8CodeUnitCount else { return false }
        for index in 0..<count where self[index] != literal.utf8Start[index] { return false }
        return true
    }

    /// Whether these bytes begin with `prefix`'s. Paths and hosts are routed by bytes, as
    /// HTTP servers do; `hasPrefix` compares by Unicode characters, a runtime call each
    /// time, and a request is tested against several prefixes.
    @inlinable
    public func hasBytePrefix(_ prefix: StaticString) -> Bool {
        let length = prefix.utf8CodeUnitCount
        guard length > 0 else { return true }
        return count >= length && memcmp(baseAddress!, prefix.utf8Start, length) == 0
    }

    /// Whether these bytes end with `suffix`'s; see `hasBytePrefix`.
    @inlinable
    public func hasByteSuffix(_ suffix: StaticString) -> Bool {
        let length = suffix.utf8CodeUnitCount
        guard length > 0 else { return true }
        return count >= length && memcmp(baseAddress! + count - length, suffix.utf8Start, length) == 0
    }
}

extension String {
    /// Whether the UTF-8 begins with `prefix`'s bytes (`UnsafeBufferPointer.hasBytePrefix`).
    public func hasBytePrefix(_ prefix: StaticString) -> Bool { withUTF8Bytes { $0.hasBytePrefix(prefix) } }

    /// Whether the UTF-8 ends with `suffix`'s bytes; see `hasBytePrefix`.
    public func hasByteSuffix(_ suffix: StaticString) -> Bool { withUTF8Bytes { $0.hasByteSuffix(suffix) } }

    /// The UTF-8 in place (native strings, small ones included, are contiguous).
    private func withUTF8Bytes<T>(_ body: (UnsafeBufferPointer<UInt8>) -> T) -> T {
        if let result = utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(utf8).withUnsafeBufferPointer(body)
    }
}
