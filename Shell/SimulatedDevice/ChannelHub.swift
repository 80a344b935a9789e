import CXHost
import MQTTClient

/// A message that came from a channel on its own time, not in answer to a request:
/// which device's connection took it, and which life of that connection.
public struct ChannelArrival: Sendable {
    public var deviceID: String
    public var clientID: String
    /// The connection's number on its device: an arrival from a connection that has
    /// since closed (its process ended) is told apart from a current one.
    public var connection: Int
    /// `ChannelHub.publications` when the connection's current session began.
    public var sessionStart: Int
    public var message: MQTTMessage
}

/// What the world's channels share: the arrivals waiting to be handled, the front
/// door's address (the `http` channel's URLs name it), and which device holds each
/// webhook recipient id. Thread-safe: MQTT network threads post arrivals here.
public final class ChannelHub: Sendable {
    private let arrivals = Monitor(Arrivals())
    private let directory = Monitor(Directory())

    struct Arrivals {
        var waiting: [ChannelArrival] = []
        var closed = false
    }

    struct Directory {
        var frontDoorAddress: String?
        /// Webhook recipient id → device id, for every recipient ever issued.
        var recipients: [String: String] = [:]
    }

    private let published = Monitor(0)

    public init() {}

    /// How many messages the world's Appwrite server has published: a message counted
    /// before a connection's session began was sent while it was away (APW-14).
    public var publications: Int { published.withLock { $0 } }

    /// Counts one publication, before it goes to the broker; its number (from 1).
    public func countPublication() -> Int {
        published.withLock { count in
            count += 1
            return count
        }
    }

    func post(_ arrival: ChannelArrival) {
        arrivals.withLock { arrivals in
            arrivals.waiting.append(arrival)
            self.arrivals.broadcast()
        }
    }

    /// Sleeps until at least `count` arrivals wait, `timeout` seconds passed, or
    /// the hub is closed; returns whether they are there.
    public func waitForArrivals(count: Int = 1, timeout: Double) -> Bool {
        arrivals.wait(
            until: { $0.waiting.count >= count || $0.closed }, timeout: timeout,
            then: { $0.waiting.count >= count })
    }

    /// Wakes every waiter for good: whoever handles arrivals stops.
    public func close() {
        arrivals.withLock { arrivals in
            arrivals.closed = true
            self.arrivals.broadcast()
        }
    }

    public var isClosed: Bool { arrivals.withLock { $0.closed } }

    /// Takes the waiting arrivals, oldest first (at most `limit`).
    public func takeArrivals(limit: Int = .max) -> [ChannelArrival] {
        arrivals.withLock { arrivals in
            let taken = Array(arrivals.waiting.prefix(limit))
            arrivals.waiting.removeFirst(taken.count)
            return taken
        }
    }

    /// `ADDRESS:PORT` of the front door, once `cxshell serve --listen` opened it.
    public var frontDoorAddress: String? {
        get { directory.withLock { $0.frontDoorAddress } }
        set { directory.withLock { $0.frontDoorAddress = newValue } }
    }

    /// The device that was issued webhook recipient `id`.
    public func device(ofRecipient id: String) -> String? {
        directory.withLock { $0.recipients[id] }
    }

    func issue(recipient: String, to device: String) {
        directory.withLock { $0.recipients[recipient] = device }
    }
}
