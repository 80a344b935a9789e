import HTTPMessage
import OrderedJSON

/// What a service answers a network request: its report line (written on standard output
/// after the deliveries) and the HTTP response.
typealias ServiceAnswer = (report: Report, response: HTTPResponse)

/// An answer that is one sentence of plain text, and its report line.
func plainAnswer(_ service: String, _ status: Int, _ sentence: String) -> ServiceAnswer {
    (
        Report(Report.Fields(network: service, status: status, effect: sentence)),
        HTTPResponse(status: status, headers: [("content-type", "text/plain")], body: Array((sentence + "\n").utf8))
    )
}
