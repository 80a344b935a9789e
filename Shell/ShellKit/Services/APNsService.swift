import Credentials
import Foundation
import HTTPMessage
import OrderedJSON
import PushPlugin
import PushServices
import SimulatedDevice

/// APNs (`api.push.apple.com`, `api.development.push.apple.com`): the provider-token
/// keys it trusts, and pushes found by token and handed to the device that holds it.
/// One validator (`APNsRequest`) for the line protocol, PubNub and the network alike.
final class APNsService {
    let world: World
    /// The signing keys registered with `apns_key` (or minted for hand tests): once
    /// there is one, every provider token's signature is checked.
    var keys = APNsProviderTokens()

    /// What APNs keeps for a device that is offline: only the newest notification per
    /// app (a device holds one app), until its `apns-expiration` (ms), or 30 days.
    private var stored: [String: (notification: APNsNotification, until: Int64)] = [:]
    /// What iOS holds for a device in Low Power Mode (PH-10), by device id, in order.
    private var lowPowerHeld: [String: [APNsNotification]] = [:]
    /// PH-11: when background pushes last woke each device's app, and the newest one held
    /// back past the budget.
    private var backgroundWakes: [String: [Int64]] = [:]
    private var throttled: [String: APNsNotification] = [:]
    /// The `apns-id`s of answers that reach no device (refusals, chaos): Foundation's
    /// `UUID().uuidString` formats each byte with `snprintf`, some 6,600 instructions a refusal.
    private var ids = IDGenerator()
    /// How long APNs stores a notification at most (Apple: "30 days or less").
    static let longestStorageMilliseconds: Int64 = 30 * 24 * 3600 * 1000

    init(world: World) { self.world = world }

    /// A push APNs accepted, and the device its token was issued to (nil: none in the world).
    struct Accepted {
        let notification: APNsNotification
        let holder: Device?
    }

    /// Validates a push as APNs does, for the tokens the world issued. The token's device
    /// comes from the registry's entry the validator read (an accepted token is active:
    /// `World.device(for:)`), with no second lookup: looked up again, and then by id among
    /// the world's devices, it cost a line protocol's push ~0.45k instructions and, in a
    /// 10k world, some two last-level cache misses.
    func validate(_ request: APNsRequest) -> Result<Accepted, APNsRejection> {
        var entry: TokenRegistry.Entry?
        let registry = world.registry
        return request.validate(tokens: { token in
            entry = registry.entry(token: token)
            return entry?.apnsRecord
        }).map { Accepted(notification: $0, holder: entry.flatMap(world.device(for:))) }
    }

    /// Hands a push APNs accepted to `holder`, the device that holds its token, or to the
    /// system handler of its push type, as iOS would. Throws when no device holds it.
    func deliver(_ notification: APNsNotification, holder: Device?) throws -> (Device, PushOutcome) {
        guard let target = holder else {
            throw DeviceRefusal("APNs accepted a token no device holds")  // the registry and the world agree
        }
        world.touch(target)
        let conditions = target.conditions
        if !conditions.isOnline { return (target, store(notification, for: target)) }
        if conditions.isLowPower, notification.priority != 10 || notification.pushType == "background" {
            return (target, holdForLowPower(notification, on: target))
        }
        // The app's state first: only a push to an app in the background needs its payload read here.
        if conditions.appState == .background, Self.isBackgroundOnly(notification) {
            return (target, budgeted(notification, to: target))
        }
        return (target, hand(notification, to: target))
    }

    /// A push that only wakes the app (`content-available`, nothing to show).
    static func isBackgroundOnly(_ notification: APNsNotification) -> Bool {
        let aps = IOSNotification.APS(userInfo: notification.payload)
        return aps.wakesApp && !aps.isAlert
    }

    /// PH-11: background pushes to an app in the background wake it at most N times per
    /// rolling hour of world clock; past that only the newest is kept, and handed over
    /// when the hour frees a slot.
    private func budgeted(_ notification: APNsNotification, to device: Device) -> PushOutcome {
        let now = world.clock()
        var recent = wakes(of: device.id, inTheHourBefore: now)
        guard recent.count >= device.options.backgroundPushesPerHour else {
            recent.append(now)
            backgroundWakes[device.id] = recent
            return hand(notification, to: device)
        }
        backgroundWakes[device.id] = recent
        let replaced = throttled[device.id] != nil
        throttled[device.id] = notification
        let free = (recent.first ?? now) + Self.hour
        return PushOutcome(
            effect:
                "throttled: \(device.id)'s app was woken \(recent.count) times in the last hour, its budget; iOS keeps only the newest background push"
                + (replaced ? " (this one replaces the one it kept)" : "")
                + " and hands it over when the hour frees a slot, at \(RequestLog.timestamp(free)) (PH-11)")
    }

    private static let hour: Int64 = 3_600_000

    /// When background pushes woke the device's app in the rolling hour before `now` (PH-11).
    private func wakes(of device: String, inTheHourBefore now: Int64) -> [Int64] {
        (backgroundWakes[device] ?? []).filter { now - $0 < Self.hour }
    }

    /// The world's clock moved on: a throttled background push is handed over to an app
    /// still in the background once its hour frees a slot; a sentence per device.
    func budgetFreed() -> [String] {
        let now = world.clock()
        return throttled.keys.sorted { (World.deviceNumber($0) ?? 0) < (World.deviceNumber($1) ?? 0) }.compactMap {
            id in
            guard let device = world.devicesByID[id], let notification = throttled[id] else { return nil }
            let recent = wakes(of: id, inTheHourBefore: now)
            guard recent.count < device.options.backgroundPushesPerHour else { return nil }
            throttled[id] = nil
            backgroundWakes[id] = recent + [now]
            world.touch(device)
            guard device.appState == .background else {
                return "\(id): the throttled background push was dropped, the app is no longer in the background"
            }
            return "\(id): the hour freed a slot, and iOS handed over the throttled background push: "
                + hand(notification, to: device).effect
        }
    }

    /// PH-10: in Low Power Mode iOS holds priority-5 (and background) pushes until it
    /// ends, the newest per collapse id; priority 10 goes at once.
    private func holdForLowPower(_ notification: APNsNotification, on device: Device) -> PushOutcome {
        var held = lowPowerHeld[device.id] ?? []
        let replaced = notification.collapseID.flatMap { id in held.firstIndex { $0.collapseID == id } }
        if let replaced { held.remove(at: replaced) }
        held.append(notification)
        lowPowerHeld[device.id] = held
        return PushOutcome(
            effect:
                "held: \(device.id) is in Low Power Mode, and iOS holds priority-\(notification.priority) pushes until it ends"
                + (replaced != nil ? " (it replaced the one held with the same apns-collapse-id)" : "") + " (PH-10)")
    }

    /// When Low Power Mode ends: what iOS held, handed over in the order it came.
    func deliverHeld(to device: Device) -> String? {
        guard let held = lowPowerHeld.removeValue(forKey: device.id), !held.isEmpty else { return nil }
        let effects = held.map { hand($0, to: device).effect }
        return "iOS handed over the \(held.count) push\(held.count == 1 ? "" : "es") it held: "
            + effects.joined(separator: "; ")
    }

    /// What APNs does with a push for a device that is offline: it keeps the newest per
    /// app within its expiration; `apns-expiration: 0` is tried once, never stored.
    private func store(_ notification: APNsNotification, for device: Device) -> PushOutcome {
        let now = world.clock()
        let longest = now + Self.longestStorageMilliseconds
        let until = min(notification.expiration.map { $0 &* 1000 } ?? longest, longest)
        if notification.expiration == 0 || until <= now {
            return PushOutcome(
                effect:
                    "not delivered: \(device.id) is offline, and apns-expiration \(notification.expiration ?? 0) has passed or is 0: APNs tries once and does not store it"
            )
        }
        let replaced = stored[device.id] != nil
        stored[device.id] = (notification, until)
        return PushOutcome(
            effect: "\(replaced ? "replaced" : "stored"): \(device.id) is offline; APNs keeps only this one for the app"
                + (replaced ? " (the one it kept before is dropped)" : "") + " until \(RequestLog.timestamp(until))")
    }

    /// When a device comes back online: the stored notification, delivered under the
    /// usual rules, or why nothing was; nil when nothing was stored.
    func deliverStored(to device: Device) -> String? {
        guard let (notification, until) = stored.removeValue(forKey: device.id) else { return nil }
        guard world.clock() < until else {
            return "APNs: the stored notification expired at \(RequestLog.timestamp(until)); nothing delivered"
        }
        return "APNs delivered the stored notification: " + hand(notification, to: device).effect
    }

    /// Hands an accepted push to the device's app (or its system handler), as iOS does.
    private func hand(_ notification: APNsNotification, to target: Device) -> PushOutcome {
        if let handler = notification.systemHandler {
            return PushOutcome(
                effect:
                    "delivered to \(handler) on \(target.id): the push plugin does not handle it, so no event and nothing in the tray"
            )
        }
        return target.receive(apnsPayload: notification.payload, collapseID: notification.collapseID)
    }

    /// APNs over HTTP/2. `environment` is the host's; for an unknown host, the one
    /// that issued the token, so no environment mismatch arises.
    func answer(_ request: HTTPRequest, environment: APNsEnvironment?) -> ServiceAnswer {
        guard request.http2 else {
            return plainAnswer("apns", 505, "APNs takes HTTP/2 only; this request came over HTTP/1.1")
        }
        // The token is read and looked up once: for the environment, the validator and
        // the delivery.
        let (token, normalized) = APNsRequest.pathToken(of: request)
        let entry = world.registry.entry(token: token)
        let environment = environment ?? entry?.apnsRecord?.environment ?? .production
        // The headers live in the request alone, read from there after: a copy of them
        // kept beside it cost ~0.9k instructions a push in reference counting.
        let push = APNsRequest(network: request, pathToken: normalized, environment: environment)
        let result: Result<APNsNotification, APNsRejection>
        var signatureChecked = false
        if let repeated = request.repeatedHeaderName {
            result = .failure(
                APNsRejection(status: 400, reason: "DuplicateHeaders", detail: "the header \(repeated) was sent twice")
            )
        } else {
            let now = Double(world.clock()) / 1000
            let registry = world.registry
            let authorization = request.headers.firstIndex(named: "authorization")
            // Closures passed straight in, so that neither escapes: their captures stay on
            // the stack, where a closure kept in a constant was allocated on every push.
            result = push.validate(
                tokens: { $0 == token ? entry?.apnsRecord : registry.apnsRecord($0) },
                authorize: { [self] record in
                    // The token that passed last, compared as the header's bytes, before
                    // any text is made of it.
                    if let authorization,
                        let accepted = request.headers.withValueBytes(
                            at: authorization, { keys.lastAccepted(authorization: $0, team: record.team, now: now) })
                    {
                        signatureChecked = accepted.signatureChecked
                        return nil
                    }
                    let text = authorization.map(request.headers.value(at:))
                    switch keys.check(authorization: text, team: record.team, now: now) {
                    case .success(let accepted):
                        signatureChecked = accepted.signatureChecked
                        return nil
                    case .failure(let refusal):
                        return APNsRejection(status: 403, reason: refusal.reason, detail: refusal.detail)
                    }
                })
        }
        switch result {
        case .failure(let rejection):
            let apnsID = push.headers.id ?? ids.uuid()
            let report = Report.Fields(
                network: "apns", status: rejection.status, apnsID: apnsID, reason: rejection.reason,
                effect: "refused: \(rejection.detail)")
            var body = JSONObject([("reason", .string(rejection.reason))])
            if let timestamp = rejection.timestamp { body["timestamp"] = .integer(timestamp) }
            return (
                Report(report),
                Self.response(status: rejection.status, apnsID: apnsID, body: JSON.object(body).compactBytes)
            )
        case .success(let notification):
            do {
                let holder = entry.flatMap(world.device(for:))
                let (target, outcome) = try deliver(notification, holder: holder)
                let apnsID = push.headers.id ?? target.makeAPNsID()
                let report = Report.Fields(
                    network: "apns", status: 200, device: target.id, apnsID: apnsID,
                    effect: signatureChecked
                        ? outcome.effect
                        : outcome.effect
                            + "; the provider token's signature was not checked (no key is registered with apns_key)",
                    trayID: outcome.trayID)
                let uniqueID = environment == .development ? ids.uuid().lowercased() : nil
                return (Report(report), Self.response(status: 200, apnsID: apnsID, uniqueID: uniqueID))
            } catch {
                return (
                    Report(Report.Fields(network: "apns", status: 500, effect: "\(error)")),
                    HTTPResponse(status: 500, body: Array(#"{"reason":"InternalServerError"}"#.utf8))
                )
            }
        }
    }

    // MARK: Chaos

    /// What a chaos rule may match in an APNs request.
    func chaosFacts(_ request: HTTPRequest, environment: APNsEnvironment?) -> ChaosRules.Facts {
        let token = APNsRequest.pathToken(of: request).lowercased
        return ChaosRules.Facts(
            service: "apns", device: world.device(holding: token)?.id, token: token,
            topic: request.header("apns-topic"),
            environment: (environment ?? world.registry.apnsRecord(token)?.environment)?.rawValue,
            path: request.path ?? "")
    }

    /// APNs's own refusal for a chaos rule's answer name; one for the network and the
    /// line protocol alike.
    func chaosRejection(_ name: String, rule: String) -> APNsRejection {
        let status =
            switch name {
            case "TooManyRequests", "TooManyProviderTokenUpdates": 429
            case "InternalServerError": 500
            case "ServiceUnavailable", "Shutdown": 503
            case "ExpiredProviderToken": 403
            case "Unregistered": 410
            default: 400  // BadDeviceToken
            }
        return APNsRejection(
            status: status, reason: name, detail: "chaos rule \(rule) answered \(name)",
            timestamp: name == "Unregistered" ? world.clock() : nil)
    }

    /// APNs's own error for a chaos rule's answer name, as APNs sends it.
    func chaosAnswer(_ name: String, rule: String, _ request: HTTPRequest) -> ServiceAnswer {
        let rejection = chaosRejection(name, rule: rule)
        var body = JSONObject([("reason", .string(name))])
        if let timestamp = rejection.timestamp { body["timestamp"] = .integer(timestamp) }
        let apnsID = request.header("apns-id") ?? ids.uuid()
        let report = Report.Fields(network: "apns", status: rejection.status, apnsID: apnsID, reason: name)
        return (
            Report(report),
            Self.response(status: rejection.status, apnsID: apnsID, body: JSON.object(body).compactBytes)
        )
    }

    /// APNs's answer: its `apns-id` (and from the development environment its
    /// `apns-unique-id`), both marked unique to the answer, and a JSON body when it has one.
    static func response(status: Int, apnsID: String, uniqueID: String? = nil, body: [UInt8] = []) -> HTTPResponse {
        // Each list a literal of its size, one allocation: reserved and appended to, the
        // list went through the array's growth path (~0.2k instructions a push).
        let json = ("content-type", "application/json")
        let headers: [(name: String, value: String)] =
            switch (uniqueID, body.isEmpty) {
            case (nil, true): [("apns-id", apnsID)]
            case (nil, false): [("apns-id", apnsID), json]
            case (let uniqueID?, true): [("apns-id", apnsID), ("apns-unique-id", uniqueID)]
            case (let uniqueID?, false): [("apns-id", apnsID), ("apns-unique-id", uniqueID), json]
            }
        var response = HTTPResponse(status: status, headers: headers, body: body)
        response.uniqueHeaders = uniqueID == nil ? 0b1 : 0b11  // the ids, not the content type
        return response
    }
}

extension APNsService: WorldService {
    /// A notification as a state file keeps it.
    static func saved(_ notification: APNsNotification) -> JSONObject {
        JSONObject([
            ("token", .string(notification.token)), ("apns_id", notification.apnsID.map(JSON.string) ?? .null),
            ("push_type", notification.pushType.map(JSON.string) ?? .null),
            ("priority", .integer(Int64(notification.priority))),
            ("collapse_id", notification.collapseID.map(JSON.string) ?? .null),
            ("payload", .object(notification.payload)),
            ("expiration", notification.expiration.map(JSON.integer) ?? .null),
        ])
    }

    /// A notification read back from `saved(_:)`.
    static func notification(_ item: WorldSnapshot.Reader) throws(WorldSnapshot.Refusal) -> APNsNotification {
        guard let payload = try item.object("payload") else { throw item.wrong("payload", "an object") }
        return .restored(
            token: try item.string("token"), apnsID: try item.optionalString("apns_id"),
            pushType: try item.optionalString("push_type"), priority: Int(try item.integer("priority")),
            collapseID: try item.optionalString("collapse_id"), payload: payload.object,
            expiration: try item.optionalInteger("expiration"))
    }

    /// Credentials: the signing keys' public halves; devices: what is kept offline.
    func save(_ part: WorldPart) -> JSONObject {
        if part == .devices {
            let kept = stored.sorted { $0.key < $1.key }.map { device, kept in
                var item = Self.saved(kept.notification)
                item["device"] = .string(device)
                item["until"] = .integer(kept.until)
                return JSON.object(item)
            }
            let held = lowPowerHeld.sorted { $0.key < $1.key }.flatMap { device, pushes in
                pushes.map { notification in
                    var item = Self.saved(notification)
                    item["device"] = .string(device)
                    return JSON.object(item)
                }
            }
            let throttledPushes = throttled.sorted { $0.key < $1.key }.map { device, notification in
                var item = Self.saved(notification)
                item["device"] = .string(device)
                return JSON.object(item)
            }
            let wakes = backgroundWakes.sorted { $0.key < $1.key }.map { device, times in
                JSON.object(JSONObject([("device", .string(device)), ("at", .array(times.map(JSON.integer)))]))
            }
            return JSONObject([
                ("apns_offline", .array(kept)), ("apns_low_power", .array(held)),
                ("apns_throttled", .array(throttledPushes)), ("apns_background_wakes", .array(wakes)),
            ])
        }
        guard part == .credentials else { return JSONObject() }
        let saved = keys.keys.values.sorted { $0.keyID < $1.keyID }.map { key in
            JSON.object(
                JSONObject([
                    ("key_id", .string(key.keyID)), ("team", .string(key.team)),
                    ("public_key", .string(key.publicKey.pem)),
                ]))
        }
        return JSONObject([("apns_keys", .array(saved))])
    }

    func restoring(_ part: WorldPart, from saved: WorldSnapshot.Reader) throws(WorldSnapshot.Refusal) -> (() -> Void)? {
        if part == .devices {
            var kept: [(String, (notification: APNsNotification, until: Int64))] = []
            for item in try saved.objects("apns_offline") {
                kept.append((try item.string("device"), (try Self.notification(item), try item.integer("until"))))
            }
            var held: [(String, APNsNotification)] = []
            for item in try saved.objects("apns_low_power") {
                held.append((try item.string("device"), try Self.notification(item)))
            }
            var throttledPushes: [(String, APNsNotification)] = []
            for item in try saved.objects("apns_throttled") {
                throttledPushes.append((try item.string("device"), try Self.notification(item)))
            }
            var wakes: [(String, [Int64])] = []
            for item in try saved.objects("apns_background_wakes") {
                guard let times = item.object["at"]?.arrayValue?.compactMap(\.integerValue) else {
                    throw item.wrong("at", "an array of times")
                }
                wakes.append((try item.string("device"), times))
            }
            return { [self] in
                for (device, notification) in throttledPushes { throttled[device] = notification }
                for (device, times) in wakes { backgroundWakes[device] = times }
                for (device, notification) in kept { stored[device] = notification }
                for (device, notification) in held { lowPowerHeld[device, default: []].append(notification) }
            }
        }
        guard part == .credentials else { return nil }
        var read: [APNsProviderTokens.Key] = []
        for key in try saved.objects("apns_keys") {
            guard let publicKey = PublicKey(pem: try key.string("public_key")), publicKey.kind == .ecP256 else {
                throw key.wrong("public_key", "an EC P-256 public key in PEM")
            }
            read.append(.init(keyID: try key.string("key_id"), team: try key.string("team"), publicKey: publicKey))
        }
        return { [self] in for key in read { keys.register(key) } }
    }

    /// Credentials: the signing keys registered; devices: the notifications kept offline.
    func clear(_ part: WorldPart) -> Int {
        switch part {
        case .credentials:
            defer { keys = APNsProviderTokens() }
            return keys.keys.count
        case .devices:
            defer {
                stored.removeAll()
                lowPowerHeld.removeAll()
                backgroundWakes.removeAll()
                throttled.removeAll()
            }
            return 0
        default: return 0
        }
    }
}
