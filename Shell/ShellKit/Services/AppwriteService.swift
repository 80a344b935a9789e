import Foundation
import HTTPMessage
import MQTTClient
import OrderedJSON
import PushServices
import SimulatedDevice

/// Appwrite's Messaging server (APW-9 … APW-15): the API an Appwrite server SDK calls,
/// and the broker side of Appwrite Push. Users, targets, topics and messages are kept
/// per project; a push takes each user's route, through the world's own FCM and APNs
/// services or published to the project's real broker, whose rights the service keeps
/// current through mosquitto's dynamic security when the project names an admin.
final class AppwriteService {
    let world: World
    let apns: APNsService
    let fcm: FCMService
    var projects: [String: AppwriteProject] = [:]
    /// Each project's connections to its broker: the publisher, and the administrator.
    var brokers: [String: Broker] = [:]
    var nextID = 0
    /// When the first JWT of any project expires (`.max`: none will).
    var soonestExpiry = Int64.max

    struct Broker {
        var publisher: MQTTConnection
        var security: DynamicSecurity?
    }

    /// Broker identities (APW-13) live in namespaces no id can leave: a user's client is
    /// `<project>/<user>` (ids have no `/`), the world's publisher `cxshell/publisher/<project>`
    /// (two slashes: no user's), and an admin's name may hold no `/` at all. So no user id
    /// reaches the admin's, the publisher's or another project's account on a shared broker.
    enum BrokerName {
        static func user(_ user: String, in project: String) -> String { project + "/" + user }
        static func userRole(_ user: String, in project: String) -> String { "appwrite-user/" + project + "/" + user }
        static func publisher(of project: String) -> String { "cxshell/publisher/" + project }
        static let publisherRole = "cxshell-publisher"
    }

    /// How long a JWT works (APW-13).
    static let jwtLifetime: Int64 = 15 * 60 * 1000
    /// How many missed messages per topic a known client id gets back (APW-14).
    static let replayDepth = 5
    /// How many publications per topic the replay rule remembers: more than mosquitto
    /// queues for one client by default (1,000), so every message it replays is known.
    static let publicationMemory = 1_024

    init(world: World, apns: APNsService, fcm: FCMService) {
        self.world = world
        self.apns = apns
        self.fcm = fcm
    }

    // MARK: Projects (the line protocol's `appwrite_project`)

    /// Registers (or replaces) a project: its API key, its broker, and the broker's
    /// dynamic-security admin, with whom the world sets up its own publisher and the
    /// default rights (nothing but what a role allows). Throws a sentence.
    func register(
        project id: String, key: String, endpoint: String, admin: (username: String, password: String)?
    ) throws(DeviceRefusal) -> String {
        guard let (host, port) = Device.parseEndpoint(endpoint) else {
            throw DeviceRefusal("\"endpoint\" must be mqtt://HOST:PORT, not '\(endpoint)'")
        }
        // Project ids name broker accounts (BrokerName): Appwrite's id rule keeps `/` out.
        guard id != "unique()", case .success = AppwriteID.resolve(id, parameter: "project", make: { "" }) else {
            throw DeviceRefusal(
                "\"project\" must be an Appwrite project id: at most 36 of a-z, A-Z, 0-9, period, hyphen and underscore, not starting with a special char"
            )
        }
        if let admin, admin.username.isEmpty || admin.username.contains("/") {
            throw DeviceRefusal(
                "the broker admin's username must be non-empty and hold no '/': names with '/' are the world's own publisher's and its users' (<project>/<user>)"
            )
        }
        let publisherName = BrokerName.publisher(of: id)
        var security: DynamicSecurity?
        var login: (username: String, password: String)?
        do {
            if let admin {
                let administrator = try DynamicSecurity(host: host, port: port, admin: admin)
                let password = Self.secret()
                try administrator.run(
                    [
                        JSONObject([
                            ("command", "setDefaultACLAccess"),
                            (
                                "acls",
                                .array(
                                    [
                                        ("publishClientSend", false), ("publishClientReceive", false),
                                        ("subscribe", false), ("unsubscribe", true),
                                    ].map { name, allow in
                                        .object(JSONObject([("acltype", .string(name)), ("allow", .bool(allow))]))
                                    })
                            ),
                        ]),
                        JSONObject([("command", "createRole"), ("rolename", .string(BrokerName.publisherRole))]),
                        Self.acl("addRoleACL", role: BrokerName.publisherRole, type: "publishClientSend", topic: "#"),
                        JSONObject([("command", "createClient"), ("username", .string(publisherName))]),
                        JSONObject([
                            ("command", "setClientPassword"), ("username", .string(publisherName)),
                            ("password", .string(password)),
                        ]),
                        // Registered again (a project read back from a state file): the
                        // publisher has the role already, and dynamic security refuses it twice.
                        JSONObject([
                            ("command", "removeClientRole"), ("username", .string(publisherName)),
                            ("rolename", .string(BrokerName.publisherRole)),
                        ]),
                        JSONObject([
                            ("command", "addClientRole"), ("username", .string(publisherName)),
                            ("rolename", .string(BrokerName.publisherRole)),
                        ]),
                    ],
                    tolerating: ["Role already exists", "Client already exists", "ACL with this topic already exists"])
                security = administrator
                login = (publisherName, password)
            }
            let publisher = try MQTTConnection(
                clientID: "cx-appwrite-\(id)-" + Self.secret().prefix(8), cleanSession: true, version: .v5, login: login
            )
            do {
                try publisher.connect(host: host, port: port)
            } catch {
                // A refused connect is tried again in the background until closed.
                publisher.close()
                throw error
            }
            // Only a broker set up in full replaces the one the project had.
            brokers.updateValue(Broker(publisher: publisher, security: security), forKey: id)?.publisher.close()
        } catch {
            throw DeviceRefusal("the project's broker at \(endpoint) could not be set up: \(error)")
        }
        var project = projects[id] ?? AppwriteProject(id: id, key: key, endpoint: endpoint)
        project.key = key
        project.endpoint = endpoint
        project.admin = admin
        projects[id] = project
        // Rights for what the project already knows (a project registered again).
        for user in project.users.keys { try? grant(user, in: id) }
        return admin == nil
            ? "registered; the broker enforces nothing (no admin): devices connect as anyone and may subscribe to anything"
            : "registered; the broker's dynamic security lets each user's credential receive only its own topics"
    }

    // MARK: The API (APW-9)

    /// Whether a request is Appwrite's by its path and header (a self-hosted endpoint).
    static func claims(_ request: HTTPRequest) -> Bool {
        request.withPath { $0?.hasBytePrefix("/v1/") ?? false }
            && request.headers.firstIndex(named: "x-appwrite-project") != nil
    }

    func answer(_ request: HTTPRequest) -> ServiceAnswer {
        let path = request.path ?? ""
        let bare = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
        var segments = bare.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map {
            $0.removingPercentEncoding ?? String($0)
        }
        guard segments.first == "v1" else {
            return Self.failure(
                AppwriteError(404, "general_route_not_found", "The requested route was not found."), request)
        }
        segments.removeFirst()
        guard let projectID = request.header("x-appwrite-project"), !projectID.isEmpty else {
            return Self.failure(
                AppwriteError(
                    401, "general_unauthorized_scope", "User (role: guests) missing scopes ([\"messaging.write\"])"),
                request)
        }
        // The key alone: a copy of the project held through the request would make its
        // first change copy the project's tables (every push paid for the history before it).
        guard let projectKey = projects[projectID]?.key else {
            return Self.failure(
                AppwriteError(
                    404, "project_not_found", "Project with the requested ID '\(projectID)' could not be found."),
                request)
        }
        guard let key = request.header("x-appwrite-key") else {
            return Self.failure(
                AppwriteError(
                    401, "general_unauthorized_scope", "User (role: guests) missing scopes ([\"messaging.write\"])"),
                request)
        }
        guard key == projectKey else {
            return Self.failure(
                AppwriteError(
                    401, "user_unauthorized", "The current user is not authorized to perform the requested action."),
                request)
        }
        expireCredentials()
        let body: JSONObject
        if request.body.isEmpty {
            body = JSONObject()
        } else if let parsed = (try? JSON.parse(request.body))?.objectValue {
            body = parsed
        } else {
            return Self.failure(.invalid("The request body is not a JSON object."), request)
        }
        let result = route(request.method ?? "GET", segments, body, projectID)
        switch result {
        case .failure(let error): return Self.failure(error, request, project: projectID)
        case .success(let (status, document, effect, extra)):
            var report = JSONObject([
                ("network", "appwrite"), ("status", .integer(Int64(status))), ("project", .string(projectID)),
                ("route", .string("\(request.method ?? "GET") /v1/\(segments.joined(separator: "/"))")),
            ])
            for (name, value) in extra { report[name] = value }
            report["effect"] = .string(effect)
            let bytes = document.map { JSON.object($0).compactBytes } ?? []
            return (
                Report(report),
                HTTPResponse(
                    status: status, headers: document == nil ? [] : [("content-type", "application/json")], body: bytes)
            )
        }
    }

    typealias Done = (status: Int, document: JSONObject?, effect: String, report: JSONObject)

    func route(_ method: String, _ s: [String], _ body: JSONObject, _ project: String) -> Result<
        Done, AppwriteError
    > {
        switch (method, s.count) {
        case ("POST", 3) where s[0] == "messaging" && s[1] == "providers":
            return createProvider(kind: s[2], body, project)
        case ("PATCH", 4) where s[0] == "messaging" && s[1] == "providers":
            return updateProvider(kind: s[2], id: s[3], body, project)
        case ("GET", 3) where s[0] == "messaging" && s[1] == "providers":
            guard let provider = projects[project]?.providers[s[2]] else { return .failure(Self.notFound("provider")) }
            return .success((200, Self.document(provider), "read provider \(provider.id)", JSONObject()))
        case ("POST", 1) where s[0] == "users":
            return createUser(body, project)
        case ("GET", 2) where s[0] == "users":
            guard let user = knownUser(s[1], in: project) else { return .failure(Self.notFound("user")) }
            return .success((200, document(user, in: project), "read user \(user.id)", JSONObject()))
        case ("POST", 3) where s[0] == "users" && s[2] == "targets":
            return createTarget(user: s[1], body, project)
        case ("POST", 3) where s[0] == "users" && s[2] == "sessions":
            return createCredential(user: s[1], jwt: false, body, project)
        case ("POST", 3) where s[0] == "users" && s[2] == "jwts":
            return createCredential(user: s[1], jwt: true, body, project)
        case ("POST", 2) where s[0] == "messaging" && s[1] == "topics":
            return createTopic(body, project)
        case ("GET", 3) where s[0] == "messaging" && s[1] == "topics":
            guard let topic = projects[project]?.topics[s[2]] else { return .failure(Self.notFound("topic")) }
            return .success((200, document(topic, in: project), "read topic \(topic.id)", JSONObject()))
        case ("POST", 4) where s[0] == "messaging" && s[1] == "topics" && s[3] == "subscribers":
            return createSubscriber(topic: s[2], body, project)
        case ("DELETE", 5) where s[0] == "messaging" && s[1] == "topics" && s[3] == "subscribers":
            return deleteSubscriber(topic: s[2], id: s[4], project)
        case ("POST", 3) where s[0] == "messaging" && s[1] == "messages" && s[2] == "push":
            return createPush(body, project)
        case ("GET", 3) where s[0] == "messaging" && s[1] == "messages":
            guard let message = projects[project]?.messages[s[2]] else { return .failure(Self.notFound("message")) }
            return .success(
                (200, Self.document(message), "read message \(message.push.id): \(message.status)", JSONObject()))
        default:
            return .failure(AppwriteError(404, "general_route_not_found", "The requested route was not found."))
        }
    }

    /// Appwrite's own error for a chaos rule's answer name (`500`, `503`, `429`).
    static func chaosAnswer(_ name: String) -> ServiceAnswer {
        let status = Int(name) ?? 503
        let error =
            status == 429
            ? AppwriteError(
                429, "general_rate_limit_exceeded", "Rate limit for the current endpoint has been exceeded.")
            : AppwriteError(status, "general_server_error", "The server answered \(name).")
        return failure(error, route: nil)
    }

    // MARK: Sending (APW-12, APW-15)

    func createPush(_ body: JSONObject, _ projectID: String) -> Result<Done, AppwriteError> {
        let messageID: String
        switch resolveID(body["messageId"], "messageId") {
        case .failure(let error): return .failure(error)
        case .success(let value): messageID = value
        }
        // Taken out of the table while the send changes it, and put back at every return:
        // a copy left in the table would make the first change copy its whole `messages`
        // (every push of a project's history paid for all those before it).
        guard var project = projects.removeValue(forKey: projectID) else { return .failure(Self.notFound("project")) }
        defer { projects[projectID] = project }
        guard project.messages[messageID] == nil else {
            return .failure(
                AppwriteError(409, "message_already_exists", "Message with the requested ID already exists."))
        }
        let push: AppwritePush
        switch AppwritePush.parse(body, messageID: messageID) {
        case .failure(let error): return .failure(error)
        case .success(let value): push = value
        }
        for topic in push.topics where project.topics[topic] == nil { return .failure(Self.notFound("topic")) }
        for target in push.targets where project.targets[target] == nil { return .failure(Self.notFound("target")) }
        let now = world.clock()
        let record = AppwritePushRecord(
            id: messageID, users: push.users, topics: push.topics, targets: push.targets, data: push.data)
        if push.draft {
            project.messages[messageID] = .init(
                push: record, status: "draft", deliveredTotal: 0, deliveryErrors: [], createdAt: now)
            let document = Self.document(project.messages[messageID]!)
            return .success(
                (201, document, "kept as a draft: nothing sent", JSONObject([("messageId", .string(messageID))])))
        }
        // Who gets it, and how: each user's route (APW-12), targets reached once.
        var direct: [AppwriteProject.Target] = []
        var mqttTopics: [String] = []
        var routes: [JSON] = []
        func reach(_ target: AppwriteProject.Target) {
            if !direct.contains(where: { $0.id == target.id }) { direct.append(target) }
        }
        for user in push.users {
            let route = project.route(of: user)
            route.direct.forEach(reach)
            if route.appwrite, !mqttTopics.contains("users/" + user) { mqttTopics.append("users/" + user) }
            var names = route.direct.map(\.kind)
            if route.appwrite { names.append("appwrite") }
            routes.append(
                .object(
                    JSONObject([
                        ("user", .string(user)), ("route", .array(Array(Set(names)).sorted().map(JSON.string))),
                    ])))
        }
        for topic in push.topics {
            for subscriber in project.subscribers.values where subscriber.topicID == topic {
                guard let target = project.targets[subscriber.targetID] else { continue }
                if target.kind == "appwrite" {
                    if !mqttTopics.contains(topic) { mqttTopics.append(topic) }
                } else {
                    reach(target)
                }
            }
        }
        for id in push.targets {
            guard let target = project.targets[id] else { continue }
            if target.kind == "appwrite" {
                if !mqttTopics.contains("users/" + target.userID) { mqttTopics.append("users/" + target.userID) }
            } else {
                reach(target)
            }
        }
        var devices: [JSON] = []
        var delivered = 0
        var errors: [String] = []
        for target in direct {
            world.forgetTouched()
            let (device, result) = sendDirect(push, to: target, in: project)
            if result.hasPrefix("refused") || result.hasPrefix("failed") {
                errors.append("Target \(target.id): \(result)")
            } else {
                delivered += 1
            }
            if let problem = world.settle() { errors.append(problem) }
            devices.append(
                .object(
                    JSONObject([
                        ("device", device.map(JSON.string) ?? .null), ("target", .string(target.id)),
                        ("result", .string(result)),
                    ])))
        }
        for topic in mqttTopics {
            let result = publish(push, on: topic, in: &project)
            if result.hasPrefix("failed") { errors.append("Topic \(topic): \(result)") } else { delivered += 1 }
            // One entry per device listening now, or one without a device.
            let listening = listeners(of: topic, in: project)
            for device in listening.isEmpty ? [nil] : listening.map(Optional.some) {
                devices.append(
                    .object(
                        JSONObject([
                            ("device", device.map(JSON.string) ?? .null), ("topic", .string(topic)),
                            ("result", .string(device == nil ? result + "; no device listens now" : result)),
                        ])))
            }
        }
        let status = delivered > 0 ? "sent" : "failed"
        if delivered == 0 && errors.isEmpty {
            errors.append("No target, user topic or topic subscriber to deliver to.")
        }
        project.messages[messageID] = .init(
            push: record, status: status, deliveredTotal: delivered, deliveryErrors: errors, createdAt: now)
        let effect =
            "\(status): \(delivered) of \(direct.count + mqttTopics.count) deliveries (\(direct.count) to FCM / APNs targets, \(mqttTopics.count) published over Appwrite Push)"
            + (errors.isEmpty ? "" : "; errors: " + errors.joined(separator: "; "))
            + (body["scheduledAt"].map { $0 == .null } == false
                ? "; scheduledAt is not kept: the world sends at once" : "")
        return .success(
            (
                201, Self.document(project.messages[messageID]!), effect,
                JSONObject([
                    ("messageId", .string(messageID)), ("routes", .array(routes)), ("devices", .array(devices)),
                ])
            ))
    }

    /// A push to an FCM or APNs target, as Appwrite's provider sends it, through the
    /// world's own services and their validators: the device reached and what happened.
    func sendDirect(_ push: AppwritePush, to target: AppwriteProject.Target, in project: AppwriteProject) -> (
        String?, String
    ) {
        let provider = target.providerID.flatMap { project.providers[$0] }
        if let provider, !provider.enabled { return (nil, "failed: the provider \(provider.id) is disabled") }
        if target.kind == "fcm" {
            var notification = JSONObject()
            if let title = push.title { notification["title"] = .string(title) }
            if let body = push.body { notification["body"] = .string(body) }
            var data = JSONObject()
            for (key, value) in push.data { data[key] = .string(value.stringValue ?? value.compactText) }
            var message = JSONObject([("token", .string(target.identifier))])
            if !notification.isEmpty { message["notification"] = .object(notification) }
            if !data.isEmpty { message["data"] = .object(data) }
            let bytes = JSON.object(JSONObject([("message", .object(message))])).compactBytes
            let tokenProject = world.registry.entry(token: target.identifier)?.project ?? DeviceOptions().fcmProject
            switch fcm.send(body: bytes, parsed: nil, project: provider?.fcmProject, defaultProject: tokenProject) {
            case .failure(let error): return (nil, "refused by FCM: \(error.status) \(error.message)")
            case .success(let sent):
                return (sent.device, "delivered through FCM: " + (sent.effect ?? ""))
            }
        }
        var aps = JSONObject()
        var alert = JSONObject()
        if let title = push.title { alert["title"] = .string(title) }
        if let body = push.body { alert["body"] = .string(body) }
        if !alert.isEmpty { aps["alert"] = .object(alert) } else { aps["content-available"] = 1 }
        var payload = JSONObject([("aps", .object(aps))])
        for (key, value) in push.data where key != "aps" { payload[key] = value }
        let entry = world.registry.entry(token: target.identifier)
        let headers = [
            "apns-topic": provider?.bundleID ?? entry?.bundleID ?? "",
            "apns-push-type": alert.isEmpty ? "background" : "alert", "apns-priority": alert.isEmpty ? "5" : "10",
        ]
        let environment: APNsEnvironment =
            provider.map { $0.sandbox ? .development : .production } ?? entry?.environment ?? .production
        let bytes = JSON.object(payload).compactBytes
        let request = APNsRequest(
            headers: headers, body: bytes, parsedBody: nil, token: target.identifier, environment: environment)
        switch apns.validate(request) {
        case .failure(let rejection): return (nil, "refused by APNs: \(rejection.status) \(rejection.reason)")
        case .success(let accepted):
            guard let (device, outcome) = try? apns.deliver(accepted.notification, holder: accepted.holder) else {
                return (nil, "failed: no device holds the token")
            }
            return (device.id, "delivered through APNs: " + outcome.effect)
        }
    }

    /// Publishes Appwrite's message JSON on `topic` at the provider's and the topic's
    /// lowest QoS, kept for offline devices for the topic's expiry (MQTT 5 message expiry).
    func publish(_ push: AppwritePush, on topic: String, in project: inout AppwriteProject) -> String {
        guard let publisher = brokers[project.id]?.publisher else { return "failed: the project has no broker" }
        let own = project.topics[topic]
        let qos = min(project.providerQoS, own?.qos ?? 1)
        let expiry = own?.expiry ?? project.defaultExpiry
        let number = world.hub.countPublication()
        do {
            try publisher.publish(topic: topic, payload: push.mqttPayload, qos: qos, expiry: UInt32(max(expiry, 1)))
        } catch {
            return "failed: \(error)"
        }
        project.publications[topic, default: []].append(
            .init(number: number, messageID: push.messageID, topic: topic, publishedAt: world.clock(), expiry: expiry))
        if project.publications[topic]!.count > Self.publicationMemory {
            project.publications[topic]!.removeFirst(project.publications[topic]!.count - Self.publicationMemory)
        }
        let enforced = project.admin == nil ? "; the broker enforces nothing (the project has no admin)" : ""
        return "published to \(topic) over Appwrite Push at QoS \(qos), kept \(expiry) s for offline devices\(enforced)"
    }

    /// The devices of this world that listen on `topic` at the project's broker now.
    func listeners(of topic: String, in project: AppwriteProject) -> [String] {
        world.devices.filter { device in
            device.appwriteSignIns.contains { $0.endpoint == project.endpoint && $0.topics.contains(topic) }
        }.map(\.id)
    }

    // MARK: Replay (APW-14)

    /// Why an arrival is not handed to the device, when a replay rule drops it: it was
    /// published before the connection's session began (a replay), and it expired on the
    /// world's clock, or `replayDepth` newer ones on its topic were missed too.
    func replayVerdict(_ arrival: ChannelArrival) -> String? {
        guard projects.values.contains(where: { $0.publications[arrival.message.topic] != nil }),
            let messageID = Self.messageID(arrival)
        else { return nil }
        for project in projects.values {
            guard let list = project.publications[arrival.message.topic],
                let index = list.lastIndex(where: { $0.number <= arrival.sessionStart && $0.messageID == messageID })
            else { continue }
            let publication = list[index]
            if world.clock() >= publication.publishedAt + Int64(publication.expiry) * 1000 {
                return
                    "dropped: messageId \(publication.messageID) was missed while offline and expired after \(publication.expiry) s (APW-14)"
            }
            let newer = list[(index + 1)...].filter { $0.number <= arrival.sessionStart }.count
            if newer >= Self.replayDepth {
                return
                    "dropped: \(newer) newer messages on \(publication.topic) were missed too; a reconnect replays the \(Self.replayDepth) newest (APW-14)"
            }
            return nil
        }
        return nil
    }

    static func messageID(_ arrival: ChannelArrival) -> String? {
        (try? JSON.parse(arrival.message.payload))?["messageId"]?.stringValue
    }
}

extension AppwriteService: WorldService {
    /// Appwrite: every project, its data, and the world's connections to its broker (the
    /// accounts it made there stay the broker's).
    func clear(_ part: WorldPart) -> Int {
        guard part == .appwrite else { return 0 }
        // The admin's session closes as it goes (DynamicSecurity's deinit).
        for broker in brokers.values { broker.publisher.close() }
        defer {
            projects.removeAll()
            brokers.removeAll()
            nextID = 0
            soonestExpiry = .max
        }
        return projects.count
    }

    func save(_ part: WorldPart) -> JSONObject { part == .appwrite ? saveProjects() : JSONObject() }

    func restoring(_ part: WorldPart, from saved: WorldSnapshot.Reader) throws(WorldSnapshot.Refusal) -> (() -> Void)? {
        part == .appwrite ? try restoringProjects(from: saved) : nil
    }
}
