import Foundation
import HTTPMessage
import MQTTClient
import OrderedJSON
import PushServices
import SimulatedDevice

/// Appwrite's resources as the Messaging API makes them (APW-10, APW-11), and the
/// broker rights that follow from them (APW-13).
extension AppwriteService {
    // MARK: Providers (APW-10)

    func createProvider(kind: String, _ body: JSONObject, _ project: String) -> Result<Done, AppwriteError> {
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

    func updateProvider(kind: String, id: String, _ body: JSONObject, _ project: String) -> Result<
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
    func apply(_ body: JSONObject, to provider: inout AppwriteProject.Provider) -> AppwriteError? {
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

    func createUser(_ body: JSONObject, _ project: String) -> Result<Done, AppwriteError> {
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
    func knownUser(_ id: String, in project: String) -> AppwriteProject.User? {
        if let user = projects[project]?.users[id] { return user }
        guard let endpoint = projects[project]?.endpoint,
            world.devices.contains(where: { $0.appwriteSignIns.contains { $0.user == id && $0.endpoint == endpoint } })
        else { return nil }
        let user = AppwriteProject.User(id: id, createdAt: world.clock())
        projects[project]?.users[id] = user
        return user
    }

    func createCredential(user id: String, jwt: Bool, _ body: JSONObject, _ project: String) -> Result<
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
            soonestExpiry = min(soonestExpiry, expires)
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

    func createTarget(user id: String, _ body: JSONObject, _ project: String) -> Result<Done, AppwriteError> {
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

    func createTopic(_ body: JSONObject, _ project: String) -> Result<Done, AppwriteError> {
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

    func createSubscriber(topic topicID: String, _ body: JSONObject, _ project: String) -> Result<
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

    func deleteSubscriber(topic topicID: String, id: String, _ project: String) -> Result<Done, AppwriteError> {
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
    func grant(_ user: String, in project: String) throws {
        guard let security = brokers[project]?.security, let state = projects[project] else { return }
        let role = BrokerName.userRole(user, in: project)
        let username = BrokerName.user(user, in: project)
        let topics = ["users/" + user] + state.topics(of: user).sorted()
        var commands = [
            JSONObject([("command", "deleteRole"), ("rolename", .string(role))]),
            JSONObject([("command", "createRole"), ("rolename", .string(role))]),
        ]
        for topic in topics {
            commands.append(Self.acl("addRoleACL", role: role, type: "subscribeLiteral", topic: topic))
            commands.append(Self.acl("addRoleACL", role: role, type: "publishClientReceive", topic: topic))
        }
        commands.append(JSONObject([("command", "createClient"), ("username", .string(username))]))
        let password = state.credentials[user].flatMap { credential in
            credential.expiresAt.map { $0 > world.clock() } ?? true ? credential.secret : nil
        }
        // No credential, or an expired one: a password nobody holds.
        commands.append(
            JSONObject([
                ("command", "setClientPassword"), ("username", .string(username)),
                ("password", .string(password ?? Self.secret())),
            ]))
        commands.append(
            JSONObject([("command", "addClientRole"), ("username", .string(username)), ("rolename", .string(role))]))
        try security.run(commands, tolerating: ["Role not found", "Client already exists"])
    }

    /// JWTs past their 15 minutes on the world's clock stop working: the broker's password
    /// changes, so a reconnect with one is refused (APW-13). Called before each request:
    /// one comparison with the soonest expiry, and a look at the credentials only when one
    /// is due (each JWT is looked for once, not on every request).
    func expireCredentials() {
        let now = world.clock()
        guard now >= soonestExpiry else { return }
        var soonest = Int64.max
        for (project, state) in projects {
            for (user, credential) in state.credentials {
                guard let expiresAt = credential.expiresAt else { continue }
                if expiresAt <= now {
                    projects[project]?.credentials.removeValue(forKey: user)
                    try? grant(user, in: project)
                } else {
                    soonest = min(soonest, expiresAt)
                }
            }
        }
        soonestExpiry = soonest
    }
}
