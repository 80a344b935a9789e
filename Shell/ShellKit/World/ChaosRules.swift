import CXHost
import Foundation
import HTTPMessage
import OrderedJSON
import SimulatedDevice

/// Faults on demand (chaos.md, "Rules"): each rule names a service, what a request must
/// match, a seeded probability, how many times it applies, and what then happens. The
/// same requests in the same order meet the same faults: each rule draws from its own
/// generator (SplitMix64), seeded by its `seed`.
struct ChaosRules {
    /// What a request tells the rules about itself; nil members are not known for it.
    struct Facts {
        var service: String
        var device: String?
        var token: String?
        var topic: String?
        var project: String?
        var environment: String?
        var path: String
    }

    enum Outcome: Equatable {
        /// The service's own error, by its name in chaos.md's table.
        case answer(String)
        /// The request is handled; its answer waits this long.
        case latency(milliseconds: Int)
        /// No answer, but a transport fault; nothing is delivered.
        case fault(TransportFault)
    }

    struct Rule {
        let id: String
        let service: String
        let match: [String: String]
        let probability: Double
        var remaining: Int?
        let then: Then
        let retryAfterSeconds: Int?
        let text: JSONObject
        var generator: IDGenerator

        enum Then {
            case answer(String)
            case fault(TransportFault)
            /// `tls_fail`: new TLS handshakes for the service fail.
            case failHandshakes
            /// `broker_down`: the world's broker stops, and starts again after this long.
            case brokerDown(milliseconds: Int)
            case fixed(Int)
            case uniform(Int, Int)
            case lognormal(median: Double, sigma: Double)

            var failsHandshakes: Bool {
                if case .failHandshakes = self { return true }
                return false
            }

            var isAnswer: Bool {
                if case .answer = self { return true }
                return false
            }
        }
    }

    /// A rule refused, with the sentence that says why.
    struct Refusal: Error {
        let message: String
    }

    /// The answer names each service takes (chaos.md's table).
    static let answers: [String: [String]] = [
        "apns": [
            "TooManyRequests", "InternalServerError", "ServiceUnavailable", "Shutdown", "TooManyProviderTokenUpdates",
            "ExpiredProviderToken", "Unregistered", "BadDeviceToken",
        ],
        "fcm": [
            "QUOTA_EXCEEDED", "UNAVAILABLE", "INTERNAL", "THIRD_PARTY_AUTH_ERROR", "UNREGISTERED", "SENDER_ID_MISMATCH",
        ],
        "oauth": ["temporarily_unavailable", "invalid_grant"],
        "pubnub": ["429", "500", "503"],
        "webhook": ["500", "503"],
    ]
    /// The transport faults a rule may end in, by name.
    static let faults: [String: TransportFault] = ["goaway": .goaway, "rst_stream": .resetStream, "close": .close]
    static let services = ["apns", "fcm", "oauth", "pubnub", "webhook", "mqtt"]
    static let ruleKeys = ["service", "match", "probability", "seed", "count", "then", "retry_after_s"]
    static let matchKeys = ["device", "token", "topic", "project", "environment", "path_prefix"]
    /// The longest a latency rule holds an answer.
    static let maxLatencyMilliseconds = 60_000

    private(set) var rules: [Rule] = []
    private var lastID = 0
    /// The services with a `tls_fail` rule, published whenever a rule comes or goes, for
    /// the front door's thread (shared by every copy: one world holds one).
    let handshakeFaults = HandshakeFaults()

    private func publishHandshakeFaults() {
        handshakeFaults.publish(Set(rules.lazy.filter(\.then.failsHandshakes).map(\.service)))
    }

    func applies(to service: String) -> Bool { rules.contains { $0.service == service } }

    /// Adds a rule from its JSON; the rule as listed (with its `id`), or why not.
    mutating func add(_ object: JSONObject) throws(Refusal) -> JSONObject {
        let text = try adding(object)
        publishHandshakeFaults()
        return text
    }

    /// `add` without telling the front door's thread.
    private mutating func adding(_ object: JSONObject) throws(Refusal) -> JSONObject {
        for key in object.orderedKeys where !Self.ruleKeys.contains(key) {
            throw Refusal(message: "a rule has no \"\(key)\"; it takes \(Self.ruleKeys.joined(separator: ", "))")
        }
        guard let service = object["service"]?.stringValue, Self.services.contains(service) else {
            throw Refusal(message: "\"service\" must be one of \(Self.services.joined(separator: ", "))")
        }
        var match: [String: String] = [:]
        if let value = object["match"] {
            guard let fields = value.objectValue else { throw Refusal(message: "\"match\" must be an object") }
            for (key, value) in fields {
                guard Self.matchKeys.contains(key) else {
                    throw Refusal(
                        message: "\"match\" has no \"\(key)\"; it takes \(Self.matchKeys.joined(separator: ", "))")
                }
                guard let text = value.stringValue else { throw Refusal(message: "match.\(key) must be a string") }
                match[key] = text
            }
        }
        let probability = try Self.number(object["probability"], "probability") ?? 1
        guard (0...1).contains(probability) else {
            throw Refusal(message: "\"probability\" must be from 0 to 1, not \(probability)")
        }
        let seed = try Self.whole(object["seed"], "seed", in: 0...Int64.max) ?? 0
        let count = try Self.whole(object["count"], "count", in: 1...1_000_000_000).map { Int($0) }
        let retryAfter = try Self.whole(object["retry_after_s"], "retry_after_s", in: 0...86_400).map { Int($0) }
        let brokerDown = service == "mqtt" && object["then"]?["fault"] == "broker_down"
        guard let then = object["then"]?.objectValue, then.count == (brokerDown ? 2 : 1),
            let kind = brokerDown ? "fault" : then.orderedKeys.first, let value = then[kind]
        else {
            throw Refusal(
                message:
                    #""then" must be one of {"answer": NAME}, {"latency_ms": …}, {"fault": NAME} or, for mqtt, {"fault": "broker_down", "for_ms": n}"#
            )
        }
        if service == "mqtt" && !brokerDown {
            throw Refusal(message: #"mqtt takes only {"fault": "broker_down", "for_ms": n}: the broker is what fails"#)
        }
        let outcome: Rule.Then
        switch kind {
        case "fault" where brokerDown:
            let milliseconds = try Self.whole(then["for_ms"], "then.for_ms", in: 1...600_000)
            outcome = .brokerDown(milliseconds: Int(milliseconds ?? 1))
        case "answer":
            let names = Self.answers[service] ?? []
            guard let name = value.stringValue, names.contains(name) else {
                throw Refusal(
                    message:
                        "'\(value.stringValue ?? value.compactText)' is not an answer \(service) gives; its answers are \(names.joined(separator: ", "))"
                )
            }
            outcome = .answer(name)
        case "latency_ms":
            outcome = try Self.latency(value)
        case "fault" where value.stringValue == "tls_fail" && ["apns", "fcm", "oauth", "pubnub"].contains(service):
            guard match.isEmpty else {
                throw Refusal(message: "a tls_fail rule takes no \"match\": a handshake names only its service's host")
            }
            outcome = .failHandshakes
        case "fault":
            guard let name = value.stringValue, let fault = Self.faults[name], service != "mqtt" else {
                throw Refusal(
                    message:
                        "'\(value.stringValue ?? value.compactText)' is not a fault \(service) takes; the faults are \(Self.faults.keys.sorted().joined(separator: ", ")), tls_fail (for a service with its own host) and broker_down (for mqtt)"
                )
            }
            outcome = .fault(fault)
        default:
            throw Refusal(message: "\"then\" takes answer, latency_ms or fault, not \"\(kind)\"")
        }
        lastID += 1
        var text = JSONObject([("id", .string("c\(lastID)"))])
        for (key, value) in object { text[key] = value }
        rules.append(
            Rule(
                id: "c\(lastID)", service: service, match: match, probability: probability,
                remaining: count, then: outcome, retryAfterSeconds: retryAfter, text: text,
                generator: IDGenerator(seed: UInt64(seed))))
        return text
    }

    /// The rules as a state file keeps them (as listed), and the last id given.
    var saved: JSONObject { JSONObject([("rules", .array(listed)), ("last_id", .integer(Int64(lastID)))]) }

    /// These rules replaced by the ones `saved` lists, each with its id and what remains of
    /// its count; a rule refused names its id, and nothing is published until `publish`.
    func restored(from saved: JSONObject) throws(Refusal) -> ChaosRules {
        var rules = self
        rules.rules.removeAll()
        for case .object(let rule) in saved["rules"]?.arrayValue ?? [] {
            guard let id = rule["id"]?.stringValue, id.hasPrefix("c"), let number = Int(id.dropFirst()), number > 0
            else { throw Refusal(message: "a saved chaos rule has no id cN: \(JSON.object(rule).compactText)") }
            // As it was added, in its order, with what remains of its count as its count.
            var object = JSONObject()
            for (key, value) in rule where key != "id" && key != "remaining" {
                object[key] = key == "count" ? (rule["remaining"] ?? value) : value
            }
            rules.lastID = number - 1
            do {
                _ = try rules.adding(object)
            } catch {
                throw Refusal(message: "saved chaos rule \(id): \(error.message)")
            }
        }
        let last = saved["last_id"]?.integerValue.map(Int.init) ?? 0
        rules.lastID = Swift.max(rules.lastID, last)
        return rules
    }

    /// Tells the front door's thread which services fail handshakes now.
    func publish() { publishHandshakeFaults() }

    /// Removes a rule by id (`all`: every rule); false when there is none.
    mutating func remove(_ id: String) -> Bool {
        if id == "all" {
            rules.removeAll()
            publishHandshakeFaults()
            return true
        }
        guard let index = rules.firstIndex(where: { $0.id == id }) else { return false }
        rules.remove(at: index)
        publishHandshakeFaults()
        return true
    }

    /// The rules as listed, each with how many times it still applies.
    var listed: [JSON] {
        rules.map { rule in
            var text = rule.text
            text["remaining"] = rule.remaining.map { .integer(Int64($0)) } ?? .null
            return .object(text)
        }
    }

    /// The first rule a request meets, and what then happens: the rule's id, the
    /// outcome, its `retry_after_s` and how many times it still applies. A rule with a
    /// `count` retires when it is spent. `answersOnly`: for the line protocol's pushes,
    /// which have no connection to hold or break.
    mutating func meet(_ facts: Facts, answersOnly: Bool = false) -> (
        id: String, outcome: Outcome, retryAfter: Int?, remaining: Int?
    )? {
        let met = take { rule in
            rule.service == facts.service && !rule.then.failsHandshakes && (!answersOnly || rule.then.isAnswer)
                && Self.matches(rule, facts)
        } draw: { rule -> Outcome in
            switch rule.then {
            case .answer(let name): return .answer(name)
            case .fault(let fault): return .fault(fault)
            case .failHandshakes, .brokerDown:
                preconditionFailure("only mqtt has broker_down, and tls_fail rules are meetHandshake's")
            case .fixed(let milliseconds): return .latency(milliseconds: milliseconds)
            case .uniform(let low, let high):
                return .latency(
                    milliseconds: low + Int(Double(high - low) * Double.random(in: 0..<1, using: &rule.generator)))
            case .lognormal(let median, let sigma):
                // Box–Muller: one standard normal draw from two uniform ones.
                let u = max(Double.random(in: 0..<1, using: &rule.generator), .leastNonzeroMagnitude)
                let z = (-2 * log(u)).squareRoot() * cos(2 * .pi * Double.random(in: 0..<1, using: &rule.generator))
                return .latency(milliseconds: min(Self.maxLatencyMilliseconds, Int(median * exp(sigma * z))))
            }
        }
        return met.map { ($0.rule.id, $0.value, $0.rule.retryAfterSeconds, $0.rule.remaining) }
    }

    /// What a request met by an `answer` rule did, for its report line or reply.
    static func answeredEffect(status: Int, name: String, rule: String, remaining: Int?) -> String {
        let named = name == String(status) ? "" : " " + name
        return "answered \(status)\(named) by \(naming(rule, remaining: remaining)); nothing delivered"
    }

    /// "chaos rule c1, 2 left", as effects name the rule that met a request.
    static func naming(_ rule: String, remaining: Int?) -> String {
        "chaos rule \(rule)" + (remaining.map { ", \($0) left" } ?? "")
    }

    /// The first `tls_fail` rule a TLS handshake for `service` meets: its id and how many
    /// times it still applies. Only rules without a `match` can: a handshake names no
    /// device, token or path yet.
    mutating func meetHandshake(service: String) -> (id: String, remaining: Int?)? {
        take {
            $0.service == service && $0.then.failsHandshakes && $0.match.isEmpty
        } draw: { _ in
            ()
        }
        .map { ($0.rule.id, $0.rule.remaining) }
    }

    /// The first rule `wanted` picks whose seeded draw falls under its probability, after
    /// `draw` read what it needs from the rule's generator; one of its `count` is spent.
    private mutating func take<Value>(where wanted: (Rule) -> Bool, draw: (inout Rule) -> Value) -> (
        rule: Rule, value: Value
    )? {
        for index in rules.indices where wanted(rules[index]) {
            if rules[index].probability < 1
                && Double.random(in: 0..<1, using: &rules[index].generator) >= rules[index].probability
            {
                continue
            }
            let value = draw(&rules[index])
            if let left = rules[index].remaining { rules[index].remaining = left - 1 }
            let rule = rules[index]
            if rule.remaining == 0 {
                rules.remove(at: index)
                publishHandshakeFaults()
            }
            return (rule, value)
        }
        return nil
    }

    private static func matches(_ rule: Rule, _ facts: Facts) -> Bool {
        for (key, wanted) in rule.match {
            let value: String? =
                switch key {
                case "device": facts.device
                case "token": facts.token
                case "topic": facts.topic
                case "project": facts.project
                case "environment": facts.environment
                default: nil
                }
            if key == "path_prefix" {
                if !facts.path.hasPrefix(wanted) { return false }
            } else if value?.lowercased() != wanted.lowercased() {
                return false
            }
        }
        return true
    }

    private static func latency(_ value: JSON) throws(Refusal) -> Rule.Then {
        guard let object = value.objectValue, object.count == 1, let kind = object.orderedKeys.first,
            let shape = object[kind]
        else {
            throw Refusal(message: #""latency_ms" must be {"fixed": n}, {"uniform": [a, b]} or {"lognormal": {…}}"#)
        }
        let limit = 0...Int64(maxLatencyMilliseconds)
        switch kind {
        case "fixed":
            return .fixed(Int(try whole(shape, "latency_ms.fixed", in: limit) ?? 0))
        case "uniform":
            guard let pair = shape.arrayValue, pair.count == 2 else {
                throw Refusal(message: "latency_ms.uniform must be [a, b]")
            }
            let low = try whole(pair[0], "latency_ms.uniform[0]", in: limit) ?? 0
            let high = try whole(pair[1], "latency_ms.uniform[1]", in: limit) ?? 0
            guard low <= high else { throw Refusal(message: "latency_ms.uniform must be [a, b] with a ≤ b") }
            return .uniform(Int(low), Int(high))
        case "lognormal":
            guard let fields = shape.objectValue else {
                throw Refusal(message: #"latency_ms.lognormal must be {"median": m, "sigma": s}"#)
            }
            let median = try number(fields["median"], "latency_ms.lognormal.median") ?? -1
            let sigma = try number(fields["sigma"], "latency_ms.lognormal.sigma") ?? -1
            guard median > 0, median <= Double(maxLatencyMilliseconds), sigma >= 0, sigma <= 5 else {
                throw Refusal(message: "latency_ms.lognormal needs a median from 0 to 60000 ms and a sigma from 0 to 5")
            }
            return .lognormal(median: median, sigma: sigma)
        default:
            throw Refusal(message: "latency_ms takes fixed, uniform or lognormal, not \"\(kind)\"")
        }
    }

    /// A number field; nil when absent.
    private static func number(_ value: JSON?, _ name: String) throws(Refusal) -> Double? {
        guard let value else { return nil }
        guard case .number(let number) = value, let double = Double(number.text) else {
            throw Refusal(message: "\"\(name)\" must be a number")
        }
        return double
    }

    /// A whole-number field within `range`; nil when absent.
    private static func whole(_ value: JSON?, _ name: String, in range: ClosedRange<Int64>) throws(Refusal) -> Int64? {
        guard let value else { return nil }
        guard case .number(let number) = value, let whole = Int64(number.text), range.contains(whole) else {
            throw Refusal(
                message: "\"\(name)\" must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return whole
    }
}

/// Which services' TLS handshakes a `tls_fail` rule may fail, as the world last published
/// it: the front door's thread asks this on every handshake without the world's lock, and
/// takes that lock only when a rule may meet the handshake.
public final class HandshakeFaults: Sendable {
    private let services = Monitor(Set<String>())

    func publish(_ now: Set<String>) { services.withLock { $0 = now } }

    /// Whether a handshake for `serverName` may meet a rule (and must ask the world).
    public func mayFail(serverName: String) -> Bool {
        guard let service = NetworkDoor.Service(host: serverName) else { return false }
        return services.withLock { $0.contains(service.name) }
    }
}
