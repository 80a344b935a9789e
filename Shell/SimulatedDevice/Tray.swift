import OrderedJSON

/// The tray: entries oldest first, collapse by key, ids `t1`, `t2`, … per device.
struct Tray {
    /// The entries as a ring: the oldest at `start`, wrapping. A full iOS tray lets its
    /// oldest go with every new entry, and the ring puts the new one in its place instead
    /// of moving the other 63 up (an array's `removeFirst` moved ~10 KB a push).
    private var ring: [TrayEntry] = []
    private var start = 0
    private(set) var nextID = 1

    init() {}

    /// A tray read back from a state file.
    init(entries: [TrayEntry], nextID: Int) {
        self.ring = entries
        self.nextID = max(nextID, 1)
    }

    /// The entries, oldest first.
    var entries: [TrayEntry] { start == 0 ? ring : Array(ring[start...] + ring[..<start]) }
    var count: Int { ring.count }

    /// Posts an entry, or replaces the one with the same collapse key (it keeps its id and
    /// becomes the newest; a replacement is never refused, on Android either). A new entry
    /// on a tray holding `limit.count` is refused, or lets the oldest go (`TrayLimit`).
    mutating func post(
        title: String?, body: String?, collapseKey: String?, content: TrayEntry.Content, limit: TrayLimit,
        buttons: [TrayEntry.Button] = [], presented: TrayEntry.Presentation? = nil, channel: String? = nil,
        icon: String? = nil
    ) -> PushOutcome.Posted {
        let id: String
        var replaced = false
        var dropped: (id: String, kept: Int)?
        var takesTheOldestsPlace = false
        // Collapse keys are unique in the tray, so the ring's order does not matter here.
        if let key = collapseKey, let index = ring.firstIndex(where: { $0.collapseKey == key }) {
            id = ring[index].id
            remove(at: index)
            replaced = true
        } else {
            if ring.count >= limit.count {
                if limit.refusesNew { return PushOutcome.Posted(id: nil, replaced: false, full: limit.count) }
                dropped = (ring[start].id, kept: limit.count)
                if ring.count > limit.count {
                    // More than the limit (a state file's, or a limit lowered): the oldest go.
                    unwrap()
                    ring.removeFirst(ring.count - limit.count)
                }
                takesTheOldestsPlace = true
            }
            id = DecimalDigits.id("t", nextID)
            nextID += 1
        }
        let entry = TrayEntry(
            id: id, title: title, body: body, collapseKey: collapseKey, content: content, buttons: buttons,
            presented: presented, channel: channel, icon: icon)
        if takesTheOldestsPlace {
            ring[start] = entry
            start = (start + 1) % ring.count
        } else {
            unwrap()
            ring.append(entry)
        }
        // Made where it is returned, not filled in a variable, which was copied out
        // (Docs/Performance.md, "Copies the compiler makes of a large struct").
        return PushOutcome.Posted(id: id, replaced: replaced, dropped: dropped)
    }

    mutating func remove(_ id: String) -> TrayEntry? {
        guard let index = ring.firstIndex(where: { $0.id == id }) else { return nil }
        let entry = ring[index]
        remove(at: index)
        return entry
    }

    mutating func clear() {
        ring.removeAll()
        start = 0
    }

    /// Removes the entry at a ring index; the rest keep their order.
    private mutating func remove(at index: Int) {
        let position = (index - start + ring.count) % ring.count
        unwrap()
        ring.remove(at: position)
    }

    /// Puts the oldest entry first again, for the changes a ring cannot make in place.
    private mutating func unwrap() {
        guard start != 0 else { return }
        ring = entries
        start = 0
    }
}
