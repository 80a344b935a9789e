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

    private(set) var durations: [String: Durations] = [:]
    private(set) var deliveries: [String: Int] = ["received": 0, "opened": 0, "token_refresh": 0, "other": 0]

    mutating func observe(source: String, seconds: Double, deliveries lines: [String]) {
        // In place: a copy of the entry would copy its buckets on every request.
        durations[source, default: Durations()].observe(seconds)
        for line in lines { deliveries[Self.kind(of: line), default: 0] += 1 }
    }

    private static let kinds: [(kind: String, ending: StaticString)] = [
        ("received", #"mobiler_push\":\"received\"}"}"#), ("opened", #"mobiler_push\":\"opened\"}"}"#),
        ("token_refresh", #"mobiler_push\":\"token_refresh\"}"}"#),
    ]

    /// A delivery line's event kind: the push plugin's `mobiler_push`, which ends its
    /// event (escaped there, as the output is a string); any other delivery is `other`.
    /// Every delivery is asked: its last bytes are compared, not characters.
    static func kind(of line: String) -> String {
        var line = line
        return line.withUTF8 { bytes in
            for (kind, ending) in kinds where bytes.count >= ending.utf8CodeUnitCount {
                let count = ending.utf8CodeUnitCount
                if memcmp(bytes.baseAddress! + bytes.count - count, ending.utf8Start, count) == 0 { return kind }
            }
            return "other"
        }
    }

    /// The Prometheus text of these metrics.
    var exposition: String {
        var text = "# HELP cx_request_duration_seconds How long the world took to answer a request, by its door.\n"
        text += "# TYPE cx_request_duration_seconds histogram\n"
        for (source, durations) in durations.sorted(by: { $0.key < $1.key }) {
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
        for (kind, count) in deliveries.sorted(by: { $0.key < $1.key }) {
            text += "cx_deliveries_total{kind=\"\(kind)\"} \(count)\n"
        }
        return text
    }
}
