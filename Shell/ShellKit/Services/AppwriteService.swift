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
    private(set) var projects: [String: AppwriteProject] = [:]
    /// Each project's connections to its broker: the publisher, and the administrator.
    private var brokers: [String: Broker] = [:]
    private var nextID = 0

    struct Broker {
        var publisher: MQTTConnection
        var security: DynamicSecurity?
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
                        JSONObject([("command", "createRole"), ("rolename", "appwrite-server")]),
                        Self.acl("addRoleACL", role: "appwrite-server", type: "publishClientSend", topic: "#"),
                        JSONObject([("command", "createClient"), ("username", "appwrite-server")]),
                        JSONObject([
                            ("command", "setClientPassword"), ("username", "appwrite-server"),
                            ("password", .string(password)),
                        ]),
                        JSONObject([
                            ("command", "addClientRole"), ("username", "appwrite-server"),
                            ("rolename", "appwrite-server"),
                        ]),
                    ],
                    tolerating: ["Role already exists", "Client already exists", "ACL with this topic already exists"])
                security = administrator
                login = ("appwrite-server", password)
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
        (request.path ?? "").hasPrefix("/v1/") && request.header("x-appwrite-project") != nil
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
        guard let project = projects[projectID] else {
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
        guard key == project.key else {
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
                report,
                HTTPResponse(
                    status: status, headers: document == nil ? [] : [("content-type", "application/json")], body: bytes)
            )
        }
    }

    private typealias Done = (status: Int, document: JSONObject?, effect: String, report: JSONObject)

    private func route(_ method: String, _ s: [String], _ body: JSONObject, _ project: String) -> Result<
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

    // MARK: Providers (APW-10)

    private func createProvider(kind: String, _ body: JSONObject, _ project: String) -> Result<Done, AppwriteError> {
        guard ["appwrite", "fcm", "apns"].contains(kind) else {
            return .failure(AppwriteError(404, "general_route_not_found", "The requested route was not found."))
        }
        let id: String
        switch resolveID(body["providerId"], "providerId") {
        case .failure(let error): return .failure(error)
        case .success(let value): id = value
        }
        guard projects[project]?.providers[id] == nil else {
            return .failure(
                AppwriteError(409, "provider_already_exists", "Provider with the requested ID already exists."))
        }
        guard case .string(let name)? = body["name"], !name.isEmpty else {
            return .failure(
                .invalid(
                    "Invalid `name` param: Value must be a valid string and at least 1 chars and no longer than 128 chars"
                ))
        }
        let now = world.clock()
        var provider = AppwriteProject.Provider(
            id: id, name: name, kind: kind, enabled: true, createdAt: now, updatedAt: now)
        if let error = apply(body, to: &provider) { return .failure(error) }
        projects[project]?.providers[id] = provider
        return .success((201, Self.document(provider), "created the \(kind) provider \(id)", JSONObject()))
    }

    private func updateProvider(kind: String, id: String, _ body: JSONObject, _ project: String) -> Result<
        Done, AppwriteError
    > {
        guard var provider = projects[project]?.providers[id], provider.kind == kind else {
            return .failure(Self.notFound("provider"))
        }
        if case .string(let name)? = body["name"] { provider.name = name }
        if let error = apply(body, to: &provider) { return .failure(error) }
        provider.updatedAt = world.clock()
        projects[project]?.providers[id] = provider
        return .success((200, Self.document(provider), "updated the \(kind) provider \(id)", JSONObject()))
    }

    /// The settings a provider's create and update share.
    private func apply(_ body: JSONObject, to provider: inout AppwriteProject.Provider) -> AppwriteError? {
        switch body["enabled"] {
        case nil, .null?: break
        case .bool(let value)?: provider.enabled = value
        default: return .invalid("Invalid `enabled` param: Value must be a valid boolean")
        }
        if provider.kind == "appwrite" {
            switch body["qos"] {
            case nil: break
            case .null?: provider.qos = nil
            case let value? where value.wholeNumber == 0 || value.wholeNumber == 1: provider.qos = value.wholeNumber
            default: return .invalid("Invalid `qos` param: Value must be 0, 1 or null")
            }
            switch body["expiry"] {
            case nil: break
            case .null?: provider.expiry = nil
            case let value? where (0...604_800).contains(value.wholeNumber ?? -1): provider.expiry = value.wholeNumber
            default: return .invalid("Invalid `expiry` param: Value must be a valid range between 0 and 604,800")
            }
        }
        if provider.kind == "fcm", case .object(let account)? = body["serviceAccountJSON"] {
            provider.fcmProject = account["project_id"]?.stringValue
        }
        if provider.kind == "apns" {
            if case .string(let bundle)? = body["bundleId"] { provider.bundleID = bundle }
            if case .bool(let sandbox)? = body["sandbox"] { provider.sandbox = sandbox }
        }
        return nil
    }

    // MARK: Users, credentials, targets (APW-11, APW-13)

    private func createUser(_ body: JSONObject, _ project: String) -> Result<Done, AppwriteError> {
        let id: String
        switch resolveID(body["userId"], "userId") {
        case .failure(let error): return .failure(error)
        case .success(let value): id = value
        }
        guard projects[project]?.users[id] == nil else {
            return .failure(
                AppwriteError(
                    409, "user_already_exists",
                    "A user with the same id, email, or phone already exists in this project."))
        }
        var user = AppwriteProject.User(id: id, createdAt: world.clock())
        user.name = body["name"]?.stringValue ?? ""
        user.email = body["email"]?.stringValue ?? ""
        user.phone = body["phone"]?.stringValue ?? ""
        projects[project]?.users[id] = user
        return .success((201, document(user, in: project), "created user \(id)", JSONObject()))
    }

    /// A user made through the API, or one a device signed in as on this project's
    /// broker (the channel's `user`), made now.
    private func knownUser(_ id: String, in project: String) -> AppwriteProject.User? {
        if let user = projects[project]?.users[id] { return user }
        guard let endpoint = projects[project]?.endpoint,
            world.devices.contains(where: { $0.appwriteSignIns.contains { $0.user == id && $0.endpoint == endpoint } })
        else { return nil }
        let user = AppwriteProject.User(id: id, createdAt: world.clock())
        projects[project]?.users[id] = user
        return user
    }

    private func createCredential(user id: String, jwt: Bool, _ body: JSONObject, _ project: String) -> Result<
        Done, AppwriteError
    > {
        guard knownUser(id, in: project) != nil else { return .failure(Self.notFound("user")) }
        let now = world.clock()
        var credential = AppwriteProject.Credential(secret: Self.secret())
        var document: JSONObject
        if jwt {
            var lifetime = Self.jwtLifetime
            if let seconds = body["duration"]?.wholeNumber {
                guard (0...3600).contains(seconds) else {
                    return .failure(
                        .invalid("Invalid `duration` param: Value must be a valid range between 0 and 3,600"))
                }
                lifetime = Int64(seconds) * 1000
            }
            let expires = now + lifetime
            credential.secret = Self.jwt(user: id, expires: expires)
            credential.expiresAt = expires
            document = JSONObject([("jwt", .string(credential.secret))])
        } else {
            let session = makeID()
            document = Self.session(id: session, user: id, secret: credential.secret, now: now)
        }
        projects[project]?.credentials[id] = credential
        do {
            try grant(id, in: project)
        } catch {
            return .failure(AppwriteError(500, "general_unknown", "The broker's rights could not be set: \(error)"))
        }
        return .success(
            (
                201, document,
                "made a \(jwt ? "JWT (15 minutes)" : "session") for \(id): the broker's password for its devices",
                JSONObject()
            ))
    }

    private func createTarget(user id: String, _ body: JSONObject, _ project: String) -> Result<Done, AppwriteError> {
        guard knownUser(id, in: project) != nil else { return .failure(Self.notFound("user")) }
        let targetID: String
        switch resolveID(body["targetId"], "targetId") {
        case .failure(let error): return .failure(error)
        case .success(let value): targetID = value
        }
        guard projects[project]?.targets[targetID] == nil else {
            return .failure(AppwriteError(409, "target_already_exists", "A target with the same ID already exists."))
        }
        guard body["providerType"]?.stringValue == "push" else {
            return .failure(
                .invalid("Invalid `providerType` param: this world serves push targets (providerType \"push\")"))
        }
        guard case .string(let identifier)? = body["identifier"], !identifier.isEmpty else {
            return .failure(.invalid("Invalid `identifier` param: Value must be a valid string"))
        }
        var kind = "appwrite"
        let providerID = body["providerId"]?.stringValue
        if let providerID {
            guard let provider = projects[project]?.providers[providerID] else {
                return .failure(Self.notFound("provider"))
            }
            kind = provider.kind
        } else if let first = projects[project]?.providers.values.filter(\.enabled).min(by: {
            $0.createdAt < $1.createdAt
        }) {
            // Appwrite assigns a target without providerId to one of the enabled providers.
            kind = first.kind
        }
        let target = AppwriteProject.Target(
            id: targetID, userID: id, providerID: providerID, kind: kind, identifier: identifier,
            name: body["name"]?.stringValue ?? "", createdAt: world.clock())
        projects[project]?.targets[targetID] = target
        return .success(
            (201, Self.document(target), "created the \(kind) push target \(targetID) of \(id)", JSONObject()))
    }

    // MARK: Topics and subscribers (APW-11)

    private func createTopic(_ body: JSONObject, _ project: String) -> Result<Done, AppwriteError> {
        let id: String
        switch resolveID(body["topicId"], "topicId") {
        case .failure(let error): return .failure(error)
        case .success(let value): id = value
        }
        guard projects[project]?.topics[id] == nil else {
            return .failure(AppwriteError(409, "topic_already_exists", "Topic with the request ID already exists."))
        }
        guard case .string(let name)? = body["name"], !name.isEmpty else {
            return .failure(
                .invalid(
                    "Invalid `name` param: Value must be a valid string and at least 1 chars and no longer than 128 chars"
                ))
        }
        var topic = AppwriteProject.Topic(
            id: id, name: name, description: body["description"]?.stringValue ?? "", createdAt: world.clock())
        if let qos = body["qos"], qos != .null {
            guard qos.wholeNumber == 0 || qos.wholeNumber == 1 else {
                return .failure(.invalid("Invalid `qos` param: Value must be 0, 1 or null"))
            }
            topic.qos = qos.wholeNumber
        }
        if let expiry = body["expiry"], expiry != .null {
            guard let seconds = expiry.wholeNumber, (0...604_800).contains(seconds) else {
                return .failure(.invalid("Invalid `expiry` param: Value must be a valid range between 0 and 604,800"))
            }
            topic.expiry = seconds
        }
        projects[project]?.topics[id] = topic
        return .success((201, document(topic, in: project), "created topic \(id)", JSONObject()))
    }

    private func createSubscriber(topic topicID: String, _ body: JSONObject, _ project: String) -> Result<
        Done, AppwriteError
    > {
        guard projects[project]?.topics[topicID] != nil else { return .failure(Self.notFound("topic")) }
        let id: String
        switch resolveID(body["subscriberId"], "subscriberId") {
        case .failure(let error): return .failure(error)
        case .success(let value): id = value
        }
        guard projects[project]?.subscribers[id] == nil else {
            return .failure(
                AppwriteError(409, "subscriber_already_exists", "Subscriber with the request ID already exists."))
        }
        guard case .string(let targetID)? = body["targetId"], let target = projects[project]?.targets[targetID] else {
            return .failure(Self.notFound("target"))
        }
        let subscriber = AppwriteProject.Subscriber(
            id: id, topicID: topicID, targetID: targetID, createdAt: world.clock())
        projects[project]?.subscribers[id] = subscriber
        do {
            try grant(target.userID, in: project)
        } catch {
            return .failure(AppwriteError(500, "general_unknown", "The broker's rights could not be set: \(error)"))
        }
        return .success(
            (
                201, document(subscriber, in: project),
                "\(target.userID)'s target \(targetID) subscribes to \(topicID)", JSONObject()
            ))
    }

    private func deleteSubscriber(topic topicID: String, id: String, _ project: String) -> Result<Done, AppwriteError> {
        guard let subscriber = projects[project]?.subscribers[id], subscriber.topicID == topicID else {
            return .failure(Self.notFound("subscriber"))
        }
        projects[project]?.subscribers.removeValue(forKey: id)
        let user = projects[project]?.targets[subscriber.targetID]?.userID
        var effect = "removed subscriber \(id) from \(topicID)"
        if let user {
            do {
                try grant(user, in: project)
            } catch {
                return .failure(AppwriteError(500, "general_unknown", "The broker's rights could not be set: \(error)"))
            }
            if !(projects[project]?.topics(of: user).contains(topicID) ?? false) {
                effect += "; \(user) no longer subscribes to it through any target: the broker stops delivering it"
            }
        }
        return .success((204, nil, effect, JSONObject()))
    }

    // MARK: The broker's rights (APW-13)

    /// Sets a user's broker client and role to what the project says: the user's current
    /// credential as its password, and receiving only `users/<id>` and its topics.
    private func grant(_ user: String, in project: String) throws {
        guard let security = brokers[project]?.security, let state = projects[project] else { return }
        let role = "appwrite-user-" + user
        let topics = ["users/" + user] + state.topics(of: user).sorted()
        var commands = [
            JSONObject([("command", "deleteRole"), ("rolename", .string(role))]),
            JSONObject([("command", "createRole"), ("rolename", .string(role))]),
        ]
        for topic in topics {
            commands.append(Self.acl("addRoleACL", role: role, type: "subscribeLiteral", topic: topic))
            commands.append(Self.acl("addRoleACL", role: role, type: "publishClientReceive", topic: topic))
        }
        commands.append(JSONObject([("command", "createClient"), ("username", .string(user))]))
        let password = state.credentials[user].flatMap { credential in
            credential.expiresAt.map { $0 > world.clock() } ?? true ? credential.secret : nil
        }
        // No credential, or an expired one: a password nobody holds.
        commands.append(
            JSONObject([
                ("command", "setClientPassword"), ("username", .string(user)),
                ("password", .string(password ?? Self.secret())),
            ]))
        commands.append(
            JSONObject([("command", "addClientRole"), ("username", .string(user)), ("rolename", .string(role))]))
        try security.run(commands, tolerating: ["Role not found", "Client already exists"])
    }

    /// JWTs past their 15 minutes on the world's clock stop working: the broker's password
    /// changes, so a reconnect with one is refused (APW-13). Called before each request.
    func expireCredentials() {
        let now = world.clock()
        for (project, state) in projects {
            for (user, credential) in state.credentials where (credential.expiresAt ?? .max) <= now {
                projects[project]?.credentials.removeValue(forKey: user)
                try? grant(user, in: project)
            }
        }
    }

    // MARK: Sending (APW-12, APW-15)

    private func createPush(_ body: JSONObject, _ projectID: String) -> Result<Done, AppwriteError> {
        let messageID: String
        switch resolveID(body["messageId"], "messageId") {
        case .failure(let error): return .failure(error)
        case .success(let value): messageID = value
        }
        guard var project = projects[projectID] else { return .failure(Self.notFound("project")) }
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
            projects[projectID] = project
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
            for device in listeners(of: topic, in: project) {
                devices.append(
                    .object(
                        JSONObject([
                            ("device", .string(device)), ("topic", .string(topic)), ("result", .string(result)),
                        ])))
            }
            if listeners(of: topic, in: project).isEmpty {
                devices.append(
                    .object(
                        JSONObject([
                            ("device", .null), ("topic", .string(topic)),
                            ("result", .string(result + "; no device listens now")),
                        ])))
            }
        }
        let status = delivered > 0 ? "sent" : "failed"
        if delivered == 0 && errors.isEmpty {
            errors.append("No target, user topic or topic subscriber to deliver to.")
        }
        project.messages[messageID] = .init(
            push: record, status: status, deliveredTotal: delivered, deliveryErrors: errors, createdAt: now)
        projects[projectID] = project
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
    private func sendDirect(_ push: AppwritePush, to target: AppwriteProject.Target, in project: AppwriteProject) -> (
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
                return (sent["device"]?.stringValue, "delivered through FCM: " + (sent["effect"]?.stringValue ?? ""))
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
        case .success(let notification):
            guard let (device, outcome) = try? apns.deliver(notification) else {
                return (nil, "failed: no device holds the token")
            }
            return (device.id, "delivered through APNs: " + outcome.effect)
        }
    }

    /// Publishes Appwrite's message JSON on `topic` at the provider's and the topic's
    /// lowest QoS, kept for offline devices for the topic's expiry (MQTT 5 message expiry).
    private func publish(_ push: AppwritePush, on topic: String, in project: inout AppwriteProject) -> String {
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
    private func listeners(of topic: String, in project: AppwriteProject) -> [String] {
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

    // MARK: Documents (what the SDK's models parse)

    private func resolveID(_ value: JSON?, _ parameter: String) -> Result<String, AppwriteError> {
        guard case .string(let given)? = value else {
            return .failure(.invalid("Param \"\(parameter)\" is not optional."))
        }
        return AppwriteID.resolve(given, parameter: parameter, make: makeID)
    }

    private func makeID() -> String {
        nextID += 1
        return String(format: "%08llx%012x", UInt64(world.clock() / 1000) & 0xffff_ffff, nextID)
    }

    private static func secret() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    /// A JWT as Appwrite makes one (HS256 over the user and its expiry), with a random
    /// key: only the broker checks it, as its password.
    private static func jwt(user: String, expires: Int64) -> String {
        func base64URL(_ bytes: [UInt8]) -> String {
            Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        let header = JSON.object(JSONObject([("typ", "JWT"), ("alg", "HS256")])).compactBytes
        let claims = JSON.object(
            JSONObject([
                ("userId", .string(user)), ("sessionId", .string(secret().prefix(20).description)),
                ("exp", .integer(expires / 1000)),
            ])
        ).compactBytes
        return base64URL(header) + "." + base64URL(claims) + "."
            + base64URL((0..<32).map { _ in UInt8.random(in: 0...255) })
    }

    private static func time(_ milliseconds: Int64) -> JSON { .string(RequestLog.timestamp(milliseconds)) }

    private static func stamps(_ id: String, _ created: Int64, _ updated: Int64? = nil) -> [(String, JSON)] {
        [("$id", .string(id)), ("$createdAt", time(created)), ("$updatedAt", time(updated ?? created))]
    }

    static func acl(_ command: String, role: String, type: String, topic: String) -> JSONObject {
        JSONObject([
            ("command", .string(command)), ("rolename", .string(role)), ("acltype", .string(type)),
            ("topic", .string(topic)),
            ("allow", true),
        ])
    }

    private static func notFound(_ what: String) -> AppwriteError {
        AppwriteError(
            404, "\(what)_not_found",
            "\(what.prefix(1).uppercased() + what.dropFirst()) with the requested ID could not be found.")
    }

    private static func document(_ provider: AppwriteProject.Provider) -> JSONObject {
        var options = JSONObject()
        if provider.kind == "appwrite" {
            options["qos"] = provider.qos.map { .integer(Int64($0)) } ?? .null
            options["expiry"] = provider.expiry.map { .integer(Int64($0)) } ?? .null
        }
        if let bundle = provider.bundleID { options["bundleId"] = .string(bundle) }
        if provider.kind == "apns" { options["sandbox"] = .bool(provider.sandbox) }
        return JSONObject(
            stamps(provider.id, provider.createdAt, provider.updatedAt) + [
                ("name", .string(provider.name)), ("provider", .string(provider.kind)),
                ("enabled", .bool(provider.enabled)),
                ("type", "push"), ("credentials", .object(JSONObject())), ("options", .object(options)),
            ])
    }

    private static func document(_ target: AppwriteProject.Target) -> JSONObject {
        JSONObject(
            stamps(target.id, target.createdAt) + [
                ("name", .string(target.name)), ("userId", .string(target.userID)),
                ("providerId", target.providerID.map(JSON.string) ?? .null), ("providerType", "push"),
                ("identifier", .string(target.identifier)), ("expired", false),
            ])
    }

    private func document(_ user: AppwriteProject.User, in project: String) -> JSONObject {
        let targets = projects[project]?.targets(of: user.id).map { JSON.object(Self.document($0)) } ?? []
        return JSONObject(
            Self.stamps(user.id, user.createdAt) + [
                ("name", .string(user.name)), ("registration", Self.time(user.createdAt)), ("status", true),
                ("labels", .array([])), ("passwordUpdate", ""), ("email", .string(user.email)),
                ("phone", .string(user.phone)),
                ("emailVerification", false), ("phoneVerification", false), ("mfa", false),
                ("prefs", .object(JSONObject())),
                ("targets", .array(targets)), ("accessedAt", Self.time(user.createdAt)),
            ])
    }

    private func document(_ topic: AppwriteProject.Topic, in project: String) -> JSONObject {
        let total = projects[project]?.subscribers.values.filter { $0.topicID == topic.id }.count ?? 0
        return JSONObject(
            Self.stamps(topic.id, topic.createdAt) + [
                ("name", .string(topic.name)), ("description", .string(topic.description)), ("emailTotal", 0),
                ("smsTotal", 0), ("pushTotal", .integer(Int64(total))), ("subscribe", .array([])),
                ("qos", topic.qos.map { .integer(Int64($0)) } ?? .null),
                ("expiry", topic.expiry.map { .integer(Int64($0)) } ?? .null),
            ])
    }

    private func document(_ subscriber: AppwriteProject.Subscriber, in project: String) -> JSONObject {
        let target = projects[project]?.targets[subscriber.targetID]
        let user = target.flatMap { projects[project]?.users[$0.userID] }
        return JSONObject(
            Self.stamps(subscriber.id, subscriber.createdAt) + [
                ("targetId", .string(subscriber.targetID)),
                ("target", target.map { .object(Self.document($0)) } ?? .null),
                ("userId", .string(target?.userID ?? "")), ("userName", .string(user?.name ?? "")),
                ("topicId", .string(subscriber.topicID)), ("providerType", "push"),
            ])
    }

    private static func document(_ message: AppwriteProject.Message) -> JSONObject {
        var document = JSONObject(
            stamps(message.push.id, message.createdAt) + [
                ("providerType", "push"), ("topics", .array(message.push.topics.map(JSON.string))),
                ("users", .array(message.push.users.map(JSON.string))),
                ("targets", .array(message.push.targets.map(JSON.string))),
                ("deliveredTotal", .integer(Int64(message.deliveredTotal))), ("data", .object(message.push.data)),
                ("status", .string(message.status)),
            ])
        if message.status != "draft" { document["deliveredAt"] = time(message.createdAt) }
        if !message.deliveryErrors.isEmpty {
            document["deliveryErrors"] = .array(message.deliveryErrors.map(JSON.string))
        }
        return document
    }

    private static func session(id: String, user: String, secret: String, now: Int64) -> JSONObject {
        var fields = stamps(id, now)
        fields += [("userId", .string(user)), ("expire", time(now + 365 * 24 * 3600 * 1000)), ("provider", "server")]
        for name in [
            "providerUid", "providerAccessToken", "providerAccessTokenExpiry", "providerRefreshToken", "ip", "osCode",
            "osName", "osVersion", "clientType", "clientCode", "clientName", "clientVersion", "clientEngine",
            "clientEngineVersion", "deviceName", "deviceBrand", "deviceModel", "countryCode", "countryName",
        ] {
            fields.append((name, ""))
        }
        fields += [("current", false), ("factors", .array([])), ("secret", .string(secret)), ("mfaUpdatedAt", "")]
        return JSONObject(fields)
    }

    /// An error answer, as Appwrite gives it, and its report line.
    private static func failure(_ error: AppwriteError, _ request: HTTPRequest, project: String? = nil) -> ServiceAnswer
    {
        failure(error, route: "\(request.method ?? "?") \(request.path ?? "")", project: project)
    }

    private static func failure(_ error: AppwriteError, route: String?, project: String? = nil) -> ServiceAnswer {
        var report = JSONObject([("network", "appwrite"), ("status", .integer(Int64(error.status)))])
        if let project { report["project"] = .string(project) }
        if let route { report["route"] = .string(route) }
        report["effect"] = .string("refused: \(error.type): \(error.message)")
        report["error"] = .string(error.type)
        return (
            report,
            HTTPResponse(
                status: error.status, headers: [("content-type", "application/json")],
                body: JSON.object(error.body).compactBytes)
        )
    }
}

extension JSON {
    /// A whole number, written as `1` or `1.0` (the SDKs send numbers as floats).
    fileprivate var wholeNumber: Int? {
        guard let number = numberValue, number.doubleValue.rounded() == number.doubleValue,
            abs(number.doubleValue) < 1e15
        else { return nil }
        return Int(number.doubleValue)
    }
}
