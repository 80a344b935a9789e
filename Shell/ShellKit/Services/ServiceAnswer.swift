import HTTPMessage
import OrderedJSON

/// What a service answers a network request: its report line (`{"network":…}`, written
/// on standard output after the deliveries) and the HTTP response.
typealias ServiceAnswer = (report: JSONObject, response: HTTPResponse)

/// An answer that is one sentence of plain text, and its report line.
func plainAnswer(_ service: String, _ status: Int, _ sentence: String) -> ServiceAnswer {
    (
        JSONObject([
            ("network", .string(service)), ("status", .integer(Int64(status))), ("effect", .string(sentence)),
        ]),
        HTTPResponse(status: status, headers: [("content-type", "text/plain")], body: Array((sentence + "\n").utf8))
    )
}

extension JSON {
    /// A report's `"status":200`, made once: an integer literal formats its digits
    /// each time it becomes a JSON number.
    static let status200: JSON = 200
}
