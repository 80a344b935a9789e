import Testing

@testable import ShellKit
@testable import SimulatedDevice

/// `BySource` keeps what a dictionary keyed by source would: checked against one over
/// a replayable run of changes from interleaved sources, names that share a prefix or a
/// length included, and a name too long to be stored inline, in two copies.
struct BySourceTests {
    @Test func keepsWhatADictionaryKeeps() {
        let long = "a-source-name-too-long-to-be-stored-inline"
        // The long name twice, in two places in memory: one source all the same.
        let sources = [
            "apns", "fcm", "fc", "fcmx", "lines", "api", "", long, String(decoding: Array(long.utf8), as: UTF8.self),
        ]
        var generator = IDGenerator(seed: 40)  // replayable
        var kept = BySource<[Int: Int]>()
        var reference: [String: [Int: Int]] = [:]
        for step in 0..<2_000 {
            let source = sources.randomElement(using: &generator)!
            let status = [200, 400, 410].randomElement(using: &generator)!
            if Int.random(in: 0..<4, using: &generator) == 0 {
                #expect(kept[source, default: [:]] == reference[source, default: [:]], "step \(step): read \(source)")
            } else {
                kept[source, default: [:]][status, default: 0] += 1
                reference[source, default: [:]][status, default: 0] += 1
            }
        }
        #expect(kept.sorted.map(\.source) == reference.keys.sorted())
        #expect(kept.sorted.map(\.value) == reference.keys.sorted().map { reference[$0]! })
    }

    @Test func aReadKeepsNothing() {
        var kept = BySource<Int>()
        #expect(kept["apns", default: 7] == 7)
        #expect(kept.sorted.isEmpty)
        kept["apns", default: 0] += 1
        #expect(kept["fcm", default: 0] == 0)
        #expect(kept.sorted.map(\.source) == ["apns"])
    }
}
