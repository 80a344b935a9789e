import OrderedJSON
import PushPlugin
import PushServices
import SimulatedDevice

/// The ops that make devices and play their user and OS: the device's own rules
/// (`Device`) decide; these read the request and write the reply.
extension LineProtocol {
    func makeDevice(_ request: Request, _ reply: inout JSONObject) throws {
        let name = try request.string("platform")
        guard let platform = PushPlatform(rawValue: name) else {
            throw request.invalid("\"platform\" must be ios, android or web, not '\(name)'")
        }
        let bundle = try request.optionalString("bundle") ?? "com.example.app"
        guard !bundle.isEmpty else { throw request.invalid("\"bundle\" must not be empty") }
        var options = DeviceOptions()
        if let environment = try request.optionalString("apns_environment") {
            guard let value = APNsEnvironment(rawValue: environment) else {
                throw request.invalid("\"apns_environment\" must be production or development, not '\(environment)'")
            }
            options.apnsEnvironment = value
        }
        if let project = try request.optionalString("fcm_project") {
            guard !project.isEmpty else { throw request.invalid("\"fcm_project\" must not be empty") }
            options.fcmProject = project
        }
        if let team = try request.optionalString("apns_team") {
            guard !team.isEmpty else { throw request.invalid("\"apns_team\" must not be empty") }
            options.apnsTeam = team
        }
        if let value = request.fields["android_api"] {
            guard platform == .android else {
                throw request.invalid(
                    "\"android_api\" is an Android phone's API level; a \(platform.rawValue) device has none")
            }
            guard let level = value.integerValue.map(Int.init), DeviceOptions.androidAPIs.contains(level) else {
                throw request.invalid(
                    "\"android_api\" must be an API level from \(DeviceOptions.androidAPIs.lowerBound) to \(DeviceOptions.androidAPIs.upperBound), not \(value.compactText)"
                )
            }
            options.androidAPI = level
        }
        if let value = request.fields["background_pushes_per_hour"] {
            guard platform == .ios else {
                throw request.invalid(
                    "\"background_pushes_per_hour\" is iOS's background push budget; a \(platform.rawValue) device has none"
                )
            }
            guard let count = value.integerValue.map(Int.init), (1...100).contains(count) else {
                throw request.invalid(
                    "\"background_pushes_per_hour\" must be a whole number from 1 to 100, not \(value.compactText)")
            }
            options.backgroundPushesPerHour = count
        }
        if let value = request.fields["resources"] {
            guard platform == .android else {
                throw request.invalid(
                    "\"resources\" are an Android app's channel name, icons and FCM meta-data; a \(platform.rawValue) device has none"
                )
            }
            switch AppResources.parse(value) {
            case .success(let resources): options.resources = resources
            case .failure(let refusal): throw request.invalid(refusal.message)
            }
        }
        if let value = request.fields["tray_limit"] {
            switch DeviceOptions.trayLimit(value) {
            case .success(let count): options.trayLimit = count
            case .failure(let refusal): throw request.invalid(refusal.message)
            }
        }
        if let value = request.fields["capabilities"] {
            guard platform == .ios else {
                throw request.invalid(
                    "\"capabilities\" are an iOS app's Time Sensitive and Critical Alerts; a \(platform.rawValue) device has none"
                )
            }
            switch DeviceOptions.capabilities(value) {
            case .success(let capabilities): options.capabilities = capabilities
            case .failure(let refusal): throw request.invalid(refusal.message)
            }
        }
        let device = world.makeDevice(platform: platform, bundle: bundle, options: options)
        reply["device"] = .string(device.id)
        reply["platform"] = .string(platform.rawValue)
        reply["bundle"] = .string(bundle)
    }

    /// `{"op":"restore","from":"d1"}`: a new phone restored from d1's backup (PH-13): the
    /// same platform, app (installed or not) and permission, and new tokens, since APNs and
    /// FCM tokens are not carried over; the app is not running; d1 is unchanged.
    func restore(_ request: Request, _ reply: inout JSONObject) throws {
        let from = try request.string("from")
        guard let old = world.devicesByID[from] else {
            throw request.invalid(
                "there is no device '\(from)' to restore from; \(Self.knownDevices(world.devices.lazy.map(\.id)))")
        }
        let device = world.makeDevice(platform: old.platform, bundle: old.bundleID, options: old.options)
        device.restorePermission(from: old)
        if !old.isInstalled { try device.uninstall(nowMilliseconds: world.clock()) }
        reply["device"] = .string(device.id)
        reply["from"] = .string(old.id)
        reply["token"] = device.token.map(JSON.string) ?? .null
        reply["effect"] = .string(
            "\(device.id) is a new phone restored from \(old.id)'s backup: "
                + (old.isInstalled ? "the app is installed, not running, " : "the app is not installed, ")
                + "with \(old.id)'s permission and new tokens (a backup carries none); \(old.id) is unchanged (PH-13)")
    }

    func listDevices(_ request: Request, _ reply: inout JSONObject) throws {
        reply["devices"] = .array(
            world.devices.map { device in
                [
                    ("device", .string(device.id)), ("platform", .string(device.platform.rawValue)),
                    ("bundle", .string(device.bundleID)), ("state", .string(device.appState.rawValue)),
                    ("token", device.token.map(JSON.string) ?? .null),
                ].jsonObject
            })
    }

    func permission(_ request: Request, _ reply: inout JSONObject) throws {
        let device = try target(request)
        let answer = try request.string("answer")
        guard answer == "grant" || answer == "deny" else {
            throw request.invalid("\"answer\" must be grant or deny, not '\(answer)'")
        }
        device.setPermission(grant: answer == "grant")
        reply["permission"] = .string(device.authorization.rawValue)
    }

    func launch(_ request: Request, _ reply: inout JSONObject) throws {
        reply["state"] = .string(try target(request).launch().rawValue)
    }

    func background(_ request: Request, _ reply: inout JSONObject) throws {
        reply["state"] = .string(try target(request).moveToBackground().rawValue)
    }

    func foreground(_ request: Request, _ reply: inout JSONObject) throws {
        reply["state"] = .string(try target(request).moveToForeground().rawValue)
    }

    func kill(_ request: Request, _ reply: inout JSONObject) throws {
        let device = try target(request)
        reply["state"] = .string(try device.kill().rawValue)
        world.endpoint.processEnded(on: device.id)
    }

    func forceStop(_ request: Request, _ reply: inout JSONObject) throws {
        let device = try target(request)
        reply["state"] = .string(try device.forceStop().rawValue)
        world.endpoint.processEnded(on: device.id)
    }

    func uninstall(_ request: Request, _ reply: inout JSONObject) throws {
        let device = try target(request)
        world.forgetTopics(of: device)
        try device.uninstall(nowMilliseconds: world.clock())
        world.endpoint.processEnded(on: device.id)
    }

    func install(_ request: Request, _ reply: inout JSONObject) throws {
        let device = try target(request)
        let bundle = try request.optionalString("bundle")
        if bundle == "" { throw request.invalid("\"bundle\" must not be empty") }
        reply["bundle"] = .string(try device.install(bundleID: bundle))
    }

    func fcmTopic(_ request: Request, _ reply: inout JSONObject) throws {
        let device = try target(request)
        let topic = try request.string("topic")
        guard FCMRequest.isTopicName(topic) else {
            throw request.invalid("'\(topic)' is not a topic name (^[a-zA-Z0-9-_.~%]{1,900}$)")
        }
        var subscribed = true  // subscribeToTopic, unless the request says otherwise
        if let subscribe = request.fields["subscribe"] {
            guard case .bool(let value) = subscribe else {
                throw request.invalid("\"subscribe\" must be a boolean, not \(subscribe.typeName)")
            }
            subscribed = value
        }
        reply["topics"] = .array(try world.setTopic(topic, subscribed: subscribed, on: device).map(JSON.string))
    }

    /// `{"op":"dismiss","which":"t1"}` (or newest / oldest): the entry is swiped away (PH-4).
    func dismiss(_ request: Request, _ reply: inout JSONObject) throws {
        let device = try target(request)
        reply["id"] = .string(try device.dismiss(try request.string("which")))
        reply["effect"] = .string("dismissed: the entry left the tray; no event")
    }

    /// `{"op":"tap","which":"t1"}`, or one of the entry's buttons: `"action":"reply"`, with
    /// `"text"` for an input action (PH-3).
    func tap(_ request: Request, _ reply: inout JSONObject) throws {
        let device = try target(request)
        let action = try request.optionalString("action")
        let id = try device.tap(
            try request.string("which"), action: action, text: try request.optionalString("text"))
        reply["id"] = .string(id)
        guard let action else { return }
        reply["action"] = .string(action)
        reply["effect"] = .string(
            "pressed '\(action)' on \(id): the entry left the tray and the app is in the \(device.appState.rawValue); "
                + "its opened event carries \"mobiler_action\" (PH-3)")
    }

    /// `{"op":"tray"}`; with `"detail":true` each entry also says its channel and icon (PH-6).
    func tray(_ request: Request, _ reply: inout JSONObject) throws {
        let device = try target(request)
        reply["entries"] = .array(device.trayReport(detail: try request.optionalBool("detail") ?? false))
    }

    /// `{"op":"channel","channel":"mobiler_push","enabled":false}` (Android 8.0+, PH-6): the
    /// user turns one of the app's notification channels off or on.
    func notificationChannel(_ request: Request, _ reply: inout JSONObject) throws {
        let device = try target(request)
        let enabled = try request.bool("enabled")
        let channel = try device.setNotificationChannel(try request.string("channel"), enabled: enabled)
        reply["device"] = .string(device.id)
        reply["channel"] = channel.json
        reply["effect"] = .string(
            enabled
                ? "the channel '\(channel.id)' (\(channel.name)) is on: what is posted on it shows"
                : "the channel '\(channel.id)' (\(channel.name)) is off: what is posted on it is not shown; onMessageReceived and the foreground received event are unaffected"
        )
    }

    func rotateToken(_ request: Request, _ reply: inout JSONObject) throws {
        reply["token"] = .string(try target(request).rotateToken(nowMilliseconds: world.clock()))
    }

    func state(_ request: Request, _ reply: inout JSONObject) throws {
        for (key, value) in try target(request).stateReport { reply[key] = value }
    }
}
