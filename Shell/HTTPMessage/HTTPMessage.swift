/// One HTTP request as the front door's transport hands it to a service: what was
/// sent, nothing about the socket it came on. HTTP/2 pseudo-headers (`:method`,
/// `:path`, `:authority`, `:scheme`) come first, as sent; names are lowercase.
public struct HTTPRequest: Sendable {
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// The TLS server name (SNI), or the host a proxy's CONNECT opened the tunnel to.
    public var serverName: String?
    public var tls: Bool
    /// HTTP/2 (else HTTP/1.1).
    public var http2: Bool

    public init(
        headers: [(name: String, value: String)], body: [UInt8], serverName: String?, tls: Bool, http2: Bool
    ) {
        self.headers = headers
        self.body = body
        self.serverName = serverName
        self.tls = tls
        self.http2 = http2
    }

    /// The first value of `name`.
    public func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }

    public var method: String? { header(":method") }
    public var path: String? { header(":path") }

    /// The host the request is for, without a port: `:authority` (or `host`), else the
    /// TLS server name.
    public var host: String? {
        guard let authority = header(":authority") ?? header("host") ?? serverName else { return nil }
        if authority.hasPrefix("[") { return String(authority.dropFirst().prefix { $0 != "]" }) }
        return String(authority.prefix { $0 != ":" }).lowercased()
    }
}

/// A service's answer.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
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

    /// Percent-decoding (`+` is a space in a form, not in a path); nil for a bad
    /// escape or bytes that are not UTF-8.
    public static func percentDecoded(_ bytes: ArraySlice<UInt8>, plusIsSpace: Bool = true) -> String? {
        var out: [UInt8] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") && plusIsSpace {
                out.append(0x20)
            } else if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.endIndex,
                    let value = UInt8(String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self), radix: 16)
                else { return nil }
                out.append(value)
                index += 2
            } else {
                out.append(byte)
            }
            index += 1
        }
        return String(validating: out, as: UTF8.self)
    }
}
