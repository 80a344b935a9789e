#if canImport(Glibc)
    import Glibc
#endif

/// What `/metrics` reports beside the log's counts (inspector.md, "Metrics"): how long
/// requests took, by the door they came by, and the deliveries the cores received, by
/// kind. Plain counters, kept on the request path at the cost of a few additions.
struct RequestMetrics {
    /// The histogram's upper bounds, in seconds (Prometheus' `le`).
    static let bounds: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    struct Durations {
        /// Observations at or under each bound (not cumulative; the exposition sums them).
        var buckets = [Int](repeating: 0, count: RequestMetrics.bounds.count + 1)
        var sum = 0.0
        var count = 0

        mutating func observe(_ seconds: Double) {
            buckets[RequestMetrics.bounds.firstIndex { seconds <= $0 } ?? RequestMetrics.bounds.count] += 1
            sum += seconds
            count += 1
        }
    }

    private(set) var durations = BySource<Durations>()
    /// Deliveries by kind, in the order of `kinds`, then `other`: counted by place, as a
    /// table keyed by the kind's name hashed it for every delivery (~0.5k instructions).
    private(set) var deliveries = [Int](repeating: 0, count: kinds.count + 1)

    mutating func observe(source: String, seconds: Double, deliveries lines: [String]) {
        // In place: a copy of the entry would copy its buckets on every request.
        durations[source, default: Durations()].observe(seconds)
        for line in lines { deliveries[Self.kindIndex(of: line)] += 1 }
    }

    private static let kinds: [(kind: String, ending: StaticString)] = [
        ("received", #"mobiler_push\":\"received\"}"}"#), ("opened", #"mobiler_push\":\"opened\"}"}"#),
        ("token_refresh", #"mobiler_push\":\"token_refresh\"}"}"#),
    ]

    /// A delivery line's event kind, as its place in `deliveries`: the push plugin's
    /// `mobiler_push`, which ends its event (escaped there, as the output is a string); any
    /// other delivery is `other`. Every delivery is asked: its last bytes are compared, not
    /// characters.
    private static func kindIndex(of line: String) -> Int {
        var line = line
        return line.withUTF8 { bytes in
            for (index, kind) in kinds.enumerated() where bytes.count >= kind.ending.utf8CodeUnitCount {
                let count = kind.ending.utf8CodeUnitCount
                if memcmp(bytes.baseAddress! + bytes.count - count, kind.ending.utf8Start, count) == 0 { return index }
            }
            return kinds.count
        }
    }

    /// The Prometheus text of these metrics.
    var exposition: String {
        var text = "# HELP cx_request_duration_seconds How long the world took to answer a request, by its door.\n"
        text += "# TYPE cx_request_duration_seconds histogram\n"
        for (source, durations) in durations.sorted {
            var cumulative = 0
            for (index, bound) in Self.bounds.enumerated() {
                cumulative += durations.buckets[index]
                text += "cx_request_duration_seconds_bucket{source=\"\(source)\",le=\"\(bound)\"} \(cumulative)\n"
            }
            text += "cx_request_duration_seconds_bucket{source=\"\(source)\",le=\"+Inf\"} \(durations.count)\n"
            text += "cx_request_duration_seconds_sum{source=\"\(source)\"} \(durations.sum)\n"
            text += "cx_request_duration_seconds_count{source=\"\(source)\"} \(durations.count)\n"
        }
        text += "# HELP cx_deliveries_total Deliveries the app cores received, by the push event's kind.\n"
        text += "# TYPE cx_deliveries_total counter\n"
        let named = zip(Self.kinds.map(\.kind) + ["other"], deliveries)
        for (kind, count) in named.sorted(by: { $0.0 < $1.0 }) {
            text += "cx_deliveries_total{kind=\"\(kind)\"} \(count)\n"
        }
        return text
    }
}
