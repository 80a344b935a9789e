import FrontDoor
import HTTPMessage

extension RequestBatch {
    /// The answers `transform` gives each request still in the batch, in order: how a
    /// test's handler reads like a `map` (`cxshell serve` loops over `take()`).
    mutating func map(_ transform: (HTTPRequest) -> HTTPResponse) -> [HTTPResponse] {
        var responses: [HTTPResponse] = []
        while !isEmpty { responses.append(transform(take())) }
        return responses
    }
}
