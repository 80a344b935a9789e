import OrderedJSON
import Testing

@testable import SimulatedDevice

/// The tray keeps its entries in a ring, so a full iOS tray takes a new entry without
/// moving the others. Its contract is the plain array's: these runs hold it to one (the
/// reference below, the tray as it was before the ring) over seeded random posts,
/// replacements, taps, clears and limits, including trays read back with more entries
/// than their limit.
@Suite struct TrayTests {
    /// The tray as an array, oldest first: the reference.
    struct Reference {
        var entries: [(id: String, key: String?)] = []
        var nextID = 1

        /// What `Tray.post` returns, as (id, replaced, full, dropped id).
        mutating func post(key: String?, limit: TrayLimit) -> (String?, Bool, Int?, String?) {
            if let key, let index = entries.firstIndex(where: { $0.key == key }) {
                let id = entries.remove(at: index).id
                entries.append((id, key))
                return (id, true, nil, nil)
            }
            var dropped: String?
            if entries.count >= limit.count {
                if limit.refusesNew { return (nil, false, limit.count, nil) }
                dropped = entries[0].id
                entries.removeFirst(entries.count - limit.count + 1)
            }
            let id = "t\(nextID)"
            nextID += 1
            entries.append((id, key))
            return (id, false, nil, dropped)
        }
    }

    static func post(_ tray: inout Tray, key: String?, limit: TrayLimit) -> (String?, Bool, Int?, String?) {
        let posted = tray.post(
            title: nil, body: nil, collapseKey: key, content: .channel(event: JSONObject()), limit: limit)
        return (posted.id, posted.replaced, posted.full, posted.dropped?.id)
    }

    @Test(arguments: [false, true])
    func theRingAgreesWithAnArrayOverRandomSequences(refusesNew: Bool) {
        var random = SplitMix(seed: refusesNew ? 41 : 40)
        for _ in 0..<300 {
            var limit = TrayLimit(count: Int.random(in: 1...6, using: &random), refusesNew: refusesNew)
            var tray = Tray()
            var reference = Reference()
            // Sometimes a tray read back with more entries than its limit.
            if Bool.random(using: &random) {
                let count = Int.random(in: 0...9, using: &random)
                reference.entries = (0..<count).map { ("t\($0 + 1)", $0 % 3 == 0 ? "k\($0)" : nil) }
                reference.nextID = count + 1
                tray = Tray(
                    entries: reference.entries.map {
                        TrayEntry(
                            id: $0.id, title: nil, body: nil, collapseKey: $0.key,
                            content: .channel(event: JSONObject()))
                    }, nextID: count + 1)
            }
            for step in 0..<60 {
                let roll = Int.random(in: 0..<100, using: &random)
                switch roll {
                case 0..<60:
                    let key = roll < 20 ? "k\(Int.random(in: 0..<4, using: &random))" : nil
                    let got = Self.post(&tray, key: key, limit: limit)
                    let expected = reference.post(key: key, limit: limit)
                    #expect(got.0 == expected.0 && got.1 == expected.1, "step \(step)")
                    #expect(got.2 == expected.2 && got.3 == expected.3, "step \(step)")
                case 60..<80:
                    guard !reference.entries.isEmpty else { continue }
                    let id = reference.entries.randomElement(using: &random)!.id
                    reference.entries.removeAll { $0.id == id }
                    #expect(tray.remove(id)?.id == id)
                case 80..<82:
                    tray.clear()
                    reference.entries.removeAll()
                case 82..<85:
                    #expect(tray.remove("t0") == nil)
                default:
                    limit.count = Int.random(in: 1...6, using: &random)
                }
                #expect(tray.entries.map(\.id) == reference.entries.map(\.id), "step \(step)")
                #expect(tray.entries.map(\.collapseKey) == reference.entries.map(\.key), "step \(step)")
                #expect(tray.count == reference.entries.count)
                #expect(tray.nextID == reference.nextID)
            }
        }
    }
}
