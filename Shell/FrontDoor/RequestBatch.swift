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

    /// The next request not handed on yet, oldest first; nil past the last. A loop over
    /// it rather than a method taking a closure: a request passed to a closure that
    /// consumes it was copied for the call (Swift 6.3 -O).
    public mutating func next() -> HTTPRequest? {
        guard handed < requests.count else { return nil }
        handed += 1
        return requests[handed - 1].take()
    }
}
