import CXHost
import Credentials
import Foundation
import OrderedJSON
import PushPlugin
import PushServices
import SimulatedDevice

/// `cxshell serve`'s protocol (`../shared/spec/shell-protocol.md`): one request line
/// in, its output lines out (the deliveries it caused, then its reply). The shell
/// plays the app cores and the outside world over a world of devices, each playing
/// its OS; APNs and FCM find a device by its token, through the world's registry.
///
/// A request is handled completely, and the app's host is idle, before `handle`
/// returns. A request the shell cannot understand, or that does not fit the device,
/// gets `ok: false` with a sentence and changes nothing.
public final class Session {
    /// The longest request line accepted.
    public static let maxLineBytes = 1 << 20
    static let ops = [
        "device", "devices", "permission", "launch", "background", "foreground", "kill", "force_stop", "call",
        "notify", "subscribe", "unsubscribe", "apns", "simctl", "fcm", "tap", "tray", "rotate_token", "state",
        "uninstall", "install", "fcm_topic", "apns_key", "google_key",
    ]

    let endpoint = CoreEndpoint()
    /// Every token the world's devices were issued: how a push finds its device.
    let registry = TokenRegistry()
    /// What the world's channels share: MQTT arrivals, the front door's address.
    public let hub = ChannelHub()
    private(set) var devices: [Device] = []
    private(set) var devicesByID: [String: Device] = [:]
    private var current: Device?
    /// The number in the last device id given (`d7`): ids are never reused.
    private var lastDeviceNumber = 0
    /// When the session started (monotonic milliseconds), for the inspector's uptime.
    let startedAt = Session.monotonicMilliseconds()
    /// The devices a request touched: their hosts are waited for before its reply.
    var touched: [Device] = []
    /// The APNs signing keys registered with `apns_key` (the front door checks them).
    var apnsKeys = APNsProviderTokens()
    /// Google service accounts' public keys and projects, by client email
    /// (`google_key`), and the access tokens the OAuth endpoint issued.
    var googleKeys: [String: (key: PublicKey, project: String)] = [:]
    var accessTokens = AccessTokens()
    /// Webhook ids accepted per recipient, with their timestamps (s), for XM-4.
    var webhookIDs: [String: [String: Int64]] = [:]
    /// PubNub's push registrations, and the last timetoken it gave.
    var pubnubDevices = PubNubRegistrations()
    var lastTimetoken: Int64 = 0
    let clock: () -> Int64
    /// Every request from every door, with its deliveries (inspector.md, "The log").
    public internal(set) var log: RequestLog
    /// Who may reach the inspector on the front door's port; nil: it is off.
    public var inspector: InspectorSettings?
    /// Long polls and event streams waiting on the log.
    var watchers = LogWatchers()
    /// Durations and deliveries for `/metrics`, and when the request being handled began.
    var metrics = RequestMetrics()
    var requestStarted: UInt64 = 0
    /// The test CA's certificate (PEM) clients trust, when the front door listens.
    public var caPath: String?
    /// How many connections the front door has open (0 without one).
    public var connectionCount: @Sendable () -> Int = { 0 }

    /// `clock` gives milliseconds since 1970 (for retired tokens' timestamps and the
    /// log's times); `logMax` is how many log entries are kept.
    public init(
        clock: @escaping () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }, logMax: Int = 10_000
    ) {
        self.clock = clock
        self.log = RequestLog(max: logMax)
    }

    /// Handles one request line; returns the lines to write, deliveries first. A line
    /// of JSON white space only is not a request: it gets no line at all.
    public func handle(line: some Collection<UInt8>) -> [String] {
        guard let (reply, deliveries) = run(line: line, source: "line") else { return [] }
        return deliveries + [reply.compactText]
    }

    /// Runs one request line from `source` (the log's name for the door it came by) and
    /// logs it: its reply and deliveries; nil for a line of white space only.
    func run(line: some Collection<UInt8>, source: String) -> (reply: JSONObject, deliveries: [String])? {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) { return nil }
        requestStarted = Self.monotonicNanoseconds()
        let (reply, deliveries, op) = execute(line: line)
        appendLog(source: source, status: reply["ok"] == true ? 200 : 400, deliveries: deliveries) {
            var record = RequestLog.Record { $0.member("op", op) }
            record.body = Array(line)
            record.devices = Self.devices(touched: touched, reply: reply)
            record.error = reply["error"]?.stringValue
            record.reason = reply["reason"]?.stringValue
            record.effect = reply["effect"]?.stringValue
            record.deliveries = deliveries
            return record
        }
        return (reply, deliveries)
    }

    /// Counts a request (its duration since `requestStarted`, its deliveries), appends its
    /// log entry, and tells whoever waits on the log.
    func appendLog(source: String, status: Int, deliveries: [String], _ record: () -> RequestLog.Record) {
        let seconds = Double(Self.monotonicNanoseconds() &- requestStarted) / 1e9
        metrics.observe(source: source, seconds: seconds, deliveries: deliveries)
        let seq = log.append(source: source, status: status, at: clock(), record)
        guard !watchers.isEmpty, let entry = log.entry(seq) else { return }
        watchers.appended(entry, in: log)
    }

    /// Runs one request line without logging it: its reply, deliveries and op.
    func execute(line: some Collection<UInt8>) -> (reply: JSONObject, deliveries: [String], op: String?) {
        var reply: JSONObject
        var op: String?
        touched.removeAll(keepingCapacity: true)
        do {
            let request = try Request(line: line, maxBytes: Self.maxLineBytes)
            op = request.op
            reply = JSONObject([("reply", request.id), ("ok", true)])
            do {
                try perform(request, into: &reply)
            } catch let refusal as DeviceRefusal {
                reply = Self.error(request.id, refusal.message)
            }
        } catch let invalid as Request.Invalid {
            reply = Self.error(invalid.id, invalid.message)
        } catch {
            reply = Self.error(nil, "\(error)")
        }
        if let problem = waitForTouchedHosts() { reply = Self.error(reply["reply"] ?? nil, problem) }
        return (reply, endpoint.takeLines(), op)
    }

    /// The devices a request reached: those it touched, else the one its reply names.
    static func devices(touched: [Device], reply: JSONObject) -> [String] {
        var ids: [String] = []
        for device in touched where !ids.contains(device.id) { ids.append(device.id) }
        if ids.isEmpty, let id = reply["device"]?.stringValue { ids.append(id) }
        return ids
    }

    /// Waits until every host the request touched is idle; a sentence when it cannot.
    func waitForTouchedHosts() -> String? {
        do {
            for device in touched { try device.waitUntilIdle() }
            return nil
        } catch {
            // Only a session driven from its own host's thread gets here.
            return "\(error)"
        }
    }

    /// Handles the channel messages that arrived on their own time (at most `limit`),
    /// oldest first: each writes its deliveries, then one report line (channels.md).
    public func handleArrivals(limit: Int = .max) -> [String] {
        var lines: [String] = []
        for arrival in hub.takeArrivals(limit: limit) {
            // Devices are never removed from the world: an arrival always finds its own.
            guard let device = devicesByID[arrival.deviceID] else { continue }
            touched.removeAll(keepingCapacity: true)
            touched.append(device)
            requestStarted = Self.monotonicNanoseconds()
            var report = JSONObject([
                ("network", "mqtt"), ("device", .string(arrival.deviceID)), ("topic", .string(arrival.message.topic)),
            ])
            let (messageID, outcome) = device.receive(mqtt: arrival)
            report["messageId"] = messageID.map(JSON.string) ?? .null
            report["qos"] = .integer(Int64(arrival.message.qos))
            report["effect"] = .string(outcome.effect)
            if let trayID = outcome.trayID { report["tray_id"] = .string(trayID) }
            if let problem = waitForTouchedHosts() { report["effect"] = .string(problem) }
            let deliveries = endpoint.takeLines()
            appendLog(source: "mqtt", status: 200, deliveries: deliveries) {
                let topic = arrival.message.topic
                var record = RequestLog.Record { $0.member("topic", topic) }
                record.body = arrival.message.payload
                record.devices = [arrival.deviceID]
                record.effect = report["effect"]?.stringValue
                record.deliveries = deliveries
                return record
            }
            lines += deliveries
            lines.append(report.compactText)
        }
        return lines
    }

    /// Takes a device out of the world: as `uninstall` (its tokens retire), then it is
    /// gone; false when there is no such device.
    func remove(device id: String) -> Bool {
        guard let device = devicesByID.removeValue(forKey: id) else { return false }
        if device.isInstalled { try? device.uninstall(nowMilliseconds: clock()) }
        device.powerOff()
        endpoint.processEnded(on: id)
        endpoint.forget(id)
        devices.removeAll { $0.id == id }
        if current === device { current = nil }
        return true
    }

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    static func monotonicMilliseconds() -> Int64 { Int64(monotonicNanoseconds() / 1_000_000) }

    /// The current device's push token, if it has one.
    public var deviceToken: String? { current?.token }

    /// Handles one request given as text.
    public func handle(_ text: String) -> [String] { handle(line: Array(text.utf8)) }

    private static func error(_ id: JSON, _ message: String) -> JSONObject {
        JSONObject([("reply", id), ("ok", false), ("error", .string(message))])
    }

    private func perform(_ request: Request, into reply: inout JSONObject) throws {
        if request.op == "device" { return try makeDevice(request, into: &reply) }
        guard Self.ops.contains(request.op) else {
            throw request.invalid("unknown op '\(request.op)'; the ops are: \(Self.ops.joined(separator: ", "))")
        }
        if request.op == "devices" {
            reply["devices"] = .array(devices.map(Self.summary))
            return
        }
        if request.op == "apns_key" {
            let keyID = try request.string("key_id")
            let team = try request.string("team")
            let pem = try request.string("public_key")
            guard let key = PublicKey(pem: pem), key.kind == .ecP256 else {
                throw request.invalid(
                    "\"public_key\" must be an EC P-256 public key in PEM (-----BEGIN PUBLIC KEY-----)")
            }
            apnsKeys.register(APNsProviderTokens.Key(keyID: keyID, team: team, publicKey: key))
            reply["keys"] = .array(apnsKeys.keys.keys.sorted().map(JSON.string))
            return
        }
        if request.op == "google_key" {
            let email = try request.string("client_email")
            let pem = try request.string("public_key")
            guard let key = PublicKey(pem: pem), key.kind == .rsa else {
                throw request.invalid("\"public_key\" must be an RSA public key in PEM (-----BEGIN PUBLIC KEY-----)")
            }
            guard let project = try request.optionalString("project") ?? Self.serviceAccountProject(email) else {
                throw request.invalid(
                    "\"project\" is needed: '\(email)' is not <name>@<project>.iam.gserviceaccount.com")
            }
            googleKeys[email] = (key, project)
            reply["keys"] = .array(googleKeys.keys.sorted().map(JSON.string))
            return
        }
        let device = try target(of: request)
        touched.append(device)
        switch request.op {
        case "permission":
            let answer = try request.string("answer")
            guard answer == "grant" || answer == "deny" else {
                throw request.invalid("\"answer\" must be grant or deny, not '\(answer)'")
            }
            device.setPermission(grant: answer == "grant")
            reply["permission"] = .string(device.authorization.rawValue)
        case "launch":
            reply["state"] = .string(try device.launch().rawValue)
        case "background":
            reply["state"] = .string(try device.moveToBackground().rawValue)
        case "foreground":
            reply["state"] = .string(try device.moveToForeground().rawValue)
        case "kill":
            reply["state"] = .string(try device.kill().rawValue)
            endpoint.processEnded(on: device.id)
        case "force_stop":
            reply["state"] = .string(try device.forceStop().rawValue)
            endpoint.processEnded(on: device.id)
        case "uninstall":
            try device.uninstall(nowMilliseconds: clock())
            endpoint.processEnded(on: device.id)
        case "install":
            let bundle = try request.optionalString("bundle")
            if bundle == "" { throw request.invalid("\"bundle\" must not be empty") }
            reply["bundle"] = .string(try device.install(bundleID: bundle))
        case "fcm_topic":
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
            reply["topics"] = .array(try device.setTopic(topic, subscribed: subscribed).map(JSON.string))
        case "call", "notify":
            let host = try runningHost(device)
            let plugin = try request.string("plugin")
            let method = try request.string("method")
            let input = try request.optionalString("input") ?? ""
            if request.op == "notify" {
                try host.notify(plugin, method, input: input)
                return
            }
            let id = try host.call(plugin, method, input: input)
            try host.waitUntilIdle()
            guard let answer = endpoint.takeAnswer(id, from: device.id) else {
                throw request.invalid(
                    "plugin '\(plugin)' has not answered '\(method)' yet; the shell waits only until the host is idle")
            }
            reply["ok"] = .bool(answer.ok)
            reply["output"] = .string(answer.output)
        case "subscribe":
            let host = try runningHost(device)
            let key = try request.string("key")
            let plugin = try request.string("plugin")
            let stream = try request.string("stream")
            let input = try request.optionalString("input") ?? ""
            try host.subscribe(key: key, plugin: plugin, stream: stream, input: input)
        case "unsubscribe":
            let host = try runningHost(device)
            let key = try request.string("key")
            host.unsubscribe(key: key)
        case "apns":
            try sendAPNs(request, defaultDevice: device, into: &reply)
        case "simctl":
            try requirePlatform(.ios, device, request)
            let file = try request.body("file")
            let simctl = SimctlPayload(
                file: file.bytes, parsedFile: file.value, bundleArgument: try request.optionalString("bundle"))
            switch simctl.validate(installedBundle: device.isInstalled ? device.bundleID : "(no app)") {
            case .failure(let rejection):
                reply = Self.rejection(request.id, rejection)
            case .success(let accepted):
                reply["apns-id"] = .string(device.makeAPNsID())
                record(device.receive(apnsPayload: accepted.payload, collapseID: nil), in: &reply)
            }
        case "fcm":
            try sendFCM(request, defaultDevice: device, into: &reply)
        case "tap":
            reply["id"] = .string(try device.tap(try request.string("which")))
        case "tray":
            reply["entries"] = .array(
                device.trayEntries.map { entry in
                    [
                        ("id", .string(entry.id)), ("title", entry.title.map(JSON.string) ?? .null),
                        ("body", entry.body.map(JSON.string) ?? .null),
                    ].jsonObject
                })
        case "rotate_token":
            reply["token"] = .string(try device.rotateToken(nowMilliseconds: clock()))
        default:  // "state"
            for (key, value) in Self.state(of: device) { reply[key] = value }
        }
    }

    /// A device's `state` reply, without `reply` and `ok`.
    static func state(of device: Device) -> JSONObject {
        var state = JSONObject()
        let buffer = device.buffer
        state["state"] = .string(device.appState.rawValue)
        state["platform"] = .string(device.platform.rawValue)
        state["permission"] = .string(device.authorization.rawValue)
        state["token"] = device.token.map(JSON.string) ?? .null
        state["subscriptions"] = .array((device.host?.subscribedKeys ?? []).map(JSON.string))
        state["buffered"] = .integer(Int64(buffer.buffered))
        state["dropped_taps"] = .integer(Int64(buffer.droppedTaps))
        state["device"] = .string(device.id)
        state["installed"] = .bool(device.isInstalled)
        if device.platform == .android {
            state["fid"] = device.installationID.map(JSON.string) ?? .null
            state["topics"] = .array(device.topics.map(JSON.string))
        }
        state["channels"] = .array(device.channelSummaries.map(JSON.object))
        return state
    }

    /// The device a request names with `"device"`, or the current one.
    private func target(of request: Request) throws -> Device {
        if let name = try request.optionalString("device") {
            guard let device = devicesByID[name] else {
                let known = devices.isEmpty ? "none yet" : devices.map(\.id).joined(separator: ", ")
                throw request.invalid("there is no device '\(name)'; the devices are: \(known)")
            }
            return device
        }
        guard let current else {
            throw request.invalid(#"there is no device yet: start with {"op":"device","platform":"ios"}"#)
        }
        return current
    }

    private func makeDevice(_ request: Request, into reply: inout JSONObject) throws {
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
        lastDeviceNumber += 1
        let id = "d\(lastDeviceNumber)"
        let device = Device(
            id: id, platform: platform, bundleID: bundle, options: options, registry: registry, hub: hub,
            core: endpoint.receiver(for: id))
        devices.append(device)
        devicesByID[id] = device
        current = device
        reply["device"] = .string(id)
        reply["platform"] = .string(platform.rawValue)
        reply["bundle"] = .string(bundle)
    }

    private static func summary(_ device: Device) -> JSON {
        [
            ("device", .string(device.id)), ("platform", .string(device.platform.rawValue)),
            ("bundle", .string(device.bundleID)), ("state", .string(device.appState.rawValue)),
            ("token", device.token.map(JSON.string) ?? .null),
        ].jsonObject
    }

    // MARK: Services

    /// An APNs request finds its device by token, as APNs does: `token` when given,
    /// else the named (or current) device's.
    private func sendAPNs(_ request: Request, defaultDevice device: Device, into reply: inout JSONObject) throws {
        let headers = try request.headers()
        var token = try request.optionalString("token")
        if token == nil && headers[":path"] == nil {
            try requirePlatform(.ios, device, request)
            guard let own = device.token else {
                throw DeviceRefusal(
                    "the app on \(device.id) has no APNs token yet (it gets one when it registers); pass \"token\" to send to one anyway"
                )
            }
            token = own
        }
        var environment = APNsEnvironment.production
        if let name = try request.optionalString("environment") {
            guard let value = APNsEnvironment(rawValue: name) else {
                throw request.invalid("\"environment\" must be production or development, not '\(name)'")
            }
            environment = value
        }
        let body = try request.body("body")
        let apns = APNsRequest(
            headers: headers, body: body.bytes, parsedBody: body.value, token: token, environment: environment)
        switch apns.validate(tokens: registry.apnsRecord) {
        case .failure(let rejection):
            reply = Self.rejection(request.id, rejection)
        case .success(let notification):
            let (target, outcome) = try deliver(notification)
            reply["apns-id"] = .string(notification.apnsID ?? target.makeAPNsID())
            reply["device"] = .string(target.id)
            record(outcome, in: &reply)
        }
    }

    /// Hands a push APNs accepted to the device that holds its token (or to the system
    /// handler of its push type), as iOS would.
    func deliver(_ notification: APNsNotification) throws -> (Device, PushOutcome) {
        guard let target = registry.entry(token: notification.token).flatMap({ devicesByID[$0.deviceID] }) else {
            throw DeviceRefusal("APNs accepted a token no device holds")  // the registry and the world agree
        }
        touched.append(target)
        if let handler = notification.systemHandler {
            return (
                target,
                PushOutcome(
                    effect:
                        "delivered to \(handler) on \(target.id): the push plugin does not handle it, so no event and nothing in the tray"
                )
            )
        }
        return (target, target.receive(apnsPayload: notification.payload, collapseID: notification.collapseID))
    }

    /// An FCM request: a token or installation id finds its device; a topic or a
    /// condition reaches every Android device of the project whose token matches,
    /// each as a push of its own, in the world's order.
    private func sendFCM(_ request: Request, defaultDevice device: Device, into reply: inout JSONObject) throws {
        let body = try request.body("body")
        let project = try request.optionalString("project")
        if project == "" { throw request.invalid("\"project\" must not be empty") }
        // A topic or a condition goes to the world; its project is `project`, else the
        // request's device's when that is an Android app, else the default project.
        let defaultProject = device.platform == .android ? device.options.fcmProject : DeviceOptions().fcmProject
        switch sendFCM(body: body.bytes, parsed: body.value, project: project, defaultProject: defaultProject) {
        case .failure(let error):
            reply = Self.fcmError(request.id, error)
        case .success(let sent):
            for (key, value) in sent { reply[key] = value }
        }
    }

    /// Validates, routes and delivers one `messages:send` body, as FCM does; one
    /// function for the line protocol and the network alike. What FCM did: `name`,
    /// `device` or `devices`, `effect`, `tray_id`.
    func sendFCM(
        body: [UInt8], parsed: JSON?, project: String?, defaultProject: String
    ) -> Result<JSONObject, FCMError> {
        let message: FCMMessage
        switch FCMRequest(body: body, parsedBody: parsed).validate() {
        case .failure(let error): return .failure(error)
        case .success(let valid): message = valid
        }
        let sentIn: String
        switch FCMRequest.route(
            message.target, project: project, defaultProject: defaultProject, tokens: registry.fcmRecord)
        {
        case .failure(let error): return .failure(error)
        case .success(let value): sentIn = value
        }
        var sent = JSONObject()
        let recipients = recipients(of: message.target, in: sentIn)
        let messageID = (recipients.first ?? current ?? devices.first)?.makeFCMMessageID() ?? "0:0%world"
        sent["name"] = .string("projects/\(sentIn)/messages/\(messageID)")
        if message.validateOnly {
            sent["effect"] = .string("validated only (validate_only is true): nothing was sent")
            return .success(sent)
        }
        switch message.target {
        case .token, .fid:
            guard let target = recipients.first else { return .success(sent) }
            touched.append(target)
            sent["device"] = .string(target.id)
            let outcome = target.receive(fcm: message, messageID: messageID)
            sent["effect"] = .string(outcome.effect)
            if let trayID = outcome.trayID { sent["tray_id"] = .string(trayID) }
        case .topic, .condition:
            var reached: [JSON] = []
            for target in recipients {
                let outcome = target.receive(fcm: message, messageID: messageID)
                // One device's deliveries are all written before the next one's.
                try? target.waitUntilIdle()
                var entry = JSONObject([("device", .string(target.id)), ("effect", .string(outcome.effect))])
                if let trayID = outcome.trayID { entry["tray_id"] = .string(trayID) }
                reached.append(.object(entry))
            }
            let what: String =
                if case .topic(let topic) = message.target { "topic '\(topic)'" } else { "the condition" }
            sent["effect"] = .string(
                "sent to \(what) in project \(sentIn): reached \(reached.count) device\(reached.count == 1 ? "" : "s")")
            sent["devices"] = .array(reached)
        }
        return .success(sent)
    }

    /// The devices an accepted FCM message is for.
    private func recipients(of target: FCMTarget, in project: String) -> [Device] {
        switch target {
        case .token(let token):
            return registry.entry(token: token).flatMap { devicesByID[$0.deviceID] }.map { [$0] } ?? []
        case .fid(let fid):
            return registry.entry(installationID: fid).flatMap { devicesByID[$0.deviceID] }.map { [$0] } ?? []
        case .topic(let topic):
            return devices.filter { Self.isFCMApp($0, in: project) && $0.topics.contains(topic) }
        case .condition(let condition):
            return devices.filter { Self.isFCMApp($0, in: project) && condition.matches(Set($0.topics)) }
        }
    }

    private static func isFCMApp(_ device: Device, in project: String) -> Bool {
        device.platform == .android && device.isInstalled && device.token != nil
            && device.options.fcmProject == project
    }

    private func runningHost(_ device: Device) throws -> PluginHost {
        guard let host = device.host else {
            throw DeviceRefusal("the app is not running: launch it first (the core lives in the app's process)")
        }
        return host
    }

    private func requirePlatform(_ platform: PushPlatform, _ device: Device, _ request: Request) throws {
        guard device.platform == platform else {
            let service = platform == .ios ? "an iOS" : "an Android"
            throw DeviceRefusal("\(request.op) sends to \(service) device; this device is \(device.platform.rawValue)")
        }
    }

    private func record(_ outcome: PushOutcome, in reply: inout JSONObject) {
        reply["effect"] = .string(outcome.effect)
        if let trayID = outcome.trayID { reply["tray_id"] = .string(trayID) }
    }

    private static func fcmError(_ id: JSON, _ error: FCMError) -> JSONObject {
        JSONObject([("reply", id), ("ok", false), ("error", .object(fcmEnvelope(error)))])
    }

    /// Google's error envelope's `error` member.
    static func fcmEnvelope(_ error: FCMError) -> JSONObject {
        var envelope = JSONObject([
            ("code", .integer(Int64(error.code))), ("status", .string(error.status)),
            ("message", .string(error.message)),
        ])
        if let code = error.errorCode {
            envelope["details"] = [
                [("@type", "type.googleapis.com/google.firebase.fcm.v1.FcmError"), ("errorCode", .string(code))]
                    .jsonObject
            ]
        }
        return envelope
    }

    private static func rejection(_ id: JSON, _ rejection: APNsRejection) -> JSONObject {
        var reply = JSONObject([
            ("reply", id), ("ok", false), ("status", .integer(Int64(rejection.status))),
            ("reason", .string(rejection.reason)),
        ])
        if let timestamp = rejection.timestamp { reply["timestamp"] = .integer(timestamp) }
        reply["detail"] = .string(rejection.detail)
        return reply
    }
}

extension Array where Element == (String, JSON) {
    var jsonObject: JSON { .object(JSONObject(self)) }
}
