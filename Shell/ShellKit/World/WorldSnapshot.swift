import Credentials
import OrderedJSON
import PushPlugin
import PushServices
import SimulatedDevice

/// The world as a document (`GET /api/v1/snapshot`, `cxshell serve --state FILE`), and
/// the world replaced by one (`POST /api/v1/snapshot`, the state file at start). What it
/// keeps, by part (Docs/Install.md, "Kept across restarts"): `devices` (each device as
/// `Device.Saved` says, after a reboot, and every token and installation id the world
/// issued, retired ones too), `credentials` (APNs keys, service accounts, access tokens),
/// `chaos` (rules, with what remains of their counts) and `clock` (what was added).
/// A document from a newer format, or one that does not read, is refused with a sentence
/// and changes nothing.
enum WorldSnapshot {
    /// The format this shell writes and reads; a document with a larger number is refused.
    static let format: Int64 = 1
    static let savedParts: [WorldPart] = [.devices, .credentials, .chaos, .clock, .appwrite]

    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    static func document(of world: World) -> JSON {
        var document = JSONObject([
            ("cxshell_state", .integer(format)), ("saved_at", .string(RequestLog.timestamp(world.clock()))),
        ])
        for part in savedParts {
            var object = world.saved(part)
            for service in world.services {
                for (key, value) in service.service?.save(part) ?? JSONObject() { object[key] = value }
            }
            document[part.rawValue] = .object(object)
        }
        return .object(document)
    }

    /// Replaces the world's devices, credentials, chaos rules, clock offset and Appwrite
    /// projects with the document's (the log stays); how many of each it now has.
    static func restore(_ value: JSON, into world: World) throws(Refusal) -> JSONObject {
        guard let document = value.objectValue else { throw Refusal(description: "a state document is a JSON object") }
        guard let version = document["cxshell_state"]?.integerValue else {
            throw Refusal(
                description: "this is not a cxshell state document (it has no \"cxshell_state\" format number)")
        }
        guard version <= format else {
            throw Refusal(
                description:
                    "the state document is format \(version), from a newer cxshell; this one reads format \(format)"
            )
        }
        // Everything is read before anything changes: a refusal leaves the world as it was.
        var changes: [() -> Void] = []
        do {
            for part in savedParts {
                let saved =
                    try Reader(document, path: "").object(part.rawValue) ?? Reader(JSONObject(), path: part.rawValue)
                changes.append(try world.restoring(part, from: saved))
                for service in world.services {
                    if let change = try service.service?.restoring(part, from: saved) { changes.append(change) }
                }
            }
        } catch {
            world.chaos.publish()
            throw error
        }
        _ = world.reset(keeping: [.log])
        for change in changes { change() }
        world.chaos.publish()
        return JSONObject([
            ("devices", .integer(Int64(world.devices.count))),
            ("rules", .integer(Int64(world.chaos.rules.count))),
            ("advanced_ms", .integer(world.advancedMilliseconds)),
        ])
    }

    /// Reads a saved object's members, naming where a value is wrong.
    struct Reader {
        let object: JSONObject
        let path: String

        init(_ object: JSONObject, path: String) {
            self.object = object
            self.path = path
        }

        func at(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

        func wrong(_ key: String, _ expected: String) -> Refusal {
            Refusal(description: "the state document's \(at(key)) must be \(expected)")
        }

        func string(_ key: String) throws(Refusal) -> String {
            guard let value = object[key]?.stringValue else { throw wrong(key, "a string") }
            return value
        }

        func optionalString(_ key: String) throws(Refusal) -> String? {
            switch object[key] {
            case nil, .null?: return nil
            case .string(let value)?: return value
            default: throw wrong(key, "a string or null")
            }
        }

        func integer(_ key: String, default fallback: Int64? = nil) throws(Refusal) -> Int64 {
            if object[key] == nil, let fallback { return fallback }
            guard let value = object[key]?.integerValue else { throw wrong(key, "a whole number") }
            return value
        }

        func optionalInteger(_ key: String) throws(Refusal) -> Int64? {
            switch object[key] {
            case nil, .null?: return nil
            case let value?:
                guard let number = value.integerValue else { throw wrong(key, "a whole number or null") }
                return number
            }
        }

        func bool(_ key: String) throws(Refusal) -> Bool {
            guard case .bool(let value)? = object[key] else { throw wrong(key, "true or false") }
            return value
        }

        func object(_ key: String) throws(Refusal) -> Reader? {
            guard let value = object[key] else { return nil }
            guard let inner = value.objectValue else { throw wrong(key, "an object") }
            return Reader(inner, path: at(key))
        }

        /// Each member of the array at `key` that must be an object.
        func objects(_ key: String) throws(Refusal) -> [Reader] {
            guard let value = object[key] else { return [] }
            guard let items = value.arrayValue else { throw wrong(key, "an array") }
            var readers: [Reader] = []
            for (index, item) in items.enumerated() {
                guard let inner = item.objectValue else { throw wrong("\(key)[\(index)]", "an object") }
                readers.append(Reader(inner, path: at("\(key)[\(index)]")))
            }
            return readers
        }

        func strings(_ key: String) throws(Refusal) -> [String] {
            guard let value = object[key] else { return [] }
            guard let items = value.arrayValue, items.allSatisfy({ $0.stringValue != nil }) else {
                throw wrong(key, "an array of strings")
            }
            return items.compactMap(\.stringValue)
        }

        func value<T: RawRepresentable<String>>(_ key: String, _ type: T.Type, default fallback: T? = nil)
            throws(Refusal)
            -> T
        {
            if object[key] == nil, let fallback { return fallback }
            guard let text = object[key]?.stringValue, let value = T(rawValue: text) else {
                throw wrong(key, "one of the known names")
            }
            return value
        }
    }
}

extension World {
    /// What the world itself keeps of `part` in a state document.
    func saved(_ part: WorldPart) -> JSONObject {
        switch part {
        case .devices:
            let (tokens, installationIDs) = registry.recorded
            func record(_ key: String, _ value: String, _ entry: TokenRegistry.Entry) -> JSON {
                .object(
                    JSONObject([
                        (key, .string(value)), ("device", .string(entry.deviceID)),
                        ("platform", .string(entry.platform.rawValue)), ("bundle", .string(entry.bundleID)),
                        ("environment", .string(entry.environment.rawValue)), ("project", .string(entry.project)),
                        ("team", .string(entry.team)), ("retired_at", entry.retiredAt.map(JSON.integer) ?? .null),
                    ]))
            }
            return JSONObject([
                // Registrations on the world's own broker follow it to its port after a restart.
                ("world_broker", broker.map { JSON.string($0.endpoint) } ?? .null),
                ("last_number", .integer(Int64(lastDevice))),
                ("list", .array(devices.map { .object(Self.saved($0)) })),
                (
                    "tokens",
                    .array(
                        tokens.sorted { $0.0 < $1.0 }.map { record("token", $0.0, $0.1) }
                            + installationIDs.sorted { $0.0 < $1.0 }.map { record("fid", $0.0, $0.1) })
                ),
            ])
        case .chaos: return chaos.saved
        case .clock: return JSONObject([("advanced_ms", .integer(advancedMilliseconds))])
        case .credentials, .appwrite, .log: return JSONObject()
        }
    }

    /// A saved value read by the rules of the request that made it (`categories`, a
    /// category's actions, a device's `resources`); absent is `none`.
    static func read<T, Failure: Error & CustomStringConvertible>(
        _ record: WorldSnapshot.Reader, _ key: String, as what: String, none: T,
        _ parse: (JSON) -> Result<T, Failure>
    ) throws(WorldSnapshot.Refusal) -> T {
        guard let value = record.object[key] else { return none }
        switch parse(value) {
        case .success(let read): return read
        case .failure(let refusal): throw record.wrong(key, "\(what) (\(refusal))")
        }
    }

    static func saved(_ device: Device) -> JSONObject {
        let saved = device.saved
        let tray: [JSON] = saved.tray.compactMap { entry in
            let content: JSON
            switch entry.content {
            case .ios(let userInfo): content = .object(JSONObject([("ios", .object(userInfo))]))
            case .channel(let event): content = .object(JSONObject([("channel", .object(event))]))
            case .android: return nil
            }
            var saved = JSONObject([
                ("id", .string(entry.id)), ("title", entry.title.map(JSON.string) ?? .null),
                ("body", entry.body.map(JSON.string) ?? .null),
                ("collapse_key", entry.collapseKey.map(JSON.string) ?? .null), ("content", content),
            ])
            if !entry.buttons.isEmpty { saved["actions"] = .array(entry.buttons.map(\.action.json)) }
            if let presented = entry.presented { saved["presented"] = .string(presented.rawValue) }
            return .object(saved)
        }
        var object = JSONObject([
            ("id", .string(device.id)), ("platform", .string(device.platform.rawValue)),
            ("apns_environment", .string(device.options.apnsEnvironment.rawValue)),
            ("fcm_project", .string(device.options.fcmProject)), ("apns_team", .string(device.options.apnsTeam)),
            ("android_api", .integer(Int64(device.options.androidAPI))),
            ("background_pushes_per_hour", .integer(Int64(device.options.backgroundPushesPerHour))),
            ("bundle", .string(saved.bundleID)), ("installed", .bool(saved.installed)),
            ("permission", .string(saved.permission.rawValue)), ("user_grants", .bool(saved.userGrants)),
            ("token", saved.token.map(JSON.string) ?? .null), ("fid", saved.installationID.map(JSON.string) ?? .null),
            ("topics", .array(saved.topics.map(JSON.string))),
            ("stored_token", saved.storedToken.map(JSON.string) ?? .null), ("tray", .array(tray)),
            ("next_tray_id", .integer(Int64(saved.nextTrayID))), ("next_message", .integer(Int64(saved.nextMessage))),
            ("online", .bool(saved.online)), ("offline_since", .integer(saved.offlineSince)),
            ("badge", .integer(Int64(saved.badge))), ("low_power", .bool(saved.lowPower)),
            ("doze_since", saved.dozeSince.map(JSON.integer) ?? .null),
        ])
        // The phone's later rules (PH-1, PH-6, PH-8), apart: one literal this long is too
        // much for the type checker.
        let categories: JSON = .array(saved.categories.map(\.json))
        let channels: JSON = .array(saved.notificationChannels.map(\.json))
        let capabilities: JSON = .array(device.options.capabilities.map(JSON.string))
        for (key, value) in [
            ("categories", categories), ("focus", JSON.bool(saved.focus)), ("capabilities", capabilities),
            ("resources", device.options.resources.json), ("notification_channels", channels),
            ("channel_registrations", saved.channels.json),
        ] {
            object[key] = value
        }
        if let limit = device.options.trayLimit { object["tray_limit"] = .integer(Int64(limit)) }
        return object
    }

    /// Reads back what `saved(part)` wrote: the change that puts it in the world (after a
    /// reset), or why it does not read.
    func restoring(_ part: WorldPart, from saved: WorldSnapshot.Reader) throws(WorldSnapshot.Refusal) -> () -> Void {
        switch part {
        case .devices:
            let oldBroker = try saved.optionalString("world_broker")
            var tokens: [(key: String, installation: Bool, entry: TokenRegistry.Entry)] = []
            for record in try saved.objects("tokens") {
                let installation = record.object["fid"] != nil
                let entry = TokenRegistry.Entry(
                    deviceID: try record.string("device"), platform: try record.value("platform", PushPlatform.self),
                    bundleID: try record.string("bundle"),
                    environment: try record.value("environment", APNsEnvironment.self),
                    project: try record.string("project"),
                    team: try record.string("team"), retiredAt: try record.optionalInteger("retired_at"))
                tokens.append((try record.string(installation ? "fid" : "token"), installation, entry))
            }
            var made: [(id: String, platform: PushPlatform, options: DeviceOptions, saved: Device.Saved)] = []
            for device in try saved.objects("list") {
                let id = try device.string("id")
                guard Self.deviceNumber(id) != nil, !made.contains(where: { $0.id == id }) else {
                    throw device.wrong("id", "a device id d<n> given once")
                }
                var tray: [TrayEntry] = []
                for entry in try device.objects("tray") {
                    let content: TrayEntry.Content
                    if let userInfo = try entry.object("content")?.object("ios") {
                        content = .ios(userInfo: userInfo.object)
                    } else if let event = try entry.object("content")?.object("channel") {
                        content = .channel(event: event.object)
                    } else {
                        throw entry.wrong("content", #"{"ios": the payload} or {"channel": the event}"#)
                    }
                    let actions = try Self.read(entry, "actions", as: "actions as a category has them", none: []) {
                        NotificationCategory.actions($0, of: "saved")
                    }
                    tray.append(
                        TrayEntry(
                            id: try entry.string("id"), title: try entry.optionalString("title"),
                            body: try entry.optionalString("body"),
                            collapseKey: try entry.optionalString("collapse_key"),
                            content: content, buttons: actions.map { TrayEntry.Button(action: $0) },
                            presented: entry.object["presented"] == nil
                                ? nil : try entry.value("presented", TrayEntry.Presentation.self)))
                }
                let options = DeviceOptions(
                    apnsEnvironment: try device.value("apns_environment", APNsEnvironment.self, default: .production),
                    fcmProject: try device.optionalString("fcm_project") ?? DeviceOptions().fcmProject,
                    apnsTeam: try device.optionalString("apns_team") ?? DeviceOptions().apnsTeam,
                    androidAPI: Int(try device.integer("android_api", default: Int64(DeviceOptions().androidAPI))),
                    backgroundPushesPerHour: Int(
                        try device.integer(
                            "background_pushes_per_hour", default: Int64(DeviceOptions().backgroundPushesPerHour))),
                    capabilities: try Self.read(device, "capabilities", as: "an app's capabilities", none: []) {
                        DeviceOptions.capabilities($0)
                    },
                    resources: try Self.read(device, "resources", as: "an app's resources", none: AppResources()) {
                        AppResources.parse($0)
                    },
                    trayLimit: try Self.read(
                        device, "tray_limit",
                        as: "a whole number from \(TrayLimit.counts.lowerBound) to \(TrayLimit.counts.upperBound)",
                        none: nil
                    ) { DeviceOptions.trayLimit($0).map(Optional.some) })
                let state = Device.Saved(
                    installed: try device.bool("installed"), bundleID: try device.string("bundle"),
                    permission: try device.value("permission", PushAuthorization.self, default: .undetermined),
                    userGrants: object(device, "user_grants") ?? true, token: try device.optionalString("token"),
                    installationID: try device.optionalString("fid"), topics: try device.strings("topics"),
                    storedToken: try device.optionalString("stored_token"), tray: tray,
                    nextTrayID: Int(try device.integer("next_tray_id", default: 1)),
                    nextMessage: Int(try device.integer("next_message", default: 1)),
                    online: object(device, "online") ?? true,
                    offlineSince: try device.integer("offline_since", default: 0),
                    badge: Int(try device.integer("badge", default: 0)), lowPower: object(device, "low_power") ?? false,
                    dozeSince: try device.optionalInteger("doze_since"),
                    categories: try Self.read(
                        device, "categories", as: "categories as the categories op takes them", none: []
                    ) { NotificationCategory.parse(json: $0) },
                    focus: object(device, "focus") ?? false,
                    notificationChannels: try device.objects("notification_channels").map {
                        channel throws(WorldSnapshot.Refusal) in
                        NotificationChannelList.Channel(
                            id: try channel.string("id"), name: try channel.string("name"),
                            enabled: try channel.bool("enabled"))
                    },
                    channels: try Self.read(device, "channel_registrations", as: "registrations", none: SavedChannels())
                    {
                        SavedChannels.parse($0, follow: { following($0, savedBroker: oldBroker) })
                    })
                made.append((id, try device.value("platform", PushPlatform.self), options, state))
            }
            let last = Int(try saved.integer("last_number", default: 0))
            return { [self] in
                for (key, installation, entry) in tokens {
                    if installation {
                        registry.restore(installationID: key, entry)
                    } else {
                        registry.restore(token: key, entry)
                    }
                }
                for device in made {
                    adopt(device.id, platform: device.platform, options: device.options, saved: device.saved)
                }
                continueNumbering(after: last)
            }
        case .chaos:
            let rules: ChaosRules
            do {
                rules = try chaos.restored(from: saved.object)
            } catch {
                throw WorldSnapshot.Refusal(description: "the state document's \(error.message)")
            }
            return { [self] in chaos = rules }
        case .clock:
            let advanced = try saved.integer("advanced_ms", default: 0)
            guard advanced >= 0 else { throw saved.wrong("advanced_ms", "0 or more") }
            return { [self] in advance(by: advanced) }
        case .credentials, .appwrite, .log: return {}
        }
    }

    /// A boolean member, or nil when it is absent or not one.
    private func object(_ reader: WorldSnapshot.Reader, _ key: String) -> Bool? {
        if case .bool(let value)? = reader.object[key] { return value }
        return nil
    }
}
