/// What waits for the next `events` subscriber (TAP-2 … TAP-6, TOK-2): at most 32
/// `opened` events, the oldest dropped first and counted, plus one slot for the
/// newest token rotation, all in arrival order. A value type: the rules are here and
/// nowhere else.
public struct TapBuffer: Sendable, Equatable {
    public static let capacity = 32

    public enum Entry: Sendable, Equatable {
        /// An `opened` event's JSON text.
        case opened(String)
        /// The newest rotated token not yet delivered.
        case tokenRefresh(token: String)

        /// The event's JSON text, as the stream carries it.
        public var eventText: String {
            switch self {
            case .opened(let text): text
            case .tokenRefresh(let token): PushEvent.tokenRefresh(token).compactText
            }
        }
    }

    public private(set) var entries: [Entry] = []
    private var tapCount = 0
    /// Taps dropped by the bound since this buffer was made (TAP-3).
    public private(set) var droppedTaps = 0

    public init() {}

    /// Events waiting, taps and token together.
    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }

    /// TAP-3: adds a tap's event; past 32 the oldest tap is dropped.
    public mutating func addOpened(_ eventText: String) {
        if tapCount == Self.capacity,
            let oldest = entries.firstIndex(where: { if case .opened = $0 { true } else { false } })
        {
            entries.remove(at: oldest)
            tapCount -= 1
            droppedTaps += 1
        }
        entries.append(.opened(eventText))
        tapCount += 1
    }

    /// The token waiting in the slot, if any.
    public var pendingToken: String? {
        for case .tokenRefresh(let token) in entries { return token }
        return nil
    }

    /// TOK-2: keeps only the newest rotation, placed where it arrived.
    public mutating func setTokenRefresh(_ token: String) {
        entries.removeAll { if case .tokenRefresh = $0 { true } else { false } }
        entries.append(.tokenRefresh(token: token))
    }

    /// TAP-4: hands the entries to `deliver`, oldest first, until it refuses one (the
    /// subscription died meanwhile). Returns the entries delivered; the rest stay, in
    /// order, for the next subscription: an event is never lost to a failed emit.
    public mutating func flush(through deliver: (Entry) -> Bool) -> [Entry] {
        var delivered = 0
        while delivered < entries.count, deliver(entries[delivered]) { delivered += 1 }
        let done = Array(entries[..<delivered])
        entries.removeFirst(delivered)
        tapCount -= done.count { if case .opened = $0 { true } else { false } }
        return done
    }
}
