import CXHost
import OrderedJSON

/// The core's end of every app host in the world, as the shell plays it: stream
/// deliveries become output lines naming their device, and call answers wait for
/// the request's reply.
final class CoreEndpoint: Sendable {
    fileprivate struct Answer: Hashable {
        let device: String
        let call: CallID
    }

    fileprivate struct Log {
        var lines: [String] = []
        var answers: [Answer: PluginResponse] = [:]
        /// Each device's last deliveries, oldest first, for the inspector's device view.
        var recent: [String: [String]] = [:]
    }

    /// How many of a device's deliveries `recentDeliveries` keeps.
    static let recentCount = 100

    private let log = Monitor(Log())

    /// The handler for the host of device `device`; runs on that host's delivery thread.
    func receiver(for device: String) -> @Sendable (Delivery) -> Void {
        { [self] delivery in receive(delivery, from: device) }
    }

    private func receive(_ delivery: Delivery, from device: String) {
        log.withLock { log in
            switch delivery {
            case .response(let id, let response):
                log.answers[Answer(device: device, call: id)] = response
            case .item(let key, let response):
                log.append(
                    JSONObject([
                        ("delivery", .string(key)), ("device", .string(device)), ("ok", .bool(response.ok)),
                        ("output", .string(response.output)),
                    ])
                    .compactText, from: device)
            case .end(let key):
                log.append(
                    JSONObject([("delivery", .string(key)), ("device", .string(device)), ("end", true)]).compactText,
                    from: device)
            }
        }
    }

    /// A device's last deliveries (at most `recentCount`), oldest first.
    func recentDeliveries(of device: String) -> [String] {
        log.withLock { $0.recent[device] ?? [] }
    }

    func takeLines() -> [String] {
        log.withLock { log in
            defer { log.lines.removeAll() }
            return log.lines
        }
    }

    func takeAnswer(_ id: CallID, from device: String) -> PluginResponse? {
        log.withLock { $0.answers.removeValue(forKey: Answer(device: device, call: id)) }
    }

    /// A device's app process ended: answers it still owed are gone with it.
    func processEnded(on device: String) {
        log.withLock { log in log.answers = log.answers.filter { $0.key.device != device } }
    }

    /// A device left the world: its recent deliveries go with it.
    func forget(_ device: String) {
        log.withLock { $0.recent[device] = nil }
    }
}

extension CoreEndpoint.Log {
    fileprivate mutating func append(_ line: String, from device: String) {
        lines.append(line)
        var kept = recent[device] ?? []
        if kept.count == CoreEndpoint.recentCount { kept.removeFirst() }
        kept.append(line)
        recent[device] = kept
    }
}
