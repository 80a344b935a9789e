import Foundation

/// A running world's inspector, asked over HTTP/1.1 in clear text (the port serves it
/// beside TLS): `cxshell healthcheck` and `cxshell mcp` use it. One connection per
/// request (`Connection: close`), so an answer is read to the end of the connection.
struct InspectorClient: Sendable {
    var host: String
    var port: Int
    var token: String?

    /// An answer: its status and body.
    struct Answer: Sendable {
        var status: Int
        var body: [UInt8]
    }

    struct Problem: Error, Equatable, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    var shown: String { "http://\(host.contains(":") ? "[\(host)]" : host):\(port)" }

    /// Where `http://HOST:PORT[/…]` points; a sentence when it is not such a URL.
    static func parse(url: String) -> Result<(host: String, port: Int, path: String), Problem> {
        guard url.hasPrefix("http://") else {
            return .failure(Problem("the URL must start with http:// (the port serves clear text too), not '\(url)'"))
        }
        let rest = url.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" }
        guard let (host, port) = ServeOptions.splitAddress(String(authority)), port > 0 else {
            return .failure(Problem("the URL must name a host and a port: http://HOST:PORT, not '\(url)'"))
        }
        return .success((host, port, String(rest.dropFirst(authority.count))))
    }

    /// Sends one request and reads its whole answer, within `timeoutSeconds`.
    func send(_ method: String, _ path: String, body: [UInt8]? = nil, timeoutSeconds: Int = 60) -> Result<
        Answer, Problem
    > {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let first = found else {
            return .failure(Problem("\(host) is not a known host"))
        }
        defer { freeaddrinfo(found) }
        let socket = Glibc.socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard socket >= 0 else { return .failure(Problem("no socket: \(String(cString: strerror(errno)))")) }
        defer { close(socket) }
        var limit = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        guard connect(socket, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            return .failure(Problem("cannot connect: \(String(cString: strerror(errno)))"))
        }
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(authority)\r\nConnection: close\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        if let body { head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n" }
        guard writeAll(Array((head + "\r\n").utf8) + (body ?? []), to: socket) else {
            return .failure(Problem("the connection closed"))
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(socket, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            answer += buffer[..<count]
        }
        // "HTTP/1.1 200 OK": the status is the second word of the first line.
        let line = String(decoding: answer.prefix { $0 != 0x0D && $0 != 0x0A }, as: UTF8.self)
        let words = line.split(separator: " ")
        guard words.count >= 2, words[0].hasPrefix("HTTP/"), let status = Int(words[1]) else {
            return .failure(Problem(answer.isEmpty ? "no answer" : "not an HTTP answer: '\(line.prefix(80))'"))
        }
        // The body follows the first empty line.
        var start = answer.count
        var index = 0
        while index + 3 < answer.count {
            if answer[index] == 0x0D && answer[index + 1] == 0x0A && answer[index + 2] == 0x0D
                && answer[index + 3] == 0x0A
            {
                start = index + 4
                break
            }
            index += 1
        }
        return .success(Answer(status: status, body: Array(answer[start...])))
    }
}
