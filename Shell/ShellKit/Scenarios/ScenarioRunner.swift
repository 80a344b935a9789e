import CXHost
import Credentials
import Foundation
import HTTPMessage
import MQTTClient
import OrderedJSON
import SimulatedDevice

/// The result of playing one scenario: every request with what it produced, and
/// the first step whose output did not match, if any.
public struct ScenarioRun: Sendable {
    public struct Exchange: Sendable {
        public let step: Scenario.Step
        /// The request line actually sent.
        public let request: String
        /// Deliveries first, then the reply.
        public let output: [String]
        public let failure: String?
    }

    public let scenario: Scenario
    public var exchanges: [Exchange] = []
    public var passed: Bool { exchanges.allSatisfy { $0.failure == nil } }
    public var firstFailure: Exchange? { exchanges.first { $0.failure != nil } }
}

/// Plays scenarios against a fresh `Session` each.
public enum ScenarioRunner {
    /// Plays `scenario`; stops at the first step whose output does not match. `plugins`
    /// registers loaded libraries' plugins on every app host (`cxshell test --plugin`).
    public static func run(_ scenario: Scenario, plugins: @escaping ExtraPlugins = { _ in {} }) -> ScenarioRun {
        let session = Session()
        session.plugins = plugins
        return run(scenario, on: session, source: "line")
    }

    /// Plays `scenario` on a world that is already running (`cxshell serve --fixture`),
    /// its requests logged as from `source`; stops at the first step that does not match.
    public static func run(_ scenario: Scenario, on session: Session, source: String) -> ScenarioRun {
        var pattern = Pattern()
        var run = ScenarioRun(scenario: scenario)
        var channels = ChannelSteps()
        for step in scenario.steps {
            if let token = session.deviceToken { pattern.captures["token"] = .string(token) }
            let request: String
            do {
                request = pattern.fill(step.request)
                if let output = try channels.play(request, session: session, pattern: &pattern) {
                    let failure =
                        request.hasPrefix("await")
                        ? checkArrivals(step, output: output, pattern: &pattern)
                        : check(step, output: output, pattern: &pattern)
                    run.exchanges.append(.init(step: step, request: request, output: output, failure: failure))
                    if failure != nil { return run }
                    continue
                }
            } catch {
                run.exchanges.append(.init(step: step, request: step.request, output: [], failure: "\(error)"))
                return run
            }
            let line: String
            do {
                line = try Self.line(for: request)
            } catch {
                run.exchanges.append(.init(step: step, request: step.request, output: [], failure: "\(error)"))
                return run
            }
            let output = session.handle(line: Array(line.utf8), source: source)
            let failure = check(step, output: output, pattern: &pattern)
            run.exchanges.append(.init(step: step, request: line, output: output, failure: failure))
            if failure != nil { return run }
        }
        return run
    }

    /// An `await` step's output: every line must match the step's deliveries and
    /// reports, in order, and there must be no more lines.
    static func checkArrivals(_ step: Scenario.Step, output: [String], pattern: inout Pattern) -> String? {
        let parsed = output.map { (try? JSON.parse(text: $0)) ?? .null }
        let expected = step.expectations.filter { if case .nothing = $0 { false } else { true } }
        return matchInOrder(expected, parsed[...], output: output, step: step, what: "lines", pattern: &pattern)
    }

    /// Each expectation against the line at its place; then no line may be left over.
    static func matchInOrder(
        _ expected: [Scenario.Expectation], _ lines: ArraySlice<JSON>, output: [String], step: Scenario.Step,
        what: String, pattern: inout Pattern
    ) -> String? {
        for (index, expectation) in expected.enumerated() {
            guard index < lines.count else {
                return "line \(expectation.line): expected \(describe(expectation))\n  got no more \(what)"
            }
            if !matches(expectation, lines[index], pattern: &pattern) {
                return "line \(expectation.line): expected \(describe(expectation))\n  got      \(output[index])"
            }
        }
        if lines.count > expected.count {
            let extra = output[expected.count..<lines.count].joined(separator: "\n           ")
            return "line \(step.line): unexpected \(what):\n  got      \(extra)"
        }
        return nil
    }

    /// A step the runner cannot play, in words.
    struct StepFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// `op {fields}` → a protocol line; `{…}` and `raw TEXT` are sent as written.
    static func line(for text: String) throws -> String {
        if text.hasPrefix("{") { return text }
        let (op, rest) = text.splitFirstWord()
        if op == "raw" { return rest }
        var request = JSONObject([("op", .string(op))])
        guard !rest.isEmpty else { return request.compactText }
        let fields: JSON
        do {
            fields = try JSON.parse(text: rest)
        } catch {
            throw StepFailure(description: "the fields after '\(op)' are not JSON: \(error)")
        }
        guard let object = fields.objectValue else {
            throw StepFailure(description: "the fields after '\(op)' must be a JSON object")
        }
        for (key, value) in object { request[key] = value }
        return request.compactText
    }

    /// Compares one request's output with the step's expectations.
    static func check(_ step: Scenario.Step, output: [String], pattern: inout Pattern) -> String? {
        let parsed = output.map { (try? JSON.parse(text: $0)) ?? .null }
        let deliveries = Array(parsed.dropLast())
        guard let reply = parsed.last else {
            // Only a line that is not a request (white space) gets no reply; its step
            // says so with `< nothing` alone.
            let expectsSilence =
                !step.expectations.isEmpty
                && step.expectations.allSatisfy { if case .nothing = $0 { true } else { false } }
            return expectsSilence ? nil : "the shell wrote nothing"
        }
        let expected = step.expectations.filter {
            if case .reply = $0 { return false }
            if case .nothing = $0 { return false }
            return true
        }
        if let failure = matchInOrder(
            expected, deliveries[...], output: output, step: step, what: "deliveries", pattern: &pattern)
        {
            return failure
        }
        if case .reply(let wanted, let line)? = step.expectations.first(where: {
            if case .reply = $0 { true } else { false }
        }) {
            if !pattern.matches(wanted, reply, subset: true) {
                return "line \(line): expected reply \(wanted.compactText)\n  got      \(output.last ?? "")"
            }
        } else if reply["ok"] != true {
            return
                "line \(step.line): the request was refused (add `< reply {\"ok\":false}` if that is expected)\n  got      \(output.last ?? "")"
        }
        return nil
    }

    static func matches(_ expectation: Scenario.Expectation, _ delivery: JSON, pattern: inout Pattern) -> Bool {
        switch expectation {
        case .delivery(let key, let device, let ok, let output, _):
            guard delivery["delivery"] == .string(key), device == nil || delivery["device"] == device.map(JSON.string),
                delivery["ok"] == .bool(ok), let text = delivery["output"]
            else {
                return false
            }
            return pattern.matches(output, text, subset: false)
        case .end(let key, let device, _):
            return delivery["delivery"] == .string(key) && delivery["end"] == true
                && (device == nil || delivery["device"] == device.map(JSON.string))
        case .report(let wanted, _):
            return delivery["network"] != nil && pattern.matches(wanted, delivery, subset: true)
        default:
            return false
        }
    }

    static func describe(_ expectation: Scenario.Expectation) -> String {
        switch expectation {
        case .delivery(let key, let device, let ok, let output, _):
            "delivery \(key)\(device.map { "@" + $0 } ?? "") \(ok ? "" : "failed ")\(output.compactText)"
        case .end(let key, let device, _): "end \(key)\(device.map { "@" + $0 } ?? "")"
        case .reply(let pattern, _): "reply \(pattern.compactText)"
        case .report(let pattern, _): "report \(pattern.compactText)"
        case .nothing: "nothing"
        }
    }
}

extension Scenario.Expectation {
    var line: Int {
        switch self {
        case .reply(_, let line), .delivery(_, _, _, _, let line), .end(_, _, let line), .report(_, let line),
            .nothing(let line):
            line
        }
    }
}

/// The steps a scenario's runner plays itself for channels: a real broker, a
/// backend's publish, waiting for what arrives on its own time, and requests to the
/// front door's services.
struct ChannelSteps {
    var broker: MQTTBroker?
    static let awaitTimeout = 10.0

    /// The step's output lines, or nil when the step is a protocol request.
    mutating func play(_ request: String, session: Session, pattern: inout Pattern) throws -> [String]? {
        let (op, rest) = request.splitFirstWord()
        func ok(_ fields: [(String, JSON)] = []) -> [String] {
            [JSONObject([("reply", .null), ("ok", true)] + fields).compactText]
        }
        func refused(_ sentence: String) -> [String] {
            [JSONObject([("reply", .null), ("ok", false), ("error", .string(sentence))]).compactText]
        }
        switch op {
        case "broker":
            // `{"admin":{"username","password"}}`: with mosquitto's dynamic security on.
            let admin = try JSON.parse(text: rest.isEmpty ? "{}" : rest)["admin"].flatMap { admin in
                admin["username"]?.stringValue.flatMap { user in admin["password"]?.stringValue.map { (user, $0) } }
            }
            let broker = try MQTTBroker(admin: admin)
            self.broker = broker
            session.world.broker = broker  // the one a chaos rule's broker_down stops
            pattern.captures["broker"] = .string(broker.endpoint)
            return ok([("broker", .string(broker.endpoint))])
        case "broker_stop":
            guard let broker else { return refused("no broker: start one with `broker`") }
            broker.stop()
            return ok()
        case "broker_start":
            guard let broker else { return refused("no broker: start one with `broker`") }
            try broker.start()
            return ok()
        case "publish":
            guard let broker else { return refused("no broker: start one with `broker`") }
            guard let fields = try JSON.parse(text: rest.isEmpty ? "{}" : rest).objectValue,
                case .string(let topic)? = fields["topic"]
            else { return refused("publish needs {\"topic\":…, \"message\":{…} or \"text\":…}") }
            let payload: [UInt8] =
                if case .string(let text)? = fields["text"] { Array(text.utf8) } else {
                    (fields["message"] ?? .object(JSONObject())).compactBytes
                }
            let qos = fields["qos"]?.integerValue.map(Int.init) ?? 1
            let backend = try MQTTConnection(clientID: "cx-scenario-backend", cleanSession: true)
            defer { backend.close() }
            try backend.connect(host: "127.0.0.1", port: broker.port)
            try backend.publish(topic: topic, payload: payload, qos: qos)
            return ok()
        case "front_door":
            let fields = try JSON.parse(text: rest.isEmpty ? "{}" : rest).objectValue
            let address = fields?["address"]?.stringValue ?? "127.0.0.1:8443"
            session.hub.frontDoorAddress = address
            return ok([("address", .string(address))])
        case "http":
            return try http(rest, session: session)
        case "await":
            let fields = try JSON.parse(text: rest.isEmpty ? "{}" : rest).objectValue
            let count = fields?["count"]?.integerValue.map(Int.init) ?? 1
            guard session.hub.waitForArrivals(count: count, timeout: Self.awaitTimeout) else {
                throw ScenarioRunner.StepFailure(
                    description:
                        "waited \(Int(Self.awaitTimeout)) s for \(count) channel message(s); they did not all arrive")
            }
            return session.handleArrivals(limit: count)
        default:
            return nil
        }
    }

    /// `http {"method","path","headers":{…},"body":{…} or "body_text","sign":KEY}`: a
    /// request handed to the front door's services as the transport would hand it
    /// (no socket). With `sign` (a webhook signing key, base64), the Standard
    /// Webhooks headers are added, signed now. Output: the request's lines, then a
    /// reply line with the answer's `status` and `body`.
    func http(_ text: String, session: Session) throws -> [String] {
        guard let fields = try JSON.parse(text: text.isEmpty ? "{}" : text).objectValue,
            case .string(let path)? = fields["path"]
        else { throw ScenarioRunner.StepFailure(description: "http needs {\"path\":…}") }
        let method = fields["method"]?.stringValue ?? "POST"
        let body: [UInt8] =
            if case .string(let raw)? = fields["body_text"] { Array(raw.utf8) } else {
                fields["body"]?.compactBytes ?? []
            }
        var headers: [(name: String, value: String)] = [
            (":method", method), (":path", path), (":authority", fields["host"]?.stringValue ?? "127.0.0.1"),
        ]
        for (name, value) in fields["headers"]?.objectValue ?? JSONObject() {
            headers.append((name.lowercased(), value.stringValue ?? value.compactText))
        }
        if case .string(var key)? = fields["sign"] {
            if key.hasPrefix("whsec_") { key.removeFirst(6) }
            guard let secret = Data(base64Encoded: key) else {
                throw ScenarioRunner.StepFailure(description: "sign must be base64")
            }
            let id = fields["webhook_id"]?.stringValue ?? "msg_\(UUID().uuidString)"
            let timestamp = String(session.world.clock() / 1000)
            let signature = StandardWebhook.signature(key: Array(secret), id: id, timestamp: timestamp, body: body)
            headers += [
                ("webhook-id", id), ("webhook-timestamp", timestamp),
                ("webhook-signature", "v1," + Data(signature).base64EncodedString()),
            ]
        }
        let exchange = session.handle(
            network: HTTPRequest(headers: headers, body: body, serverName: nil, tls: true, http2: true))
        let reply = JSONObject([
            ("reply", .null), ("ok", true), ("status", .integer(Int64(exchange.response.status))),
            ("body", .string(String(decoding: exchange.response.body, as: UTF8.self))),
        ])
        return exchange.lines + [reply.compactText]
    }

}
