import CXHost
import OrderedJSON

/// The core's end of every app host in the world, as the shell plays it: stream
/// deliveries become output lines naming their device, and call answers wait for
/// the request's reply.
final class CoreEndpoint: Sendable {
    private struct Answer: Hashable {
        let device: String
        let call: CallID
    }

    private struct Log {
        var lines: [String] = []
        var answers: [Answer: PluginResponse] = [:]
    }

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
                log.lines.append(
                    JSONObject([
                        ("delivery", .string(key)), ("device", .string(device)), ("ok", .bool(response.ok)),
                        ("output", .string(response.output)),
                    ])
                    .compactText)
            case .end(let key):
                log.lines.append(
                    JSONObject([("delivery", .string(key)), ("device", .string(device)), ("end", true)]).compactText)
            }
        }
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
}
