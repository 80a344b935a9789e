import CXHost
import OrderedJSON

/// The core's end of the app's host, as the shell plays it: stream deliveries become
/// output lines, and call answers wait for the request's reply.
final class CoreEndpoint: Sendable {
    private struct Log {
        var lines: [String] = []
        var answers: [CallID: PluginResponse] = [:]
    }

    private let log = Monitor(Log())

    /// Called on the host's delivery thread.
    func receive(_ delivery: Delivery) {
        log.withLock { log in
            switch delivery {
            case .response(let id, let response):
                log.answers[id] = response
            case .item(let key, let response):
                log.lines.append(
                    JSONObject([
                        ("delivery", .string(key)), ("ok", .bool(response.ok)), ("output", .string(response.output)),
                    ])
                    .compactText)
            case .end(let key):
                log.lines.append(JSONObject([("delivery", .string(key)), ("end", true)]).compactText)
            }
        }
    }

    func takeLines() -> [String] {
        log.withLock { log in
            defer { log.lines.removeAll() }
            return log.lines
        }
    }

    func takeAnswer(_ id: CallID) -> PluginResponse? {
        log.withLock { $0.answers.removeValue(forKey: id) }
    }

    /// The app's process ended: answers it still owed are gone with it.
    func processEnded() {
        log.withLock { $0.answers.removeAll() }
    }
}
