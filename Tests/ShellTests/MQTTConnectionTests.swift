import CMosquittoConnect
import CXHost
import MQTTClient
import Testing

/// The MQTT client the devices use, against a real mosquitto broker: what a
/// persistent session promises (APW-2) rests on these.
@Suite struct MQTTConnectionTests {
    /// Collects messages and lets a test wait for a number of them.
    final class Inbox: Sendable {
        let messages = Monitor([MQTTMessage]())
        func add(_ message: MQTTMessage) {
            messages.withLock { messages in
                messages.append(message)
                self.messages.broadcast()
            }
        }
        func wait(for count: Int) -> [MQTTMessage] {
            messages.wait(until: { $0.count >= count }, timeout: 10, then: { $0 })
        }

        /// QoS 1 is at least once: waits for `count` payloads not counting a repeat of
        /// the one before; returns them in order.
        func waitForDistinct(_ count: Int) -> [String] {
            func distinct(_ messages: [MQTTMessage]) -> [String] {
                var seen: [String] = []
                for message in messages {
                    let text = String(decoding: message.payload, as: UTF8.self)
                    if seen.last != text { seen.append(text) }
                }
                return seen
            }
            return messages.wait(until: { distinct($0).count >= count }, timeout: 10, then: { distinct($0) })
        }
    }

    func publish(_ broker: MQTTBroker, _ topic: String, _ text: String, qos: Int = 1) throws {
        let publisher = try MQTTConnection(clientID: "backend", cleanSession: true)
        try publisher.connect(host: "127.0.0.1", port: broker.port)
        try publisher.publish(topic: topic, payload: Array(text.utf8), qos: qos)
        publisher.close()
    }

    @Test func aPersistentSessionGetsWhatWasPublishedWhileItWasAway() throws {
        let broker = try MQTTBroker()
        let inbox = Inbox()
        let subscription = MQTTConnection.Subscription(topic: "users/u1", qos: 1)
        var device: MQTTConnection? = try MQTTConnection(
            clientID: "install-1", subscriptions: [subscription], onMessage: inbox.add)
        try device?.connect(host: "127.0.0.1", port: broker.port)
        try publish(broker, "users/u1", "one")
        #expect(inbox.wait(for: 1).map(\.payload) == [Array("one".utf8)])
        device?.close()
        device = nil
        try publish(broker, "users/u1", "two")
        try publish(broker, "users/u1", "three")
        let again = try MQTTConnection(clientID: "install-1", subscriptions: [subscription], onMessage: inbox.add)
        again.connectInBackground(host: "127.0.0.1", port: broker.port)
        // A message may come twice (QoS 1), never out of order, never lost.
        #expect(inbox.waitForDistinct(3) == ["one", "two", "three"])
        again.close()
    }

    /// libmosquitto asks for a socket pair on every connect, for a loop of its own that
    /// this client never runs; refused, a connection holds one descriptor instead of
    /// three, and still gets what is published to it.
    @Test func aConnectionIsMadeWithoutLibmosquittosSocketPair() throws {
        let broker = try MQTTBroker()
        let inbox = Inbox()
        let before = cx_mosquitto_pairs_refused()
        let devices = try (0..<20).map { index in
            try MQTTConnection(
                clientID: "pairless-\(index)", subscriptions: [MQTTConnection.Subscription(topic: "all", qos: 1)],
                onMessage: inbox.add)
        }
        for device in devices { try device.connect(host: "127.0.0.1", port: broker.port) }
        // Other tests connect meanwhile too: at least these 20 were refused theirs.
        #expect(cx_mosquitto_pairs_refused() - before >= 20)
        try publish(broker, "all", "to every one")
        #expect(inbox.wait(for: 20).count == 20)
        for device in devices { device.close() }
    }

    @Test func aBrokerThatIsNotThereIsNamed() throws {
        let port = try MQTTBroker().port  // stopped when released: nothing listens there
        let connection = try MQTTConnection(clientID: "x")
        #expect(throws: MQTTFailure.self) { try connection.connect(host: "127.0.0.1", port: port) }
    }
}
