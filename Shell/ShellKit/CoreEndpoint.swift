import CXHost
import OrderedJSON

/// The core's end of the app's host, as the shell plays it: stream deliveries become
/// output lines, call answers wait for the request's reply, and the live keys are
/// tracked for `state`.
final class CoreEndpoint: Sendable {
    private struct Log {
        var lines: [String] = []
        var answers: [CallID: PluginResponse] = [:]
        var keys: [String] = []
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
                log.keys.removeAll { $0 == key }
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

    func subscribed(_ key: String) {
        log.withLock { log in
            if !log.keys.contains(key) { log.keys.append(key) }
        }
    }

    func unsubscribed(_ key: String) {
        log.withLock { $0.keys.removeAll { $0 == key } }
    }

    /// The app's process ended: its subscriptions and pending answers are gone.
    func processEnded() {
        log.withLock { log in
            log.keys.removeAll()
            log.answers.removeAll()
        }
    }

    var keys: [String] { log.withLock { $0.keys } }
}
