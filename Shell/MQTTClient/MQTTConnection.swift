import CMosquitto
import CMosquittoConnect
import CXHost
import Foundation

/// A message an MQTT connection received.
public struct MQTTMessage: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: Int
    public var retained: Bool

    public init(topic: String, payload: [UInt8], qos: Int, retained: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retained = retained
    }
}

/// Why an MQTT connection could not do what was asked, in words.
public struct MQTTFailure: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// One MQTT client connection through libmosquitto (3.1.1, or 5 when asked), on the
/// process's one MQTT event loop (`MQTTLoop`): no thread of its own.
///
/// It subscribes to its `subscriptions` at every connect (the first and each
/// reconnect), so a broker that lost its sessions still delivers. A connection lost
/// is retried with backoff (1 s, doubling, at most `maxReconnectDelay` seconds)
/// until `close`. Messages are handed
/// to `onMessage` on the loop's thread, in the order the broker sent them; `onConnect`
/// runs there at each accepted connect, before the broker's first message of that session.
///
/// `close` must be called (it waits for the loop to let go of the connection), and never
/// from `onMessage` or `onConnect`.
public final class MQTTConnection: @unchecked Sendable, MQTTLoop.Member {
    public struct Subscription: Sendable, Equatable {
        public var topic: String
        public var qos: Int
        public init(topic: String, qos: Int) {
            self.topic = topic
            self.qos = qos
        }
    }

    public let clientID: String
    public let subscriptions: [Subscription]
    private let handle: OpaquePointer
    private let onMessage: @Sendable (MQTTMessage) -> Void
    private let onConnect: @Sendable () -> Void
    // libmosquitto's handle is used on the loop's thread only. This lock guards what the
    // callbacks report to the threads that wait for it.
    private let status = Monitor(Status())
    private let loop = MQTTLoop.shared

    // The loop thread's alone: where to connect, the socket it watches, the next try.
    private var host = ""
    private var port = 0
    private var retryFirstConnect = false
    private var everConnected = false
    private var socket: Int32 = -1
    private var nextAttempt: Double?
    private var delay = 1.0

    struct Status {
        var connected = false
        /// Subscriptions acknowledged since the last connect.
        var pendingSubscriptions: Set<Int32> = []
        var subscribed = false
        var refusal: String?
        /// Why the broker last refused a connect or a subscription, kept after a reconnect.
        var lastRefusal: String?
        /// Subscription message ids → their topics, to name a refused one.
        var subscriptionTopics: [Int32: String] = [:]
        var publishedMessages: Set<Int32> = []
        var loopStarted = false
        var loopEnded = false
        var closed = false
    }

    /// The longest a broker may take to answer a blocking `connect`.
    public static let connectTimeout: Double = 5
    public static let maxReconnectDelay: UInt32 = 5

    /// The MQTT version a connection speaks.
    public enum Version: Sendable { case v311, v5 }

    /// A client with a persistent session (clean session false) unless
    /// `cleanSession`, as a device keeps its session across process lives. `login` is
    /// the username and password the broker checks, when it checks any. Version 5
    /// keeps a persistent session for 7 days (APW-2).
    public init(
        clientID: String, cleanSession: Bool = false, version: Version = .v311,
        login: (username: String, password: String)? = nil, subscriptions: [Subscription] = [],
        onConnect: @escaping @Sendable () -> Void = {},
        onMessage: @escaping @Sendable (MQTTMessage) -> Void = { _ in }
    ) throws(MQTTFailure) {
        _ = libraryReady
        self.clientID = clientID
        self.subscriptions = subscriptions
        self.onMessage = onMessage
        self.onConnect = onConnect
        // One descriptor per client, its connection's: see CMosquittoConnect.
        guard let handle = cx_mosquitto_new(clientID, cleanSession, nil) else {
            throw MQTTFailure("libmosquitto could not make a client with id '\(clientID)'")
        }
        self.handle = handle
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        mosquitto_int_option(
            handle, MOSQ_OPT_PROTOCOL_VERSION, Int32(version == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311))
        if let login { mosquitto_username_pw_set(handle, login.username, login.password) }
        mosquitto_connect_callback_set(handle) { _, object, code in
            MQTTConnection.from(object)?.connected(code: code)
        }
        mosquitto_disconnect_callback_set(handle) { _, object, _ in
            MQTTConnection.from(object)?.status.withLock { status in
                status.connected = false
                status.subscribed = false
            }
        }
        mosquitto_subscribe_callback_set(handle) { _, object, mid, count, granted in
            guard let connection = MQTTConnection.from(object) else { return }
            let refused = (0..<Int(count)).contains { (granted?[$0] ?? 0) >= 0x80 }
            connection.subscribed(mid: mid, refused: refused)
        }
        mosquitto_publish_callback_set(handle) { _, object, mid in
            guard let connection = MQTTConnection.from(object) else { return }
            connection.status.withLock { status in
                status.publishedMessages.insert(mid)
                connection.status.broadcast()
            }
        }
        mosquitto_message_callback_set(handle) { _, object, message in
            guard let connection = MQTTConnection.from(object), let message = message?.pointee else { return }
            let payload =
                message.payloadlen > 0 && message.payload != nil
                ? Array(UnsafeRawBufferPointer(start: message.payload, count: Int(message.payloadlen))) : []
            connection.onMessage(
                MQTTMessage(
                    topic: String(cString: message.topic), payload: payload, qos: Int(message.qos),
                    retained: message.retain))
        }
    }

    deinit {
        // The loop holds a connection from its start to its end (its jobs, its ticks, its
        // socket's watch), so one that is going away never started or has ended: there is
        // nothing to close, and no job may capture it now.
        mosquitto_destroy(handle)
    }

    /// Whether the connection is up now.
    public var isConnected: Bool { status.withLock { $0.connected } }

    /// Connects and waits until the broker accepted the connection and every
    /// subscription, at most `connectTimeout`; then the connection stays up (and is
    /// retried when lost) until `close`.
    public func connect(host: String, port: Int) throws(MQTTFailure) {
        startLoop(host: host, port: port, retryFirstConnect: false)
        let outcome = status.wait(
            until: { $0.subscribed || $0.refusal != nil }, timeout: Self.connectTimeout,
            then: { status -> String? in
                if let refusal = status.refusal { return refusal }
                return status.subscribed ? nil : "timed out"
            })
        switch outcome {
        case nil: return
        case "timed out"?:
            throw MQTTFailure(
                "the broker at \(host):\(port) did not accept the connection and its subscriptions within \(Int(Self.connectTimeout)) s"
            )
        case let refusal?:
            throw MQTTFailure("the broker at \(host):\(port) \(refusal)")
        }
    }

    /// Starts connecting without waiting; a broker that is down is retried with backoff.
    public func connectInBackground(host: String, port: Int) {
        startLoop(host: host, port: port, retryFirstConnect: true)
    }

    /// Why the broker last refused this connection or one of its subscriptions, if it did.
    public var lastRefusal: String? { status.withLock { $0.lastRefusal } }

    /// Publishes and, for QoS 1 and 2, waits until the broker acknowledged it.
    /// `expiry` (seconds, MQTT 5 only) is how long the broker keeps it for a subscriber
    /// that is offline.
    public func publish(
        topic: String, payload: [UInt8], qos: Int, retain: Bool = false, expiry: UInt32? = nil
    ) throws(MQTTFailure) {
        // What libmosquitto said, handed back from the loop's thread.
        let outcome = Monitor<(code: Int32, mid: Int32)?>(nil)
        loop.perform { [self] in
            var mid: Int32 = 0
            var properties: OpaquePointer?
            defer { mosquitto_property_free_all(&properties) }
            if let expiry {
                mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL.rawValue), expiry)
            }
            let code = payload.withUnsafeBytes { bytes in
                mosquitto_publish_v5(
                    handle, &mid, topic, Int32(bytes.count), bytes.baseAddress, Int32(qos), retain, properties)
            }
            refresh()
            outcome.withLock { value in
                value = (code, mid)
                outcome.broadcast()
            }
        }
        let (code, mid) = outcome.wait(until: { $0 != nil }, then: { $0! })
        guard code == MOSQ_ERR_SUCCESS.rawValue else {
            throw MQTTFailure("could not publish to '\(topic)': \(Self.describe(code))")
        }
        let acknowledged = status.wait(
            until: { $0.publishedMessages.contains(mid) }, timeout: Self.connectTimeout,
            then: { $0.publishedMessages.remove(mid) != nil })
        if !acknowledged { throw MQTTFailure("the broker did not acknowledge the message to '\(topic)'") }
    }

    /// Disconnects cleanly and waits until the loop let go of the connection. Idempotent.
    public func close() {
        let started = status.withLock { status -> Bool in
            defer {
                status.closed = true
                self.status.broadcast()
            }
            return status.loopStarted && !status.closed && !status.loopEnded
        }
        guard started else { return }
        loop.perform { [self] in
            if socket >= 0 {
                loop.unwatch(socket)
                socket = -1
                mosquitto_disconnect(handle)
            }
            end()
        }
        status.wait(until: { $0.loopEnded }, then: { $0.connected = false })
    }

    // MARK: Callbacks (the loop's thread)

    private func connected(code: Int32) {
        guard code == 0 else {
            status.withLock { status in
                status.refusal = "refused the connection: " + Self.connackReason(code)
                status.lastRefusal = status.refusal
                self.status.broadcast()
            }
            return
        }
        onConnect()
        var mids: [Int32: String] = [:]
        for subscription in subscriptions {
            var mid: Int32 = 0
            if mosquitto_subscribe(handle, &mid, subscription.topic, Int32(subscription.qos))
                == MOSQ_ERR_SUCCESS.rawValue
            {
                mids[mid] = subscription.topic
            }
        }
        status.withLock { status in
            status.connected = true
            status.lastRefusal = nil
            status.pendingSubscriptions.formUnion(mids.keys)
            status.subscriptionTopics.merge(mids) { $1 }
            status.subscribed = status.pendingSubscriptions.isEmpty
            self.status.broadcast()
        }
    }

    private func subscribed(mid: Int32, refused: Bool) {
        status.withLock { status in
            status.pendingSubscriptions.remove(mid)
            let topic = status.subscriptionTopics.removeValue(forKey: mid) ?? "?"
            if refused {
                status.refusal = "refused the subscription to '\(topic)'"
                status.lastRefusal = status.refusal
            }
            status.subscribed = status.pendingSubscriptions.isEmpty && status.connected
            self.status.broadcast()
        }
    }

    /// Starts connecting on the loop: when the connection is lost or a connect fails, it
    /// tries again after 1 s, doubling up to `maxReconnectDelay`, until `close`. A first
    /// connect that fails is not tried again unless `retryFirstConnect`.
    private func startLoop(host: String, port: Int, retryFirstConnect: Bool) {
        let start = status.withLock { status -> Bool in
            defer { status.loopStarted = true }
            return !status.loopStarted && !status.closed
        }
        guard start else { return }
        loop.perform { [self] in
            self.host = host
            self.port = port
            self.retryFirstConnect = retryFirstConnect
            loop.startTicking(self)
            attempt()
        }
    }

    /// One connect (the first) or reconnect, on the loop's thread.
    private func attempt() {
        nextAttempt = nil
        guard !status.withLock({ $0.closed }) else { return end() }
        let code = everConnected ? mosquitto_reconnect(handle) : cx_mosquitto_connect(handle, host, Int32(port), 30)
        if code == MOSQ_ERR_SUCCESS.rawValue {
            everConnected = true
            socket = mosquitto_socket(handle)
            refresh()
        } else if !everConnected && !retryFirstConnect {
            let reason = Self.describe(code)
            status.withLock { status in
                status.refusal = "cannot be reached: \(reason)"
                self.status.broadcast()
            }
            end()
        } else {
            scheduleAttempt()
        }
    }

    private func scheduleAttempt() {
        nextAttempt = Date.timeIntervalSinceReferenceDate + delay
        delay = min(delay * 2, Double(Self.maxReconnectDelay))
    }

    /// Watches the socket for writing too while libmosquitto has bytes to send.
    private func refresh() {
        guard socket >= 0 else { return }
        loop.watch(socket, for: self, writable: mosquitto_want_write(handle))
    }

    /// The connection is gone (an error, the broker closed it, a refused CONNACK): no
    /// longer watched, and tried again later.
    private func lost() {
        loop.unwatch(socket)
        socket = -1
        status.withLock { status in
            status.connected = false
            status.subscribed = false
            self.status.broadcast()
        }
        if status.withLock({ $0.closed }) { return end() }
        scheduleAttempt()
    }

    private func end() {
        loop.stopTicking(self)
        status.withLock { status in
            status.loopEnded = true
            self.status.broadcast()
        }
    }

    func ready(readable: Bool, writable: Bool) {
        var code = MOSQ_ERR_SUCCESS.rawValue
        if readable { code = mosquitto_loop_read(handle, 1) }
        if code == MOSQ_ERR_SUCCESS.rawValue && writable { code = mosquitto_loop_write(handle, 1) }
        guard code == MOSQ_ERR_SUCCESS.rawValue, socket >= 0 else { return lost() }
        refresh()
    }

    func tick(now: Double) {
        if socket >= 0 {
            guard mosquitto_loop_misc(handle) == MOSQ_ERR_SUCCESS.rawValue else { return lost() }
            refresh()
        } else if let due = nextAttempt, now >= due {
            attempt()
        }
    }

    private static func from(_ object: UnsafeMutableRawPointer?) -> MQTTConnection? {
        object.map { Unmanaged<MQTTConnection>.fromOpaque($0).takeUnretainedValue() }
    }

    private static func describe(_ code: Int32) -> String {
        if code == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
        return String(cString: mosquitto_strerror(code))
    }

    /// A CONNACK's code in words: 3.1.1's codes are below 128, version 5's above.
    private static func connackReason(_ code: Int32) -> String {
        String(cString: code >= 128 ? mosquitto_reason_string(code) : mosquitto_connack_string(code))
    }
}

/// libmosquitto's one-time, not thread-safe initialisation, run once.
private let libraryReady: Void = { mosquitto_lib_init() }()
