import OrderedJSON
import SimulatedDevice

/// Appwrite's part of a state document (Docs/Install.md, "Kept across restarts"): every
/// project as its server keeps it, read back by the same names. A project's broker is
/// connected again when the world loads; a project on the world's own broker (`--broker`)
/// follows it to the port it has now.
extension AppwriteService {
    func saveProjects() -> JSONObject {
        let list = projects.values.sorted { $0.id < $1.id }.map { JSON.object(Self.saved($0)) }
        return JSONObject([
            ("appwrite_projects", .array(list)), ("appwrite_next_id", .integer(Int64(nextID))),
            ("world_broker", world.broker.map { JSON.string($0.endpoint) } ?? .null),
        ])
    }

    func restoringProjects(from saved: WorldSnapshot.Reader) throws(WorldSnapshot.Refusal) -> () -> Void {
        let oldBroker = try saved.optionalString("world_broker")
        var restored: [AppwriteProject] = []
        for item in try saved.objects("appwrite_projects") {
            var project = try Self.project(item)
            project.endpoint = world.following(project.endpoint, savedBroker: oldBroker)
            restored.append(project)
        }
        let next = Int(try saved.integer("appwrite_next_id", default: 0))
        return { [self] in
            nextID = next
            for project in restored {
                projects[project.id] = project
                // The broker's rights for every user are set again; a broker that cannot be
                // reached leaves the project without one, as a broker down would (Docs/Install.md).
                _ = try? register(
                    project: project.id, key: project.key, endpoint: project.endpoint, admin: project.admin)
            }
            soonestExpiry =
                projects.values.flatMap { $0.credentials.values.compactMap(\.expiresAt) }.min() ?? .max
        }
    }

    // MARK: Writing

    static func saved(_ project: AppwriteProject) -> JSONObject {
        func sorted<T>(_ table: [String: T], _ write: (T) -> JSONObject) -> JSON {
            .array(table.sorted { $0.key < $1.key }.map { .object(write($0.value)) })
        }
        func optional(_ value: Int?) -> JSON { value.map { .integer(Int64($0)) } ?? .null }
        var object = JSONObject([
            ("id", .string(project.id)), ("key", .string(project.key)), ("endpoint", .string(project.endpoint)),
        ])
        if let admin = project.admin {
            object["admin"] = .object(
                JSONObject([("username", .string(admin.username)), ("password", .string(admin.password))]))
        }
        object["providers"] = sorted(project.providers) { p in
            JSONObject([
                ("id", .string(p.id)), ("name", .string(p.name)), ("kind", .string(p.kind)),
                ("enabled", .bool(p.enabled)),
                ("qos", optional(p.qos)), ("expiry", optional(p.expiry)),
                ("fcm_project", p.fcmProject.map(JSON.string) ?? .null),
                ("bundle", p.bundleID.map(JSON.string) ?? .null), ("sandbox", .bool(p.sandbox)),
                ("created_at", .integer(p.createdAt)), ("updated_at", .integer(p.updatedAt)),
            ])
        }
        object["users"] = sorted(project.users) { u in
            JSONObject([
                ("id", .string(u.id)), ("name", .string(u.name)), ("email", .string(u.email)),
                ("phone", .string(u.phone)), ("created_at", .integer(u.createdAt)),
                (
                    "credential",
                    project.credentials[u.id].map { c in
                        .object(
                            JSONObject([
                                ("secret", .string(c.secret)), ("expires_at", c.expiresAt.map(JSON.integer) ?? .null),
                            ]))
                    } ?? .null
                ),
            ])
        }
        object["targets"] = sorted(project.targets) { t in
            JSONObject([
                ("id", .string(t.id)), ("user", .string(t.userID)),
                ("provider", t.providerID.map(JSON.string) ?? .null),
                ("kind", .string(t.kind)), ("identifier", .string(t.identifier)), ("name", .string(t.name)),
                ("created_at", .integer(t.createdAt)),
            ])
        }
        object["topics"] = sorted(project.topics) { t in
            JSONObject([
                ("id", .string(t.id)), ("name", .string(t.name)), ("description", .string(t.description)),
                ("qos", optional(t.qos)), ("expiry", optional(t.expiry)), ("created_at", .integer(t.createdAt)),
            ])
        }
        object["subscribers"] = sorted(project.subscribers) { s in
            JSONObject([
                ("id", .string(s.id)), ("topic", .string(s.topicID)), ("target", .string(s.targetID)),
                ("created_at", .integer(s.createdAt)),
            ])
        }
        object["messages"] = sorted(project.messages) { m in
            JSONObject([
                ("id", .string(m.push.id)), ("users", .array(m.push.users.map(JSON.string))),
                ("topics", .array(m.push.topics.map(JSON.string))),
                ("targets", .array(m.push.targets.map(JSON.string))), ("data", .object(m.push.data)),
                ("status", .string(m.status)), ("delivered_total", .integer(Int64(m.deliveredTotal))),
                ("delivery_errors", .array(m.deliveryErrors.map(JSON.string))), ("created_at", .integer(m.createdAt)),
            ])
        }
        object["publications"] = .array(
            project.publications.keys.sorted().flatMap { topic in
                (project.publications[topic] ?? []).map { p in
                    JSON.object(
                        JSONObject([
                            ("number", .integer(Int64(p.number))), ("message", .string(p.messageID)),
                            ("topic", .string(p.topic)), ("published_at", .integer(p.publishedAt)),
                            ("expiry", .integer(Int64(p.expiry))),
                        ]))
                }
            })
        return object
    }

    // MARK: Reading

    static func project(_ item: WorldSnapshot.Reader) throws(WorldSnapshot.Refusal) -> AppwriteProject {
        func optionalInt(_ reader: WorldSnapshot.Reader, _ key: String) throws(WorldSnapshot.Refusal) -> Int? {
            try reader.optionalInteger(key).map { Int($0) }
        }
        var project = AppwriteProject(
            id: try item.string("id"), key: try item.string("key"), endpoint: try item.string("endpoint"))
        if let admin = try item.object("admin") {
            project.admin = (try admin.string("username"), try admin.string("password"))
        }
        for p in try item.objects("providers") {
            let provider = AppwriteProject.Provider(
                id: try p.string("id"), name: try p.string("name"), kind: try p.string("kind"),
                enabled: try p.bool("enabled"), qos: try optionalInt(p, "qos"), expiry: try optionalInt(p, "expiry"),
                fcmProject: try p.optionalString("fcm_project"), bundleID: try p.optionalString("bundle"),
                sandbox: try p.bool("sandbox"), createdAt: try p.integer("created_at"),
                updatedAt: try p.integer("updated_at"))
            project.providers[provider.id] = provider
        }
        for u in try item.objects("users") {
            let user = AppwriteProject.User(
                id: try u.string("id"), name: try u.string("name"), email: try u.string("email"),
                phone: try u.string("phone"), createdAt: try u.integer("created_at"))
            project.users[user.id] = user
            if let credential = try u.object("credential") {
                project.credentials[user.id] = AppwriteProject.Credential(
                    secret: try credential.string("secret"), expiresAt: try credential.optionalInteger("expires_at"))
            }
        }
        for t in try item.objects("targets") {
            let target = AppwriteProject.Target(
                id: try t.string("id"), userID: try t.string("user"), providerID: try t.optionalString("provider"),
                kind: try t.string("kind"), identifier: try t.string("identifier"), name: try t.string("name"),
                createdAt: try t.integer("created_at"))
            project.targets[target.id] = target
        }
        for t in try item.objects("topics") {
            let topic = AppwriteProject.Topic(
                id: try t.string("id"), name: try t.string("name"), description: try t.string("description"),
                qos: try optionalInt(t, "qos"), expiry: try optionalInt(t, "expiry"),
                createdAt: try t.integer("created_at"))
            project.topics[topic.id] = topic
        }
        for s in try item.objects("subscribers") {
            let subscriber = AppwriteProject.Subscriber(
                id: try s.string("id"), topicID: try s.string("topic"), targetID: try s.string("target"),
                createdAt: try s.integer("created_at"))
            project.subscribers[subscriber.id] = subscriber
        }
        for m in try item.objects("messages") {
            guard let data = try m.object("data") else { throw m.wrong("data", "an object") }
            let push = AppwritePushRecord(
                id: try m.string("id"), users: try m.strings("users"), topics: try m.strings("topics"),
                targets: try m.strings("targets"), data: data.object)
            project.messages[push.id] = AppwriteProject.Message(
                push: push, status: try m.string("status"), deliveredTotal: Int(try m.integer("delivered_total")),
                deliveryErrors: try m.strings("delivery_errors"), createdAt: try m.integer("created_at"))
        }
        for p in try item.objects("publications") {
            let publication = AppwriteProject.Publication(
                number: Int(try p.integer("number")), messageID: try p.string("message"), topic: try p.string("topic"),
                publishedAt: try p.integer("published_at"), expiry: Int(try p.integer("expiry")))
            project.publications[publication.topic, default: []].append(publication)
        }
        return project
    }
}

extension World {
    /// An endpoint saved while `savedBroker` was the world's own broker names that broker
    /// now, wherever it listens after the restart; any other endpoint is kept.
    func following(_ endpoint: String, savedBroker: String?) -> String {
        guard let savedBroker, endpoint == savedBroker, let broker else { return endpoint }
        return broker.endpoint
    }
}
