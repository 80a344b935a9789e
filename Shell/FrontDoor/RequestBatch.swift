import HTTPMessage

/// The requests the door read for one batch, oldest first, each handed on once: moved
/// to whoever answers it, never copied (a copy of a request counts some ten references
/// up and its release down again, ~0.25k instructions).
public struct RequestBatch: ~Copyable {
    /// nil once handed on.
    private var requests: [HTTPRequest?]
    private var handed = 0

    init(_ requests: consuming [HTTPRequest?]) {
        self.requests = requests
    }

    /// How many requests the batch came with.
    public var count: Int { requests.count }

    /// Whether every request has been handed on.
    public var isEmpty: Bool { handed >= requests.count }

    /// The next request not handed on yet, oldest first; the batch must not be empty.
    /// Taken in a loop, not by a method given a closure, and not as an `Optional`: a
    /// request passed to a closure that consumes it, or bound out of an `Optional` that
    /// another module returned, was copied for the call (Docs/Performance.md, "Copies
    /// the compiler makes").
    public mutating func take() -> HTTPRequest {
        precondition(handed < requests.count, "take() on a batch with no request left")
        handed += 1
        return requests[handed - 1].take()!
    }
}
