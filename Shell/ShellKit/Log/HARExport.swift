import OrderedJSON

/// The log's network requests as HAR 1.2 (`GET /api/v1/log.har`): what a browser's
/// network panel, a HAR viewer or a HAR library opens. Each entry is a request that came
/// over the network, with its answer's status, headers and body, and how long the world
/// took over it; secrets are redacted as every other read of the log shows them.
/// Requests from the line protocol and the API's own ops are not HTTP exchanges and are
/// left out. Pure: a function of the entries.
enum HARExport {
    static func document(_ entries: [RequestLog.Entry], version: String) -> JSON {
        .object(
            JSONObject([
                (
                    "log",
                    .object(
                        JSONObject([
                            ("version", "1.2"),
                            ("creator", .object(JSONObject([("name", "cxshell"), ("version", .string(version))]))),
                            ("pages", .array([])),
                            ("entries", .array(entries.compactMap(entry))),
                        ]))
                )
            ]))
    }

    /// One HAR entry; nil for a request that did not come over the network.
    static func entry(_ entry: RequestLog.Entry) -> JSON? {
        let record = entry.record
        guard let exchange = record.exchange,
            let request = try? JSON.parse(record.requestJSON(body: nil, redacted: !entry.secretsShown)),
            let method = request["method"]?.stringValue
        else { return nil }
        let path = request["path"]?.stringValue ?? "/"
        // The URL as the client asked for it: the authority with its port (the log's
        // `host` leaves the port out, for filtering).
        let host = request["authority"]?.stringValue ?? request["host"]?.stringValue ?? "localhost"
        let version = exchange.http2 ? "HTTP/2" : "HTTP/1.1"
        let requestHeaders = (request["headers"]?.objectValue ?? JSONObject()).map { pair in
            nameValue(pair.0, pair.1.stringValue ?? "")
        }
        var requestObject = JSONObject([
            ("method", .string(method)),
            ("url", .string((exchange.tls ? "https://" : "http://") + host + path)),
            ("httpVersion", .string(version)), ("cookies", .array([])), ("headers", .array(requestHeaders)),
            ("queryString", .array(query(of: path))), ("headersSize", -1),
            ("bodySize", .integer(Int64(record.body?.count ?? 0))),
        ])
        if let body = entry.shown(record.body) {
            let type = requestHeaders.first { $0["name"]?.stringValue?.lowercased() == "content-type" }
            requestObject["postData"] = .object(
                JSONObject([
                    ("mimeType", type?["value"] ?? ""), ("text", .string(String(decoding: body, as: UTF8.self))),
                ]))
        }
        let responseBody = entry.secretsShown ? exchange.responseBody : Redaction.body(exchange.responseBody)
        let responseHeaders = exchange.responseHeaders.filter { $0.name.first != ":" }.map { pair in
            nameValue(pair.name, entry.secretsShown ? pair.value : Redaction.header(name: pair.name, value: pair.value))
        }
        let type = exchange.responseHeaders.first { $0.name.lowercased() == "content-type" }?.value ?? ""
        let milliseconds = Double(record.microseconds) / 1000
        return .object(
            JSONObject([
                ("startedDateTime", .string(RequestLog.timestamp(entry.milliseconds - record.microseconds / 1000))),
                ("time", .real(milliseconds)),
                ("request", .object(requestObject)),
                (
                    "response",
                    .object(
                        JSONObject([
                            ("status", .integer(Int64(entry.status))),
                            ("statusText", .string(statusText(entry.status))),
                            ("httpVersion", .string(version)), ("cookies", .array([])),
                            ("headers", .array(responseHeaders)),
                            (
                                "content",
                                .object(
                                    JSONObject([
                                        ("size", .integer(Int64(exchange.responseBody.count))),
                                        ("mimeType", .string(type)),
                                        ("text", .string(String(decoding: responseBody, as: UTF8.self))),
                                    ]))
                            ),
                            ("redirectURL", ""), ("headersSize", -1),
                            ("bodySize", .integer(Int64(exchange.responseBody.count))),
                        ]))
                ),
                ("cache", .object(JSONObject())),
                (
                    "timings",
                    .object(
                        JSONObject([
                            ("blocked", -1), ("dns", -1), ("connect", -1), ("ssl", -1), ("send", 0),
                            ("wait", .real(milliseconds)), ("receive", 0),
                        ]))
                ),
                ("_seq", .integer(entry.seq)), ("_source", .string(entry.source)),
                ("_effect", record.effect.map(JSON.string) ?? .null),
            ]))
    }

    static func nameValue(_ name: String, _ value: String) -> JSON {
        .object(JSONObject([("name", .string(name)), ("value", .string(value))]))
    }

    /// The query's members as sent (not decoded), in order.
    static func query(of path: String) -> [JSON] {
        guard let mark = path.firstIndex(of: "?") else { return [] }
        return path[path.index(after: mark)...].split(separator: "&").map { member in
            let parts = member.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return nameValue(String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
    }

    /// The reason phrase HTTP/1.1 gives a status (HTTP/2 has none: HAR wants one anyway).
    static func statusText(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 410: "Gone"
        case 413: "Payload Too Large"
        case 421: "Misdirected Request"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        default: ""
        }
    }
}
