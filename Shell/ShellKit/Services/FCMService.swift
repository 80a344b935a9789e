import Foundation
import HTTPMessage
import OrderedJSON
import PushServices
import SimulatedDevice

/// FCM HTTP v1 (`fcm.googleapis.com`): messages validated as Google does (`FCMRequest`),
/// routed by token, installation id, topic or condition, and delivered to the world's
/// Android apps. The access tokens it accepts are the OAuth service's.
final class FCMService {
    let world: World
    let oauth: OAuthService

    /// What FCM keeps for devices that are offline, by device id.
    private var stored: [String: OfflineQueue] = [:]
    /// What a dozing phone holds back (PH-9), by device id, in send order, and when the
    /// oldest of it was held (a window opened after that hands it over).
    private var dozeHeld: [String: [(message: FCMMessage, messageID: String)]] = [:]
    private var heldSince: [String: Int64] = [:]

    init(world: World, oauth: OAuthService) {
        self.world = world
        self.oauth = oauth
    }

    /// A message to a device: delivered when it is online (held while it dozes, PH-9),
    /// else kept as FCM keeps it.
    private func hand(_ message: FCMMessage, messageID: String, to device: Device) -> PushOutcome {
        let conditions = device.conditions
        if conditions.isOnline, let since = conditions.dozeSince, Self.effectivePriority(message) != "HIGH" {
            if dozeHeld[device.id]?.isEmpty ?? true { heldSince[device.id] = world.clock() }
            dozeHeld[device.id, default: []].append((message, messageID))
            let window = Self.nextMaintenanceWindow(dozeSince: since, after: world.clock())
            return PushOutcome(
                effect:
                    "held: \(device.id) is in Doze, and a normal-priority message waits for the next maintenance window (\(RequestLog.timestamp(window))) or the end of Doze (PH-9)"
            )
        }
        guard !conditions.isOnline else { return device.receive(fcm: message, messageID: messageID) }
        let now = world.clock()
        let ttl = message.ttlSeconds ?? FCMRequest.maxTTLSeconds
        guard ttl > 0 else {
            return PushOutcome(effect: "not delivered: \(device.id) is offline, and ttl 0s means now or never")
        }
        let until = now + Int64(ttl * 1000)
        return PushOutcome(
            effect: stored[device.id, default: OfflineQueue()].keep(
                OfflineQueue.Kept(message: message, messageID: messageID, until: until), for: device.id))
    }

    /// When a device comes back online: what FCM kept, delivered in the order it was
    /// sent, and a sentence saying what was delivered, expired or deleted; nil when
    /// nothing was kept.
    func deliverStored(to device: Device) -> String? {
        guard let queue = stored.removeValue(forKey: device.id) else { return nil }
        let now = world.clock()
        var delivered = 0
        var expired = 0
        for kept in queue.inOrder {
            guard now < kept.until else {
                expired += 1
                continue
            }
            _ = device.receive(fcm: kept.message, messageID: kept.messageID)
            // Each message's deliveries are all written before the next one's.
            try? device.waitUntilIdle()
            delivered += 1
        }
        var words = ["FCM delivered \(delivered) stored message\(delivered == 1 ? "" : "s")"]
        if expired > 0 { words.append("\(expired) passed their ttl") }
        if queue.deleted > 0 {
            words.append(
                "it had discarded the \(queue.deleted) non-collapsible messages kept past 100, so the app's onDeletedMessages ran (no event)"
            )
        }
        return words.joined(separator: "; ")
    }

    /// What FCM did with a message it accepted.
    struct Sent {
        /// `projects/<project>/messages/<id>`, as FCM answers it.
        var name: String
        /// The device a token or installation id reached; nil for a topic or a
        /// condition, and for a token no device holds any more.
        var device: String?
        var effect: String?
        var trayID: String?
        /// Each device a topic or a condition reached, with what happened there.
        var reached: [(device: String, effect: String, trayID: String?)]?

        /// As the line protocol replies it: `name`, then `device`, `effect` and
        /// `tray_id`, or `effect` and `devices`.
        var object: JSONObject {
            var object = JSONObject([("name", .string(name))])
            if let device { object["device"] = .string(device) }
            if let effect { object["effect"] = .string(effect) }
            if let trayID { object["tray_id"] = .string(trayID) }
            if let reached {
                object["devices"] = .array(
                    reached.map { entry in
                        var reached = JSONObject([("device", .string(entry.device)), ("effect", .string(entry.effect))])
                        if let trayID = entry.trayID { reached["tray_id"] = .string(trayID) }
                        return .object(reached)
                    })
            }
            return object
        }
    }

    /// Validates, routes and delivers one `messages:send` body, as FCM does; one
    /// function for the line protocol and the network alike.
    func send(
        body: [UInt8], parsed: JSON?, project: String?, defaultProject: String
    ) -> Result<Sent, FCMError> {
        let message: FCMMessage
        let entry: TokenRegistry.Entry?
        let sentIn: String
        do throws(FCMError) {
            message = try FCMRequest(body: body, parsedBody: parsed).validated()
            // A token (some 160 characters, hashed for each lookup) is looked up once,
            // for the route and the recipient.
            entry = world.registry.entry(message.target)
            sentIn = try FCMRequest.route(
                message.target, project: project, defaultProject: defaultProject, tokens: { _ in entry?.fcmRecord })
        } catch {
            return .failure(error)
        }
        // A token's or an installation id's one device is found with no list made for it.
        let device = entry.flatMap(world.device(for:))
        let recipients = device == nil ? recipients(of: message.target, in: sentIn) : []
        let messageID =
            (device ?? recipients.first ?? world.current ?? world.devices.first)?.makeFCMMessageID() ?? "0:0%world"
        // Each answer is made where it is returned, not filled in a variable, which was
        // copied out (Docs/Performance.md, "Copies the compiler makes of a large struct").
        let name = Self.messageName(project: sentIn, messageID: messageID)
        if message.validateOnly {
            return .success(Sent(name: name, effect: "validated only (validate_only is true): nothing was sent"))
        }
        switch message.target {
        case .token, .fid:
            guard let target = device else { return .success(Sent(name: name)) }
            if let since = target.offlineSince, Self.hasExpired(target, offlineSince: since, now: world.clock()) {
                return .failure(.unregistered)
            }
            world.touch(target)
            let outcome = hand(message, messageID: messageID, to: target)
            return .success(Sent(name: name, device: target.id, effect: outcome.effect, trayID: outcome.trayID))
        case .topic, .condition:
            var reached: [(device: String, effect: String, trayID: String?)] = []
            for target in recipients {
                let outcome = hand(message, messageID: messageID, to: target)
                // One device's deliveries are all written before the next one's.
                try? target.waitUntilIdle()
                reached.append((target.id, outcome.effect, outcome.trayID))
            }
            let what: String =
                if case .topic(let topic) = message.target { "topic '\(topic)'" } else { "the condition" }
            let effect =
                "sent to \(what) in project \(sentIn): reached \(reached.count) device\(reached.count == 1 ? "" : "s")"
            return .success(Sent(name: name, effect: effect, reached: reached))
        }
    }

    /// `projects/<project>/messages/<id>`, the name FCM answers, written once into its
    /// storage: an interpolation grew the string three times (~1,900 instructions of
    /// every message).
    static func messageName(project: String, messageID: String) -> String {
        var (project, messageID) = (project, messageID)
        let prefix: StaticString = "projects/"
        let middle: StaticString = "/messages/"
        let count = prefix.utf8CodeUnitCount + project.utf8.count + middle.utf8CodeUnitCount + messageID.utf8.count
        // Each piece copied to where the last one ended, returned rather than kept in a
        // variable the copies share: a captured variable was checked for exclusive access
        // at run time.
        func copy(_ bytes: UnsafeBufferPointer<UInt8>, _ at: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8>
        {
            if let from = bytes.baseAddress { at.initialize(from: from, count: bytes.count) }
            return at + bytes.count
        }
        return String(unsafeUninitializedCapacity: count) { text in
            guard let base = text.baseAddress else { return 0 }
            var at = copy(UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount), base)
            at = project.withUTF8 { copy($0, at) }
            at = copy(UnsafeBufferPointer(start: middle.utf8Start, count: middle.utf8CodeUnitCount), at)
            at = messageID.withUTF8 { copy($0, at) }
            return at - base
        }
    }

    /// The priority FCM delivers a message with.
    static func effectivePriority(_ message: FCMMessage) -> String {
        // FCM: notification messages default to high priority, data messages to normal.
        message.priority ?? (message.isNotificationMessage ? "HIGH" : "NORMAL")
    }

    /// The first maintenance window after `now` for a phone dozing since `since`: 15
    /// minutes in, then 30 minutes later, then every 60 (PH-9; the numbers are ours).
    static func nextMaintenanceWindow(dozeSince since: Int64, after now: Int64) -> Int64 {
        let minute: Int64 = 60_000
        var window = since + 15 * minute
        if window > now { return window }
        window += 30 * minute
        while window <= now { window += 60 * minute }
        return window
    }

    /// A clock that moved on, a phone that woke or came back online: what a dozing phone
    /// held is handed over when a maintenance window opened since it was held, or Doze
    /// ended, and only to a phone on the network (offline, it waits until it is back); a
    /// sentence per phone that got something.
    func deliverDozeHeld(to device: Device, woke: Bool) -> String? {
        guard let held = dozeHeld[device.id], !held.isEmpty, device.isOnline else { return nil }
        if !woke, let since = device.dozeSince {
            guard Self.nextMaintenanceWindow(dozeSince: since, after: heldSince[device.id] ?? since) <= world.clock()
            else { return nil }
        }
        dozeHeld[device.id] = nil
        heldSince[device.id] = nil
        world.touch(device)
        let effects = held.map { device.receive(fcm: $0.message, messageID: $0.messageID).effect }
        return
            "\(woke ? "Doze ended" : "a maintenance window opened"): \(device.id) got the \(held.count) message\(held.count == 1 ? "" : "s") FCM held: "
            + effects.joined(separator: "; ")
    }

    /// The world's clock moved on: what the dozing phones whose maintenance window opened
    /// held is handed over (only phones holding something are looked at).
    func windowsOpened() -> [String] {
        dozeHeld.keys.sorted { (World.deviceNumber($0) ?? 0) < (World.deviceNumber($1) ?? 0) }.compactMap { id in
            world.devicesByID[id].flatMap { deliverDozeHeld(to: $0, woke: false) }
        }
    }

    /// How long a token may go without its device connecting before FCM considers it
    /// expired (PH-12; Firebase: "inactive for more than 270 days").
    static let tokenExpiryMilliseconds: Int64 = 270 * 24 * 3600 * 1000

    /// Whether an Android device offline since `offlineSince` has an expired FCM token.
    static func hasExpired(_ device: Device, offlineSince: Int64, now: Int64) -> Bool {
        device.platform == .android && now - offlineSince >= tokenExpiryMilliseconds
    }

    /// The devices a topic or a condition reaches; none for a token or an installation id,
    /// whose device the registry's entry names.
    private func recipients(of target: FCMTarget, in project: String) -> [Device] {
        switch target {
        case .token, .fid:
            return []
        case .topic(let topic):
            return world.subscribers(of: [topic]).filter {
                Self.isFCMApp($0, in: project) && $0.topics(satisfy: { $0.contains(topic) })
            }
        case .condition(let condition):
            // Only the subscribers of a topic the condition needs, unless a `!` lets a
            // device with none of its topics match.
            let candidates = condition.requiredTopics.map(world.subscribers(of:)) ?? world.devices
            return candidates.filter { Self.isFCMApp($0, in: project) && $0.topics(satisfy: condition.matches) }
        }
    }

    private static func isFCMApp(_ device: Device, in project: String) -> Bool {
        device.platform == .android && device.isInstalled && device.token != nil
            && device.options.fcmProject == project
    }

    /// `POST /v1/projects/{project}/messages:send` with a bearer access token the OAuth
    /// endpoint issued; validated and delivered by the line protocol's `fcm` code.
    func answer(_ request: HTTPRequest) -> ServiceAnswer {
        func refuse(_ error: FCMError) -> ServiceAnswer {
            let report = Report.Fields(
                network: "fcm", status: error.code, error: error.status, effect: "refused: \(error.message)")
            let body = JSON.object(JSONObject([("error", .object(Self.envelope(error)))])).compactBytes
            return (Report(report), HTTPResponse.json(status: error.code, body: body))
        }
        guard let project = request.withPath({ $0.flatMap(Self.project) }) else {
            return refuse(
                FCMError(
                    code: 404, status: "NOT_FOUND", message: "Requested entity was not found: \(request.path ?? "")"))
        }
        guard request.hasMethod("POST") else {
            return refuse(FCMError(code: 405, status: "METHOD_NOT_ALLOWED", message: "messages:send takes POST"))
        }
        let now = world.clock()
        let grant = request.withBearerToken { token in
            token.flatMap { oauth.accessTokens.grant(forBytes: $0, now: now) }
        }
        guard let grant else {
            return refuse(
                FCMError(
                    code: 401, status: "UNAUTHENTICATED",
                    message:
                        "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."
                ))
        }
        if let owner = grant.project, owner != project {
            // What Google answers a service account of another project: IAM refuses it
            // before FCM reads the message.
            return refuse(
                FCMError(
                    code: 403, status: "PERMISSION_DENIED",
                    message:
                        "Permission 'cloudmessaging.messages.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/\(project)' (or it may not exist)."
                ))
        }
        switch send(body: request.body, parsed: nil, project: project, defaultProject: project) {
        case .failure(let error):
            return refuse(error)
        case .success(let sent):
            let report = Report.Fields(
                network: "fcm", status: 200, device: sent.device,
                devices: sent.reached?.map { ($0.device, $0.effect) }, name: sent.name,
                effect: sent.effect ?? "sent")
            return (Report(report), HTTPResponse.json(status: 200, body: Self.sentBody(name: sent.name)))
        }
    }

    /// FCM's answer to a message it sent, `{"name":"projects/…/messages/…"}`, written as
    /// bytes: an object made for it, measured and serialized was ~1,800 instructions a message.
    static func sentBody(name: String) -> [UInt8] {
        let start: StaticString = #"{"name":"#
        var body: [UInt8] = []
        body.reserveCapacity(start.utf8CodeUnitCount + name.utf8.count + 3)
        // From the literal's own bytes: a `String`'s UTF-8 view was appended through the
        // generic path, ~170 instructions for eight bytes.
        body.append(contentsOf: UnsafeBufferPointer(start: start.utf8Start, count: start.utf8CodeUnitCount))
        JSON.writeString(name, to: &body)
        body.append(UInt8(ascii: "}"))
        return body
    }

    /// The `{project}` of `/v1/projects/{project}/messages:send`.
    /// Bytes, not characters: every message asks it.
    static func project(_ path: String) -> String? {
        var path = path
        return path.withUTF8 { project($0) }
    }

    /// `project(_:)` of a path's bytes in place.
    static func project(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let prefix: StaticString = "/v1/projects/"
        let suffix: StaticString = "/messages:send"
        guard bytes.hasBytePrefix(prefix), bytes.hasByteSuffix(suffix) else { return nil }
        let start = prefix.utf8CodeUnitCount
        let end = bytes.count - suffix.utf8CodeUnitCount
        guard start < end else { return nil }
        let project = UnsafeBufferPointer(rebasing: bytes[start..<end])
        guard !project.contains(UInt8(ascii: "/")) else { return nil }
        return SmallASCII.string(project)
    }

    /// Google's error envelope's `error` member.
    static func envelope(_ error: FCMError) -> JSONObject {
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

    // MARK: Chaos

    /// What a chaos rule may match in an FCM request: the project from the path, the
    /// token or topic from the body (read only when a rule for FCM exists).
    func chaosFacts(_ request: HTTPRequest) -> ChaosRules.Facts {
        let path = request.path ?? ""
        let message = (try? JSON.parse(request.body))?["message"]
        let token = message?["token"]?.stringValue
        return ChaosRules.Facts(
            service: "fcm", device: token.flatMap { world.device(holding: $0)?.id }, token: token,
            topic: message?["topic"]?.stringValue, project: Self.project(path), path: path)
    }

    /// FCM's own error for a chaos rule's answer name; one for the network and the line
    /// protocol alike.
    static func chaosError(_ name: String) -> FCMError {
        switch name {
        case "QUOTA_EXCEEDED":
            FCMError(
                code: 429, status: "RESOURCE_EXHAUSTED",
                message: "Quota exceeded for quota metric 'Send requests' of service 'fcm.googleapis.com'.",
                errorCode: name)
        case "UNAVAILABLE":
            FCMError(
                code: 503, status: "UNAVAILABLE", message: "The service is currently unavailable.", errorCode: name)
        case "INTERNAL":
            FCMError(code: 500, status: "INTERNAL", message: "Internal error encountered.", errorCode: name)
        case "THIRD_PARTY_AUTH_ERROR":
            FCMError(
                code: 401, status: "UNAUTHENTICATED", message: "Auth error from APNS or Web Push Service",
                errorCode: name)
        case "UNREGISTERED":
            FCMError(code: 404, status: "NOT_FOUND", message: "Requested entity was not found.", errorCode: name)
        default:  // SENDER_ID_MISMATCH
            FCMError(code: 403, status: "PERMISSION_DENIED", message: "SenderId mismatch", errorCode: name)
        }
    }

    /// FCM's own error for a chaos rule's answer name, with `Retry-After` where FCM sends it.
    static func chaosAnswer(_ name: String, retryAfter: Int?) -> ServiceAnswer {
        let error = chaosError(name)
        var headers = [("content-type", "application/json")]
        if error.code == 429 || error.code == 503 { headers.append(("retry-after", String(retryAfter ?? 1))) }
        let report = Report.Fields(network: "fcm", status: error.code, error: error.status)
        let body = JSON.object(JSONObject([("error", .object(Self.envelope(error)))])).compactBytes
        return (Report(report), HTTPResponse(status: error.code, headers: headers, body: body))
    }
}

/// What FCM keeps for one offline device (chaos.md, "Offline phones"), in the order it
/// was sent: up to 100 non-collapsible messages (past that it discards them all, the app
/// hears `onDeletedMessages`, and it keeps what comes after), and the newest collapsible
/// message per `collapse_key`, at most 4 keys (a fifth drops the oldest key's).
struct OfflineQueue {
    struct Kept {
        let message: FCMMessage
        let messageID: String
        let until: Int64
    }

    static let maxNonCollapsible = 100
    static let maxCollapseKeys = 4

    /// Every kept message, in the order they were sent.
    private(set) var inOrder: [Kept] = []
    /// How many non-collapsible messages were discarded since the device went offline.
    private(set) var deleted = 0

    init() {}

    /// A queue read back from a state file.
    init(inOrder: [Kept], deleted: Int) {
        self.inOrder = inOrder
        self.deleted = deleted
    }

    /// Keeps one message; a sentence saying what FCM did.
    mutating func keep(_ kept: Kept, for device: String) -> String {
        guard let key = kept.message.collapseKey else {
            let stored = inOrder.count(where: { $0.message.collapseKey == nil })
            if stored == Self.maxNonCollapsible {
                deleted += stored + 1
                inOrder.removeAll { $0.message.collapseKey == nil }
                return
                    "deleted: \(device) is offline and FCM already kept 100 non-collapsible messages for it: it discarded them all, and this one (the app's onDeletedMessages runs when it reconnects)"
            }
            inOrder.append(kept)
            return
                "stored: \(device) is offline; FCM keeps it (\(stored + 1) of at most 100 non-collapsible) until its ttl"
        }
        if let index = inOrder.firstIndex(where: { $0.message.collapseKey == key }) {
            inOrder.remove(at: index)
            inOrder.append(kept)
            return "replaced: \(device) is offline; FCM keeps only the newest message with collapse_key '\(key)'"
        }
        var dropped = ""
        if inOrder.count(where: { $0.message.collapseKey != nil }) == Self.maxCollapseKeys,
            let oldest = inOrder.firstIndex(where: { $0.message.collapseKey != nil })
        {
            dropped =
                "; it dropped the message of the oldest key, '\(inOrder.remove(at: oldest).message.collapseKey!)' (4 keys at most)"
        }
        inOrder.append(kept)
        return "stored: \(device) is offline; FCM keeps the newest message with collapse_key '\(key)'" + dropped
    }
}

extension FCMService: WorldService {
    /// Devices: the messages kept offline (counted with their devices).
    func clear(_ part: WorldPart) -> Int {
        if part == .devices {
            stored.removeAll()
            dozeHeld.removeAll()
            heldSince.removeAll()
        }
        return 0
    }

    /// Devices: the messages kept offline, each as FCM holds it.
    func save(_ part: WorldPart) -> JSONObject {
        guard part == .devices else { return JSONObject() }
        let queues = stored.sorted { $0.key < $1.key }.map { device, queue in
            JSON.object(
                JSONObject([
                    ("device", .string(device)), ("deleted", .integer(Int64(queue.deleted))),
                    ("kept", .array(queue.inOrder.map(Self.saved))),
                ]))
        }
        let dozing = dozeHeld.sorted { $0.key < $1.key }.map { device, held in
            JSON.object(
                JSONObject([
                    ("device", .string(device)), ("held_since", .integer(heldSince[device] ?? 0)),
                    (
                        "held",
                        .array(held.map { Self.saved(.init(message: $0.message, messageID: $0.messageID, until: 0)) })
                    ),
                ]))
        }
        return JSONObject([("fcm_offline", .array(queues)), ("fcm_doze", .array(dozing))])
    }

    static func saved(_ kept: OfflineQueue.Kept) -> JSON {
        let message = kept.message
        let count: JSON = message.notificationCount.map { .integer(Int64($0)) } ?? .null
        let target: JSON =
            switch message.target {
            case .token(let token): .object(JSONObject([("token", .string(token))]))
            case .fid(let fid): .object(JSONObject([("fid", .string(fid))]))
            case .topic(let topic): .object(JSONObject([("topic", .string(topic))]))
            case .condition: .null
            }
        return .object(
            JSONObject([
                ("message_id", .string(kept.messageID)), ("until", .integer(kept.until)), ("target", target),
                ("data", .object(message.data.object)), ("title", message.title.map(JSON.string) ?? .null),
                ("body", message.body.map(JSON.string) ?? .null), ("tag", message.tag.map(JSON.string) ?? .null),
                ("collapse_key", message.collapseKey.map(JSON.string) ?? .null),
                ("priority", message.priority.map(JSON.string) ?? .null),
                ("notification", .bool(message.isNotificationMessage)),
                ("ttl_s", message.ttlSeconds.map(JSON.real) ?? .null),
                ("notification_count", count),
                ("channel_id", message.channelID.map(JSON.string) ?? .null),
                ("icon", message.icon.map(JSON.string) ?? .null),
            ]))
    }

    /// A kept message read back from `saved(_:)`.
    static func kept(_ item: WorldSnapshot.Reader) throws(WorldSnapshot.Refusal) -> OfflineQueue.Kept {
        // A device's queue holds messages sent to it: by token or installation id.
        let target: FCMTarget
        if let token = try item.object("target")?.optionalString("token") {
            target = .token(token)
        } else if let fid = try item.object("target")?.optionalString("fid") {
            target = .fid(fid)
        } else {
            throw item.wrong("target", #"{"token": …} or {"fid": …}"#)
        }
        var ttl: Double?
        if case .number(let number)? = item.object["ttl_s"] { ttl = number.doubleValue }
        let message = FCMMessage(
            target: target, data: JSONStringMap(try item.object("data")?.object ?? JSONObject()),
            title: try item.optionalString("title"), body: try item.optionalString("body"),
            tag: try item.optionalString("tag"), collapseKey: try item.optionalString("collapse_key"),
            priority: try item.optionalString("priority"), isNotificationMessage: try item.bool("notification"),
            ttlSeconds: ttl, notificationCount: try item.optionalInteger("notification_count").map { Int($0) },
            channelID: try item.optionalString("channel_id"), icon: try item.optionalString("icon"))
        return OfflineQueue.Kept(
            message: message, messageID: try item.string("message_id"), until: try item.integer("until"))
    }

    func restoring(_ part: WorldPart, from saved: WorldSnapshot.Reader) throws(WorldSnapshot.Refusal) -> (() -> Void)? {
        guard part == .devices else { return nil }
        var queues: [(String, OfflineQueue)] = []
        for queue in try saved.objects("fcm_offline") {
            var kept: [OfflineQueue.Kept] = []
            for item in try queue.objects("kept") { kept.append(try Self.kept(item)) }
            queues.append(
                (try queue.string("device"), OfflineQueue(inOrder: kept, deleted: Int(try queue.integer("deleted")))))
        }
        var dozing: [(String, Int64, [(message: FCMMessage, messageID: String)])] = []
        for phone in try saved.objects("fcm_doze") {
            var held: [(message: FCMMessage, messageID: String)] = []
            for item in try phone.objects("held") {
                let kept = try Self.kept(item)
                held.append((kept.message, kept.messageID))
            }
            dozing.append((try phone.string("device"), try phone.integer("held_since"), held))
        }
        return { [self] in
            for (device, queue) in queues { stored[device] = queue }
            for (device, since, held) in dozing {
                heldSince[device] = since
                dozeHeld[device] = held
            }
        }
    }
}
