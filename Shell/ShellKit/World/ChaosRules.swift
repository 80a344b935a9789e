import Foundation
import OrderedJSON

/// Faults on demand (chaos.md, "Rules"): each rule names a service, what a request must
/// match, a seeded probability, how many times it applies, and what then happens. The
/// same requests in the same order meet the same faults: each rule draws from its own
/// generator, seeded by its `seed`.
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
        var generator: SplitMix64

        enum Then {
            case answer(String)
            case fixed(Int)
            case uniform(Int, Int)
            case lognormal(median: Double, sigma: Double)
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
    static let services = ["apns", "fcm", "oauth", "pubnub", "webhook", "mqtt"]
    static let matchKeys = ["device", "token", "topic", "project", "environment", "path_prefix"]
    /// The longest a latency rule holds an answer.
    static let maxLatencyMilliseconds = 60_000

    private(set) var rules: [Rule] = []
    private var lastID = 0

    var isEmpty: Bool { rules.isEmpty }

    func applies(to service: String) -> Bool { rules.contains { $0.service == service } }

    /// Adds a rule from its JSON; the rule as listed (with its `id`), or why not.
    mutating func add(_ object: JSONObject) throws(Refusal) -> JSONObject {
        for key in object.orderedKeys
        where !["service", "match", "probability", "seed", "count", "then", "retry_after_s"].contains(key) {
            throw Refusal(
                message:
                    "a rule has no \"\(key)\"; it takes service, match, probability, seed, count, then and retry_after_s"
            )
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
        let probability = try Self.number(object["probability"], "probability", default: 1)
        guard (0...1).contains(probability) else {
            throw Refusal(message: "\"probability\" must be from 0 to 1, not \(probability)")
        }
        let seed = try Self.whole(object["seed"], "seed", default: 0, in: 0...Int64.max)
        let count = try object["count"].map { _ throws(Refusal) in
            Int(try Self.whole(object["count"], "count", default: 1, in: 1...1_000_000_000))
        }
        let retryAfter = try object["retry_after_s"].map { _ throws(Refusal) in
            Int(try Self.whole(object["retry_after_s"], "retry_after_s", default: 1, in: 0...86_400))
        }
        guard let then = object["then"]?.objectValue, then.count == 1, let kind = then.orderedKeys.first,
            let value = then[kind]
        else {
            throw Refusal(message: #""then" must be one of {"answer": NAME} or {"latency_ms": …}"#)
        }
        let outcome: Rule.Then
        switch kind {
        case "answer":
            guard service != "mqtt" else {
                throw Refusal(message: "mqtt has no answers; its faults are the broker's (not built yet)")
            }
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
        case "fault":
            throw Refusal(
                message: "transport faults (goaway, rst_stream, close, tls_fail, broker_down) are not built yet")
        default:
            throw Refusal(message: "\"then\" takes answer or latency_ms, not \"\(kind)\"")
        }
        lastID += 1
        var text = JSONObject([("id", .string("c\(lastID)"))])
        for (key, value) in object { text[key] = value }
        rules.append(
            Rule(
                id: "c\(lastID)", service: service, match: match, probability: probability,
                remaining: count, then: outcome, retryAfterSeconds: retryAfter, text: text,
                generator: SplitMix64(seed: UInt64(seed))))
        return text
    }

    /// Removes a rule by id (`all`: every rule); false when there is none.
    mutating func remove(_ id: String) -> Bool {
        if id == "all" {
            rules.removeAll()
            return true
        }
        guard let index = rules.firstIndex(where: { $0.id == id }) else { return false }
        rules.remove(at: index)
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
    /// `count` retires when it is spent.
    mutating func meet(_ facts: Facts) -> (id: String, outcome: Outcome, retryAfter: Int?, remaining: Int?)? {
        for index in rules.indices where rules[index].service == facts.service && Self.matches(rules[index], facts) {
            if rules[index].probability < 1 && rules[index].generator.nextUnit() >= rules[index].probability {
                continue
            }
            var rule = rules[index]
            let outcome: Outcome
            switch rule.then {
            case .answer(let name): outcome = .answer(name)
            case .fixed(let milliseconds): outcome = .latency(milliseconds: milliseconds)
            case .uniform(let low, let high):
                outcome = .latency(milliseconds: low + Int(Double(high - low) * rule.generator.nextUnit()))
            case .lognormal(let median, let sigma):
                // Box–Muller: one standard normal draw from two uniform ones.
                let u = max(rule.generator.nextUnit(), .leastNonzeroMagnitude)
                let z = (-2 * log(u)).squareRoot() * cos(2 * .pi * rule.generator.nextUnit())
                outcome = .latency(milliseconds: min(Self.maxLatencyMilliseconds, Int(median * exp(sigma * z))))
            }
            var remaining = rule.remaining
            if let left = remaining {
                remaining = left - 1
                rule.remaining = left - 1
            }
            if remaining == 0 { rules.remove(at: index) } else { rules[index] = rule }
            return (rule.id, outcome, rule.retryAfterSeconds, remaining)
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
            return .fixed(Int(try whole(shape, "latency_ms.fixed", default: 0, in: limit)))
        case "uniform":
            guard let pair = shape.arrayValue, pair.count == 2 else {
                throw Refusal(message: "latency_ms.uniform must be [a, b]")
            }
            let low = try whole(pair[0], "latency_ms.uniform[0]", default: 0, in: limit)
            let high = try whole(pair[1], "latency_ms.uniform[1]", default: 0, in: limit)
            guard low <= high else { throw Refusal(message: "latency_ms.uniform must be [a, b] with a ≤ b") }
            return .uniform(Int(low), Int(high))
        case "lognormal":
            guard let fields = shape.objectValue else {
                throw Refusal(message: #"latency_ms.lognormal must be {"median": m, "sigma": s}"#)
            }
            let median = try number(fields["median"], "latency_ms.lognormal.median", default: -1)
            let sigma = try number(fields["sigma"], "latency_ms.lognormal.sigma", default: -1)
            guard median > 0, median <= Double(maxLatencyMilliseconds), sigma >= 0, sigma <= 5 else {
                throw Refusal(message: "latency_ms.lognormal needs a median from 0 to 60000 ms and a sigma from 0 to 5")
            }
            return .lognormal(median: median, sigma: sigma)
        default:
            throw Refusal(message: "latency_ms takes fixed, uniform or lognormal, not \"\(kind)\"")
        }
    }

    private static func number(_ value: JSON?, _ name: String, default fallback: Double) throws(Refusal) -> Double {
        guard let value else { return fallback }
        guard case .number(let number) = value, let double = Double(number.text) else {
            throw Refusal(message: "\"\(name)\" must be a number")
        }
        return double
    }

    private static func whole(_ value: JSON?, _ name: String, default fallback: Int64, in range: ClosedRange<Int64>)
        throws(Refusal) -> Int64
    {
        guard let value else { return fallback }
        guard case .number(let number) = value, let whole = Int64(number.text), range.contains(whole) else {
            throw Refusal(
                message: "\"\(name)\" must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return whole
    }
}

/// A small seeded generator (SplitMix64): the same seed gives the same draws on every
/// machine, which `SystemRandomNumberGenerator` does not.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A draw in [0, 1).
    mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
