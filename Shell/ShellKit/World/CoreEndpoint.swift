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
        /// Each device's last deliveries, for the inspector's device view.
        var recent: [String: Recent] = [:]
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
                log.append(Self.itemLine(key: key, device: device, response: response), from: device)
            case .end(let key):
                log.append(Self.endLine(key: key, device: device), from: device)
            }
        }
    }

    /// A stream item's line: `{"delivery":KEY,"device":ID,"ok":BOOL,"output":TEXT}`,
    /// compact, members in that order.
    static func itemLine(key: String, device: String, response: PluginResponse) -> String {
        // Room for the worst case, every byte escaped: the output is an event's JSON text,
        // a quote every few bytes, and room for the text alone had each string measured
        // before it was written (~0.45k instructions a line). The room is the writer's
        // alone; the line is made of what was written.
        let strings =
            JSON.worstCaseSize(ofStringBytes: key.utf8.count) + JSON.worstCaseSize(ofStringBytes: device.utf8.count)
            + JSON.worstCaseSize(ofStringBytes: response.output.utf8.count)
        // The names, colons, commas, braces and `false`.
        let frame = 44
        return line(capacity: frame + strings) { writer in
            writer.member("delivery", key)
            writer.member("device", device)
            writer.member("ok", response.ok)
            writer.member("output", response.output)
        }
    }

    /// A stream end's line: `{"delivery":KEY,"device":ID,"end":true}`.
    static func endLine(key: String, device: String) -> String {
        line(capacity: 40 + key.utf8.count + device.utf8.count) { writer in
            writer.member("delivery", key)
            writer.member("device", device)
            writer.member("end", true)
        }
    }

    /// A delivery line written straight into its bytes by the log's JSON writer: one a
    /// delivery, where building a `JSONObject` and serializing it cost the handler 9.0k
    /// instructions against 6.4k (callgrind).
    private static func line(capacity: Int, _ members: (inout RequestLog.JSONWriter) -> Void) -> String {
        var writer = RequestLog.JSONWriter(capacity: capacity)
        writer.output.append(UInt8(ascii: "{"))
        members(&writer)
        writer.output.append(UInt8(ascii: "}"))
        return writer.output.withBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// A device's last deliveries (at most `recentCount`), oldest first.
    func recentDeliveries(of device: String) -> [String] {
        log.withLock { $0.recent[device]?.oldestFirst ?? [] }
    }

    /// The last `recentCount` lines, in a ring written in place.
    struct Recent {
        private var lines: [String] = []
        private var next = 0

        mutating func append(_ line: String) {
            if lines.count < CoreEndpoint.recentCount {
                lines.append(line)
            } else {
                lines[next] = line
                next = (next + 1) % lines.count
            }
        }

        var oldestFirst: [String] { Array(lines[next...] + lines[..<next]) }
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

    /// Every device left the world (a reset): answers owed and recent deliveries go.
    func forgetAll() {
        log.withLock { log in
            log.answers.removeAll()
            log.recent.removeAll()
        }
    }

    /// A device left the world: its recent deliveries go with it.
    func forget(_ device: String) {
        log.withLock { $0.recent[device] = nil }
    }
}

extension CoreEndpoint.Log {
    fileprivate mutating func append(_ line: String, from device: String) {
        lines.append(line)
        recent[device, default: CoreEndpoint.Recent()].append(line)
    }
}
