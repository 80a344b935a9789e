/// Values kept by a request's source (the door or service it came by: `apns`, `fcm`,
/// `lines`, `api`…), one of them changed on every request.
///
/// Why not a dictionary: there are a dozen sources at most, and a dictionary hashed the
/// name on every request, twice (the log's counts and the metrics' durations: ~750
/// instructions of a push). Here the source the last request changed is tried first, then
/// the others in turn; a short name compares in a few instructions.
struct BySource<Value> {
    private var entries: [(source: String, value: Value)] = []
    private var last = 0

    /// The value kept for `source`, or `initial` when there is none; set or changed in
    /// place, it is kept for `source` from then on.
    subscript(source: String, default initial: @autoclosure () -> Value) -> Value {
        get {
            guard let index = index(of: source) else { return initial() }
            return entries[index].value
        }
        _modify {
            let index: Int
            if let found = self.index(of: source) {
                index = found
            } else {
                entries.append((source, initial()))
                index = entries.count - 1
            }
            last = index
            yield &entries[index].value
        }
    }

    /// Every source with its value, the sources in order.
    var sorted: [(source: String, value: Value)] { entries.sorted { $0.source < $1.source } }

    private func index(of source: String) -> Int? {
        if last < entries.count, entries[last].source == source { return last }
        return entries.firstIndex { $0.source == source }
    }
}

extension BySource: Sendable where Value: Sendable {}
