import CXHost
import Foundation
import OrderedJSON

/// An administrator's session with mosquitto's dynamic-security plugin: commands go to
/// `$CONTROL/dynamic-security/v1` and are answered on its `/response` topic, matched by
/// their `correlationData` (the plugin's own protocol; `mosquitto_ctrl` speaks it too).
public final class DynamicSecurity: @unchecked Sendable {
    /// A command the plugin refused, with its words.
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        public let command: String
        public let error: String
        public var description: String { "the broker's dynamic security refused \(command): \(error)" }
    }

    static let controlTopic = "$CONTROL/dynamic-security/v1"
    private let connection: MQTTConnection
    /// Answers by correlation data, until their command's caller takes them.
    private let answers: Monitor<[String: JSONObject]>
    private let counter = Monitor(0)

    /// Connects to the broker at `host`:`port` as `admin`; throws when it cannot.
    public init(host: String, port: Int, admin: (username: String, password: String)) throws(MQTTFailure) {
        let answers = Monitor([String: JSONObject]())
        self.answers = answers
        connection = try MQTTConnection(
            clientID: "cx-dynsec-" + UUID().uuidString, cleanSession: true, login: admin,
            subscriptions: [.init(topic: Self.controlTopic + "/response", qos: 1)],
            onMessage: { message in
                guard let responses = (try? JSON.parse(message.payload))?["responses"]?.arrayValue else { return }
                answers.withLock { waiting in
                    for case .object(let response) in responses {
                        if let id = response["correlationData"]?.stringValue { waiting[id] = response }
                    }
                    answers.broadcast()
                }
            })
        try connection.connect(host: host, port: port)
    }

    deinit { connection.close() }

    /// Runs `commands` (each `{"command": …, …}`) in one message and waits for every
    /// answer. Throws the first refusal, except the ones `tolerating` names (an error
    /// text, such as "Client already exists"), or when the broker does not answer.
    public func run(_ commands: [JSONObject], tolerating: Set<String> = []) throws {
        guard !commands.isEmpty else { return }
        var ids: [String] = []
        var batch: [JSON] = []
        for var command in commands {
            let id = counter.withLock { count -> String in
                count += 1
                return "cx-\(count)"
            }
            command["correlationData"] = .string(id)
            ids.append(id)
            batch.append(.object(command))
        }
        let payload = JSON.object(JSONObject([("commands", .array(batch))])).compactBytes
        try connection.publish(topic: Self.controlTopic, payload: payload, qos: 1)
        let answered = answers.wait(
            until: { answers in ids.allSatisfy { answers[$0] != nil } }, timeout: MQTTConnection.connectTimeout,
            then: { answers in ids.compactMap { answers.removeValue(forKey: $0) } })
        guard answered.count == ids.count else {
            throw MQTTFailure(
                "the broker's dynamic security did not answer within \(Int(MQTTConnection.connectTimeout)) s")
        }
        for answer in answered {
            if let error = answer["error"]?.stringValue, !tolerating.contains(error) {
                throw Refusal(command: answer["command"]?.stringValue ?? "?", error: error)
            }
        }
    }
}
