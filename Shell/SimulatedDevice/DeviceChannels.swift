import CXHost
import Foundation
import MQTTClient
import OrderedJSON
import PushPlugin
import PushServices

/// An Appwrite Push registration of the install (APW-1): where its broker is and
/// what it listens to. It outlives processes and ends with the install.
struct AppwriteRegistration: Sendable, Equatable {
    var clientID: String
    var endpoint: String
    var host: String
    var port: Int
    var user: String
    var topics: [String]
    /// QoS 1 when true, 0 when false (APW-3).
    var retry: Bool
    /// Whether a message that arrives in the background is shown (APW-5).
    var background: Bool
    var title: String?
    /// The user's session secret or JWT: the broker's password for this user (APW-13).
    var credential: String?
    /// The Appwrite project (the SDK's `setProject`): the broker knows the user as
    /// `<project>/<user>`, so one user id in two projects are two accounts.
    var project: String?

    /// The broker username the credential is presented with.
    var brokerUsername: String { project.map { $0 + "/" + user } ?? user }
}

/// The `http` channel's registration (XM-2).
struct WebhookRegistration: Sendable, Equatable {
    var recipientID: String
    var key: [UInt8]
    var url: String
}

/// The channel state of one install and one process.
struct DeviceChannels {
    var appwrite: [AppwriteRegistration] = []
    var webhook: WebhookRegistration?
    /// Stable for the install (APW-2) and the webhook recipient id (XM-2).
    var appwriteClientID: String?
    var recipientID: String?
    /// Appwrite `messageId`s this install handled (APW-6), the last `handledLimit`.
    var handled = RecentIDs(capacity: DeviceChannels.handledLimit)
    /// This process's MQTT connections by client id, with their numbers.
    var connections: [String: (connection: MQTTConnection, number: Int)] = [:]
    var nextConnection = 1
    /// Off the network (flight mode): no connection is made until it is back.
    var offline = false
    /// When the device last went off the network (world clock, ms).
    var offlineSince: Int64 = 0
    /// Connections dropped, or not made, while offline: made again when it is back.
    var suspended = false

    static let handledLimit = 10_000
}

extension Device {
    // MARK: Registering (the app's SDKs, asked by the plugin)

    public func registerChannel(
        _ request: ChannelRequest, answer: @escaping @Sendable (Result<String, ChannelRefusal>) -> Void
    ) {
        switch request.channel {
        case "appwrite": answer(registerAppwrite(request.options))
        case "http": answer(registerWebhook(request.options))
        default: answer(.failure(ChannelRefusal("this device offers no '\(request.channel)' channel")))
        }
    }

    /// APW-1 … APW-3: validates the options, connects with the install's client id
    /// and a persistent session, and answers once every subscription is active.
    func registerAppwrite(_ options: JSONObject) -> Result<String, ChannelRefusal> {
        let registration: AppwriteRegistration
        switch Self.appwriteOptions(options, installClientID: installAppwriteClientID()) {
        case .failure(let refusal): return .failure(refusal)
        case .success(let valid): registration = valid
        }
        if state.withLock({ $0.channels.offline }) {
            return .failure(ChannelRefusal("Appwrite could not register: the device is offline"))
        }
        // One connection per client id: the broker would hand the session back and
        // forth between two. The old one closes before the new one connects.
        let previous = state.withLock { $0.channels.connections.removeValue(forKey: registration.clientID) }
        previous?.connection.close()
        let (connection, number) = makeConnection(registration)
        do {
            try connection.connect(host: registration.host, port: registration.port)
        } catch {
            connection.close()
            // What was registered before stays registered, and reconnects.
            if previous != nil { resumeChannels() }
            return .failure(ChannelRefusal("Appwrite could not register: \(error.description)"))
        }
        state.withLock { state in
            state.channels.appwrite.removeAll { $0.clientID == registration.clientID }
            state.channels.appwrite.append(registration)
            state.channels.connections[registration.clientID] = (connection, number)
        }
        return .success(registration.clientID)
    }

    /// The install's Appwrite client id, made on first use (APW-2).
    private func installAppwriteClientID() -> String {
        state.withLock { state in
            if let id = state.channels.appwriteClientID { return id }
            let id = "cx-" + state.ids.hex(bytes: 8)
            state.channels.appwriteClientID = id
            return id
        }
    }

    private func makeConnection(_ registration: AppwriteRegistration) -> (MQTTConnection, Int) {
        let number = state.withLock { state -> Int in
            defer { state.channels.nextConnection += 1 }
            return state.channels.nextConnection
        }
        let subscriptions = registration.topics.map {
            MQTTConnection.Subscription(topic: $0, qos: registration.retry ? 1 : 0)
        }
        let hub = hub
        let deviceID = id
        let clientID = registration.clientID
        // How many messages the world's Appwrite server had published when this
        // connection's session began: what came before it was missed (APW-14).
        let sessionStart = Monitor(0)
        // Making a client fails only when libmosquitto cannot allocate one.
        let connection = try! MQTTConnection(
            clientID: clientID, login: registration.credential.map { (registration.brokerUsername, $0) },
            subscriptions: subscriptions,
            onConnect: { sessionStart.withLock { $0 = hub.publications } },
            onMessage: { message in
                hub.post(
                    ChannelArrival(
                        deviceID: deviceID, clientID: clientID, connection: number,
                        sessionStart: sessionStart.withLock { $0 }, message: message))
            })
        return (connection, number)
    }

    /// APW-1's options, each checked; unknown ones are refused by name.
    static func appwriteOptions(_ options: JSONObject, installClientID: String) -> Result<
        AppwriteRegistration, ChannelRefusal
    > {
        func refuse(_ sentence: String) -> Result<AppwriteRegistration, ChannelRefusal> {
            .failure(ChannelRefusal("Appwrite: " + sentence))
        }
        let known: Set = [
            "channel", "endpoint", "user", "topics", "retry", "background", "title", "client_id", "credential",
            "project",
        ]
        if let unknown = options.map(\.0).first(where: { !known.contains($0) }) {
            return refuse("unknown option '\(unknown)'; the options are \(known.sorted().joined(separator: ", "))")
        }
        guard case .string(let endpoint)? = options["endpoint"] else {
            return refuse("\"endpoint\" must be the broker's address, mqtt://HOST:PORT")
        }
        guard let (host, port) = parseEndpoint(endpoint) else {
            return refuse("\"endpoint\" must be mqtt://HOST:PORT, not '\(endpoint)'")
        }
        guard case .string(let user)? = options["user"], !user.isEmpty,
            !user.contains(where: { "/+#".contains($0) })
        else {
            return refuse("\"user\" must be the user's id: a non-empty string without /, + or #")
        }
        let own = "users/" + user
        var topics = [own]
        var topicsGiven = false
        switch options["topics"] {
        case nil: break
        case .array(let list)?:
            topicsGiven = true
            topics = []
            for item in list {
                guard case .string(let topic) = item, !topic.isEmpty else {
                    return refuse("\"topics\" must be an array of topic ids (strings)")
                }
                if topic.contains("+") || topic.contains("#") {
                    return refuse("the topic '\(topic)' has a wildcard (+ or #); a topic id names one topic")
                }
                if topic.hasPrefix("users/") && topic != own {
                    return refuse("the topic '\(topic)' is another user's; this registration is for \(own)")
                }
                if !topics.contains(topic) { topics.append(topic) }
            }
            if topics.isEmpty { return refuse("\"topics\" must name at least one topic") }
        case let other?:
            return refuse("\"topics\" must be an array of topic ids, not \(other.typeName)")
        }
        func flag(_ name: String, _ fallback: Bool) -> Bool? {
            switch options[name] {
            case nil: fallback
            case .bool(let value)?: value
            default: nil
            }
        }
        guard let retry = flag("retry", true) else { return refuse("\"retry\" must be true or false") }
        guard let background = flag("background", !topicsGiven) else {
            return refuse("\"background\" must be true or false")
        }
        var title: String?
        if let value = options["title"] {
            guard case .string(let text) = value else { return refuse("\"title\" must be a string") }
            title = text
        }
        var clientID = installClientID
        if let value = options["client_id"] {
            guard case .string(let text) = value, !text.isEmpty, text.utf8.count <= 65535 else {
                return refuse("\"client_id\" must be a non-empty string")
            }
            clientID = text
        }
        var credential: String?
        if let value = options["credential"] {
            guard case .string(let text) = value, !text.isEmpty, text.utf8.count <= 65535 else {
                return refuse("\"credential\" must be the user's session secret or JWT, a non-empty string")
            }
            credential = text
        }
        var project: String?
        if let value = options["project"] {
            guard case .string(let text) = value, !text.isEmpty, !text.contains(where: { "/+#".contains($0) }) else {
                return refuse("\"project\" must be the Appwrite project's id: a non-empty string without /, + or #")
            }
            project = text
        }
        return .success(
            AppwriteRegistration(
                clientID: clientID, endpoint: endpoint, host: host, port: port, user: user, topics: topics,
                retry: retry, background: background, title: title, credential: credential, project: project))
    }

    /// `mqtt://HOST:PORT` (an IPv6 host in brackets).
    public static func parseEndpoint(_ endpoint: String) -> (String, Int)? {
        guard endpoint.hasPrefix("mqtt://") else { return nil }
        let rest = endpoint.dropFirst("mqtt://".count)
        guard let colon = rest.lastIndex(of: ":"), let port = Int(rest[rest.index(after: colon)...]),
            (1...65535).contains(port)
        else { return nil }
        let host = rest[..<colon].trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        guard !host.isEmpty, !host.contains("/") else { return nil }
        return (host, port)
    }

    /// XM-2: the webhook URL a backend posts this install's hints to. It needs the
    /// front door; the recipient id is fixed for the install.
    func registerWebhook(_ options: JSONObject) -> Result<String, ChannelRefusal> {
        if let unknown = options.map(\.0).first(where: { $0 != "channel" && $0 != "signing_key" }) {
            return .failure(ChannelRefusal("http: unknown option '\(unknown)'; the options are channel, signing_key"))
        }
        guard case .string(var text)? = options["signing_key"] else {
            return .failure(ChannelRefusal("http: \"signing_key\" must be the Standard Webhooks secret, base64"))
        }
        if text.hasPrefix("whsec_") { text.removeFirst("whsec_".count) }
        guard let key = Data(base64Encoded: text).map(Array.init), (16...64).contains(key.count) else {
            return .failure(
                ChannelRefusal("http: \"signing_key\" must be standard base64 of 16 to 64 bytes (optionally whsec_…)"))
        }
        guard let address = hub.frontDoorAddress else {
            return .failure(
                ChannelRefusal(
                    "http: the channel needs the network front door; run cxshell serve --listen ADDRESS:PORT"))
        }
        let registration = state.withLock { state -> WebhookRegistration in
            let recipient = state.channels.recipientID ?? state.ids.hex(bytes: 16)
            state.channels.recipientID = recipient
            let registration = WebhookRegistration(
                recipientID: recipient, key: key, url: "https://\(address)/webhooks/\(recipient)")
            state.channels.webhook = registration
            return registration
        }
        hub.issue(recipient: registration.recipientID, to: id)
        return .success(registration.url)
    }

    /// The first `events` subscription of a process: each Appwrite registration
    /// reconnects with its client id, without waiting (the broker then replays what
    /// it kept, APW-5); a broker that is down is retried with backoff (APW-8).
    public func resumeChannels() {
        let registrations = state.withLock { state in
            state.channels.appwrite.filter { state.channels.connections[$0.clientID] == nil }
        }
        for registration in registrations {
            let (connection, number) = makeConnection(registration)
            let started = state.withLock { state -> Bool in
                if state.channels.offline { state.channels.suspended = true }
                guard state.app.isRunning, !state.channels.offline,
                    state.channels.connections[registration.clientID] == nil
                else {
                    return false
                }
                state.channels.connections[registration.clientID] = (connection, number)
                return true
            }
            if started {
                connection.connectInBackground(host: registration.host, port: registration.port)
            } else {
                connection.close()
            }
        }
    }

    /// Whether the device is on the network.
    public var isOnline: Bool { state.withLock { !$0.channels.offline } }

    /// Since when (world clock, ms) the device has been off the network; nil while online.
    public var offlineSince: Int64? { state.withLock { $0.channels.offline ? $0.channels.offlineSince : nil } }

    /// Takes the device off the network, as flight mode does, or puts it back, at
    /// `nowMilliseconds` of the world's clock. Its MQTT connections drop (cleanly: their
    /// persistent sessions stay with the broker, which queues QoS 1 messages), and are
    /// made again when it is back and its app runs, so the broker delivers what it queued
    /// (APW-2, APW-8).
    public func setNetwork(online: Bool, nowMilliseconds: Int64) {
        if !online {
            state.withLock { state in
                if !state.channels.offline { state.channels.offlineSince = nowMilliseconds }
            }
        }
        if online {
            let resume = state.withLock { state -> Bool in
                defer { state.channels.offline = false }
                return state.channels.suspended
            }
            if resume {
                state.withLock { $0.channels.suspended = false }
                resumeChannels()
            }
        } else {
            state.withLock { state in
                state.channels.offline = true
                state.channels.suspended = state.channels.suspended || !state.channels.connections.isEmpty
            }
            closeConnections()
        }
    }

    /// Closes this process's connections (the process ended).
    func closeConnections() {
        let connections = state.withLock { state in
            defer { state.channels.connections.removeAll() }
            return state.channels.connections.values.map(\.connection)
        }
        for connection in connections { connection.close() }
    }

    // MARK: Reading

    /// `state`'s `channels`: each registration, with whether Appwrite's is connected.
    public var channelSummaries: [JSONObject] {
        state.withLock { state in
            var summaries: [JSONObject] = []
            for registration in state.channels.appwrite {
                let connection = state.channels.connections[registration.clientID]?.connection
                var summary = JSONObject([
                    ("channel", "appwrite"), ("token", .string(registration.clientID)),
                    ("endpoint", .string(registration.endpoint)),
                    ("topics", .array(registration.topics.map(JSON.string))),
                    ("connected", .bool(connection?.isConnected ?? false)),
                ])
                // Why the broker refused it last (an expired JWT, a topic not allowed: APW-13).
                if let refusal = connection?.lastRefusal { summary["error"] = .string("the broker " + refusal) }
                summaries.append(summary)
            }
            if let webhook = state.channels.webhook {
                summaries.append(JSONObject([("channel", "http"), ("token", .string(webhook.url))]))
            }
            return summaries
        }
    }

    /// The install's Appwrite registrations: who signed in, at which broker, on which topics.
    public var appwriteSignIns: [(user: String, endpoint: String, topics: [String])] {
        state.withLock { state in state.channels.appwrite.map { ($0.user, $0.endpoint, $0.topics) } }
    }

    /// The signing key of webhook recipient `id`, while this install holds it.
    public func webhookKey(recipient id: String) -> [UInt8]? {
        state.withLock { state in
            state.channels.webhook.flatMap { $0.recipientID == id ? $0.key : nil }
        }
    }

    // MARK: Arrivals

    /// An MQTT message one of this device's connections received (APW-4 … APW-7).
    /// Returns the message's id when it has one, and what the device did.
    public func receive(mqtt arrival: ChannelArrival) -> (messageID: String?, outcome: PushOutcome) {
        let (current, registration, app, process, allowed) = state.withLock { state in
            (
                state.channels.connections[arrival.clientID]?.number == arrival.connection,
                state.channels.appwrite.first { $0.clientID == arrival.clientID }, state.app, state.process,
                state.authorization == .granted
            )
        }
        guard current, let registration, let process else {
            return (
                nil,
                PushOutcome(effect: "dropped: it arrived on a connection of a process that has since ended")
            )
        }
        let message: AppwriteMessage
        switch AppwriteMessage.parse(arrival.message.payload) {
        case .failure(let refusal):
            return (nil, PushOutcome(effect: "dropped: \(refusal.message) (APW-7)"))
        case .success(let valid): message = valid
        }
        let first = state.withLock { $0.channels.handled.insert(message.messageID) }
        guard first else {
            return (
                message.messageID,
                PushOutcome(effect: "ignored: this install already handled messageId \(message.messageID) (APW-6)")
            )
        }
        if app == .foreground {
            let live = process.push.diagnostics.liveSubscribers
            process.push.channelBridge.received(
                PushEvent.appwrite(data: message.data, notification: message.notification, action: .received))
            return (
                message.messageID,
                PushOutcome(
                    effect: Self.received(live, via: "the Appwrite client")
                        + "; no tray entry while the app is open (APW-5)")
            )
        }
        guard registration.background else {
            return (
                message.messageID,
                PushOutcome(
                    effect: "nothing: the app is in the background and this registration's background is false (APW-5)")
            )
        }
        guard allowed else {
            return (message.messageID, PushOutcome(effect: "not shown: notifications are not allowed (DEL-6)"))
        }
        let event = PushEvent.appwrite(data: message.data, notification: message.notification, action: .opened)
        let posted = state.withLock {
            $0.tray.post(
                title: message.title ?? registration.title ?? arrival.message.topic, body: message.body,
                collapseKey: nil, content: .channel(event: event), limit: trayLimit)
        }
        return (
            message.messageID,
            PushOutcome(
                effect:
                    "\(posted.phrase) (the app is in the background); no event until it is tapped (APW-5)",
                trayID: posted.id)
        )
    }

    /// XM-6: a verified hint, delivered as `received` while the app's process runs.
    /// Nil when it does not run (the sender retries later).
    public func receive(hint: JSONObject) -> PushOutcome? {
        guard let process = state.withLock({ $0.app.isRunning ? $0.process : nil }) else { return nil }
        let live = process.push.diagnostics.liveSubscribers
        process.push.channelBridge.received(PushEvent.with(.received, hint))
        return PushOutcome(effect: Self.received(live, via: "the webhook") + "; hints never reach the tray (XM-6)")
    }
}
