import HTTPMessage
import OrderedJSON
import PushServices
import SimulatedDevice

/// PubNub's REST API for mobile push, as the front door serves it (PN-1 … PN-5):
/// device registrations on channels, and publishing, which fans `pn_apns` and
/// `pn_gcm` / `pn_fcm` out through the same APNs and FCM validators as a direct send.
final class PubNubService {
    let world: World
    let apns: APNsService
    let fcm: FCMService
    /// Devices registered on channels, per sub key.
    var registrations = PubNubRegistrations()
    /// The last timetoken given: each is larger than the one before.
    private var lastTimetoken: Int64 = 0

    init(world: World, apns: APNsService, fcm: FCMService) {
        self.world = world
        self.apns = apns
        self.fcm = fcm
    }

    /// The paths PubNub's REST API serves (when the host does not say PubNub).
    static let paths: [StaticString] = ["/publish/", "/v1/push/", "/v2/push/"]

    func answer(_ request: HTTPRequest) -> ServiceAnswer {
        let target = Array((request.path ?? "").utf8)
        let question = target.firstIndex(of: UInt8(ascii: "?")) ?? target.endIndex
        let query = HTTPRequest.formFields(Array(target[question...].dropFirst()))
        var segments: [String] = []
        for raw in target[..<question].split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst()
        {
            guard let segment = HTTPRequest.percentDecoded(raw, plusIsSpace: false) else {
                return Self.refusal(400, "the path has a bad percent-encoding or is not UTF-8")
            }
            segments.append(segment)
        }
        switch segments.first {
        case "publish": return pubnubPublish(request, segments: segments)
        case "v1", "v2": return pubnubRegistration(segments: segments, query: query)
        default: return Self.refusal(404, "PubNub serves /publish/, /v1/push/ and /v2/push/ here")
        }
    }

    /// The gateway's own error for a chaos rule's answer name (`429`, `500`, `503`).
    static func chaosAnswer(_ name: String) -> ServiceAnswer {
        refusal(Int(name) ?? 503, "the service answered \(name)")
    }

    // MARK: PN-1 registrations

    /// `/v1/push/sub-key/{sub}/devices/{token}[/remove]?type=…&add=…&remove=…` and
    /// `/v2/push/sub-key/{sub}/devices-apns2/{token}[/remove]?environment=…&topic=…`.
    func pubnubRegistration(segments: [String], query: [String: String]) -> ServiceAnswer {
        let v2 = segments[0] == "v2"
        guard segments.count == 6 || (segments.count == 7 && segments[6] == "remove"), segments[1] == "push",
            segments[2] == "sub-key", segments[4] == (v2 ? "devices-apns2" : "devices")
        else {
            return Self.refusal(
                400,
                v2
                    ? "the path must be /v2/push/sub-key/{sub}/devices-apns2/{token}[/remove]"
                    : "the path must be /v1/push/sub-key/{sub}/devices/{token}[/remove]")
        }
        let subKey = segments[3]
        let token = segments[5]
        guard !subKey.isEmpty else { return Self.refusal(400, "Invalid Subscribe Key: it is empty") }
        guard !token.isEmpty else { return Self.refusal(400, "Invalid device token: it is empty") }
        var device: PubNubDevice
        if v2 {
            guard let name = query["environment"], let environment = APNsEnvironment(rawValue: name) else {
                return Self.refusal(
                    400,
                    "Invalid environment argument: it must be development or production, not '\(query["environment"] ?? "")'"
                )
            }
            guard let topic = query["topic"], !topic.isEmpty else {
                return Self.refusal(400, "Missing topic argument: the app's bundle id")
            }
            device = PubNubDevice(gateway: .apns2, token: token, topic: topic, environment: environment)
        } else {
            guard let name = query["type"], let gateway = PubNubDevice.Gateway(rawValue: name), gateway != .apns2 else {
                return Self.refusal(
                    400,
                    "Invalid type argument: it must be gcm, fcm or apns (apns2 is /v2/), not '\(query["type"] ?? "")'")
            }
            device = PubNubDevice(gateway: gateway, token: token)
        }
        if device.gateway.isApple { device.token = token.lowercased() }
        func channels(_ name: String) -> [String] {
            (query[name] ?? "").split(separator: ",").map(String.init).filter { !$0.isEmpty }
        }
        var report = JSONObject([("network", "pubnub"), ("status", 200), ("sub_key", .string(subKey))])
        report["device"] = deviceID(of: device).map(JSON.string) ?? .null
        let modified = JSON.array([1, "Modified Channels"]).compactBytes
        if segments.count == 7 {
            registrations.removeDevice(device, subKey: subKey)
            report["effect"] = .string("removed the \(device.gateway.rawValue) device from all its channels")
            return (Report(report), Self.reply(200, modified))
        }
        let added = channels("add")
        let removed = channels("remove")
        guard !added.isEmpty || !removed.isEmpty else {
            let list = registrations.channels(of: device, subKey: subKey)
            report["effect"] = .string("listed the device's \(list.count) channel\(list.count == 1 ? "" : "s")")
            return (Report(report), Self.reply(200, JSON.array(list.map(JSON.string)).compactBytes))
        }
        registrations.add(added, for: device, subKey: subKey)
        registrations.remove(removed, for: device, subKey: subKey)
        var words: [String] = []
        if !added.isEmpty { words.append("added \(added.joined(separator: ","))") }
        if !removed.isEmpty { words.append("removed \(removed.joined(separator: ","))") }
        report["effect"] = .string(words.joined(separator: "; ") + " for the \(device.gateway.rawValue) device")
        return (Report(report), Self.reply(200, modified))
    }

    /// The world's device that holds a registered token, if any.
    private func deviceID(of device: PubNubDevice) -> String? {
        world.registry.entry(token: device.token)?.deviceID
    }

    // MARK: PN-2 … PN-5 publishing

    /// `GET /publish/{pub}/{sub}/0/{channel}/0/{message}` or `POST` without the message.
    func pubnubPublish(_ request: HTTPRequest, segments: [String]) -> ServiceAnswer {
        // /publish/{pub}/{sub}/{signature: 0}/{channel}/{callback: 0}[/{message}]
        guard segments.count >= 6, segments[3] == "0", segments[5] == "0", !segments[1].isEmpty,
            !segments[2].isEmpty, !segments[4].isEmpty
        else {
            return Self.refusal(400, "the path must be /publish/{pub_key}/{sub_key}/0/{channel}/0[/{message}]")
        }
        let subKey = segments[2]
        let channel = segments[4]
        let text: [UInt8]
        if request.hasMethod("POST") {
            guard segments.count == 6 else {
                return Self.refusal(400, "a POST publish has no message in its path; the body is the message")
            }
            text = request.body
        } else {
            guard segments.count >= 7 else {
                return Self.refusal(400, "a GET publish carries the message, URL-encoded, after /0/")
            }
            text = Array(segments[6...].joined(separator: "/").utf8)
        }
        let timetoken = nextTimetoken()
        var report = JSONObject([
            ("network", "pubnub"), ("channel", .string(channel)), ("sub_key", .string(subKey)),
            ("timetoken", .string(timetoken)),
        ])
        let message: JSON
        do {
            message = try JSON.parse(text)
        } catch {
            report["status"] = 400
            report["effect"] = .string("refused: the message is not JSON: \(error)")
            return (Report(report), Self.reply(400, JSON.array([0, "Invalid JSON", .string(timetoken)]).compactBytes))
        }
        report["status"] = 200
        let sent = Self.reply(200, JSON.array([1, "Sent", .string(timetoken)]).compactBytes)
        let object = message.objectValue ?? JSONObject()
        let apns = object["pn_apns"]?.objectValue
        let gcm = object["pn_fcm"]?.objectValue ?? object["pn_gcm"]?.objectValue
        guard apns != nil || gcm != nil else {
            report["effect"] = .string("sent as a realtime message only: it has no pn_apns, pn_gcm or pn_fcm")
            report["devices"] = []
            return (Report(report), sent)
        }
        var results: [JSON] = []
        for device in registrations.devices(on: channel, subKey: subKey) {
            world.forgetTouched()
            var entry = JSONObject([
                ("device", deviceID(of: device).map(JSON.string) ?? .null), ("token", .string(device.token)),
                ("gateway", .string(device.gateway.rawValue)),
            ])
            entry["result"] = .string(
                device.gateway.isApple
                    ? pushAPNs(apns, to: device) : pushFCM(gcm, to: device))
            // One device's deliveries are all written before the next one's.
            if let problem = world.settle() { entry["result"] = .string(problem) }
            results.append(.object(entry))
        }
        let counts = ["delivered", "skipped", "rejected"].map { word in
            (word, results.filter { $0["result"]?.stringValue?.hasPrefix(word) == true }.count)
        }
        report["effect"] = .string(
            "pushed to \(results.count) registered device\(results.count == 1 ? "" : "s"): "
                + counts.map { "\($0.1) \($0.0)" }.joined(separator: ", "))
        report["devices"] = .array(results)
        return (Report(report), sent)
    }

    /// Whether a list of tokens names an APNs token: hex, so in any case, as its
    /// registration (kept lowercased) is.
    static func names(_ list: JSON?, appleToken token: String) -> Bool {
        strings(list).contains { $0.lowercased() == token }
    }

    /// The gateway's own keys, never part of a push.
    static let gatewayKeys: Set = ["pn_push", "pn_exceptions", "pn_debug", "pn_ttl", "pn_collapse_id"]

    /// PN-3, PN-4: `pn_apns` to one iOS registration, through the APNs validator.
    private func pushAPNs(_ message: JSONObject?, to device: PubNubDevice) -> String {
        guard let message else { return "skipped: the message has no pn_apns for an iOS device" }
        if Self.names(message["pn_exceptions"], appleToken: device.token) {
            return "skipped: the token is in pn_apns.pn_exceptions (PN-4)"
        }
        var headers: [String: String] = [:]
        var environment = device.environment ?? .production
        if let topic = device.topic { headers["apns-topic"] = topic }
        if device.gateway == .apns, let entry = world.registry.entry(token: device.token) {
            // The legacy gateway has no topic of its own: the certificate's app's.
            headers["apns-topic"] = entry.bundleID
            environment = entry.environment
        }
        var pushType = "alert"
        if let pushes = message["pn_push"]?.arrayValue {
            // The first entry with a target naming this registration's (topic,
            // environment); a legacy `apns` registration takes the first entry.
            var matching: (push: JSONObject, target: JSON?)?
            for push in pushes.compactMap(\.objectValue) where matching == nil {
                if device.gateway == .apns {
                    matching = (push, nil)
                } else if let target = (push["targets"]?.arrayValue ?? []).first(where: { target in
                    target["topic"]?.stringValue == device.topic
                        && (target["environment"]?.stringValue ?? "development") == device.environment?.rawValue
                }) {
                    matching = (push, target)
                }
            }
            guard let (push, target) = matching else {
                return "skipped: no pn_push target names this registration's topic and environment"
            }
            if Self.names(target?["excluded_devices"], appleToken: device.token) {
                return "skipped: the token is in the target's excluded_devices (PN-4)"
            }
            pushType = push["push_type"]?.stringValue ?? pushType
            if let collapse = push["collapse_id"]?.stringValue { headers["apns-collapse-id"] = collapse }
            if let expiration = push["expiration"] { headers["apns-expiration"] = Self.headerText(expiration) }
        }
        headers["apns-push-type"] = pushType
        var payload = JSONObject()
        for (key, value) in message where !Self.gatewayKeys.contains(key) { payload[key] = value }
        let body = JSON.object(payload)
        let apnsRequest = APNsRequest(
            headers: headers, body: body.compactBytes, parsedBody: body, token: device.token, environment: environment)
        switch apns.validate(apnsRequest) {
        case .failure(let rejection):
            return "rejected by APNs: \(rejection.status) \(rejection.reason)"
        case .success(let accepted):
            do {
                let (_, outcome) = try apns.deliver(accepted.notification, holder: accepted.holder)
                return "delivered through APNs: " + outcome.effect
            } catch {
                return "rejected: \(error)"
            }
        }
    }

    /// PN-3, PN-4: `pn_gcm` / `pn_fcm` to one Android registration, through FCM's rules.
    private func pushFCM(_ gcm: JSONObject?, to device: PubNubDevice) -> String {
        guard let gcm else { return "skipped: the message has no pn_gcm or pn_fcm for an Android device" }
        if Self.strings(gcm["pn_exceptions"]).contains(device.token) {
            return "skipped: the token is in pn_gcm.pn_exceptions (PN-4)"
        }
        var message = JSONObject([("token", .string(device.token))])
        if let notification = gcm["notification"] { message["notification"] = notification }
        if let data = gcm["data"] { message["data"] = data }
        let body = JSON.object(JSONObject([("message", .object(message))]))
        let project = world.registry.entry(token: device.token)?.project ?? DeviceOptions().fcmProject
        switch fcm.send(body: body.compactBytes, parsed: body, project: nil, defaultProject: project) {
        case .failure(let error):
            return "rejected by FCM: \(error.code) \(error.errorCode ?? error.status): \(error.message)"
        case .success(let sent):
            return "delivered through FCM: " + (sent.effect ?? "sent")
        }
    }

    /// A 17-digit timetoken (100 ns units since 1970), increasing.
    private func nextTimetoken() -> String {
        lastTimetoken = max(world.clock() * 10_000, lastTimetoken + 1)
        return String(lastTimetoken)
    }

    private static func strings(_ value: JSON?) -> [String] {
        (value?.arrayValue ?? []).compactMap(\.stringValue)
    }

    private static func headerText(_ value: JSON) -> String {
        value.stringValue ?? value.compactText
    }

    static func reply(_ status: Int, _ body: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("content-type", "text/javascript; charset=\"UTF-8\"")], body: body)
    }

    /// PubNub's error shape: `{"error": true, "service": …, "status": …, "message": …}`.
    static func refusal(_ status: Int, _ message: String) -> ServiceAnswer {
        let body = JSONObject([
            ("error", true), ("service", "Push"), ("status", .integer(Int64(status))), ("message", .string(message)),
        ])
        let report = JSONObject([
            ("network", "pubnub"), ("status", .integer(Int64(status))), ("effect", .string("refused: \(message)")),
        ])
        return (
            Report(report),
            HTTPResponse.json(status: status, body: JSON.object(body).compactBytes)
        )
    }
}

extension PubNubService: WorldService {
    /// Devices: the push registrations of their tokens (counted with their devices).
    func clear(_ part: WorldPart) -> Int {
        if part == .devices { registrations = PubNubRegistrations() }
        return 0
    }

    func save(_ part: WorldPart) -> JSONObject {
        part == .devices ? JSONObject([("pubnub", registrations.saved)]) : JSONObject()
    }

    func restoring(_ part: WorldPart, from saved: WorldSnapshot.Reader) throws(WorldSnapshot.Refusal) -> (() -> Void)? {
        guard part == .devices else { return nil }
        let restored = try PubNubRegistrations.restored(from: try saved.objects("pubnub"))
        return { [self] in registrations = restored }
    }
}
