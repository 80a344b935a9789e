import CXHost
import Foundation
import OrderedJSON
import PushPlugin
import PushServices
import SimulatedDevice

/// `cxshell serve`'s protocol (`../shared/spec/shell-protocol.md`): one request line
/// in, its output lines out (the deliveries it caused, then its reply). The shell
/// plays the app core and the outside world; the device plays the OS.
///
/// A request is handled completely, and the app's host is idle, before `handle`
/// returns. A request the shell cannot understand, or that does not fit the device,
/// gets `ok: false` with a sentence and changes nothing.
public final class Session {
    /// The longest request line accepted.
    public static let maxLineBytes = 1 << 20
    static let ops = [
        "device", "permission", "launch", "background", "foreground", "kill", "force_stop", "call", "notify",
        "subscribe", "unsubscribe", "apns", "simctl", "fcm", "tap", "tray", "rotate_token", "state",
    ]

    private let endpoint = CoreEndpoint()
    private var device: Device?
    private let clock: () -> Int64

    /// `clock` gives milliseconds since 1970 (for retired tokens' timestamps).
    public init(clock: @escaping () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }) {
        self.clock = clock
    }

    /// Handles one request line; returns the lines to write, deliveries first. A line
    /// of JSON white space only is not a request: it gets no line at all.
    public func handle(line: some Collection<UInt8>) -> [String] {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) { return [] }
        var reply: JSONObject
        do {
            let request = try Request(line: line, maxBytes: Self.maxLineBytes)
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
        do {
            try device?.waitUntilIdle()
        } catch {
            // Only a session driven from its own host's thread gets here.
            reply = Self.error(reply["reply"] ?? nil, "\(error)")
        }
        return endpoint.takeLines() + [reply.compactText]
    }

    /// The device's current push token, if there is a device with one.
    public var deviceToken: String? { device?.token }

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
        guard let device else {
            throw request.invalid(#"there is no device yet: start with {"op":"device","platform":"ios"}"#)
        }
        switch request.op {
        case "permission":
            let answer = try request.string("answer")
            guard answer == "grant" || answer == "deny" else {
                throw request.invalid("\"answer\" must be grant or deny, not '\(answer)'")
            }
            device.setPermission(grant: answer == "grant")
            reply["permission"] = .string(device.authorization.rawValue)
        case "launch":
            reply["state"] = .string(device.launch().rawValue)
        case "background":
            reply["state"] = .string(try device.moveToBackground().rawValue)
        case "foreground":
            reply["state"] = .string(try device.moveToForeground().rawValue)
        case "kill":
            reply["state"] = .string(try device.kill().rawValue)
            endpoint.processEnded()
        case "force_stop":
            reply["state"] = .string(try device.forceStop().rawValue)
            endpoint.processEnded()
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
            guard let answer = endpoint.takeAnswer(id) else {
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
            try requirePlatform(.ios, device, request)
            let body = try request.body("body")
            let apns = APNsRequest(
                headers: try request.headers(), body: body.bytes, parsedBody: body.value,
                token: try request.optionalString("token"))
            switch apns.validate(for: device.apnsDestination) {
            case .failure(let rejection):
                reply = Self.rejection(request.id, rejection)
            case .success(let notification):
                reply["apns-id"] = .string(notification.apnsID ?? device.makeAPNsID())
                record(
                    device.receive(apnsPayload: notification.payload, collapseID: notification.collapseID), in: &reply)
            }
        case "simctl":
            try requirePlatform(.ios, device, request)
            let file = try request.body("file")
            let simctl = SimctlPayload(
                file: file.bytes, parsedFile: file.value, bundleArgument: try request.optionalString("bundle"))
            switch simctl.validate(installedBundle: device.bundleID) {
            case .failure(let rejection):
                reply = Self.rejection(request.id, rejection)
            case .success(let accepted):
                reply["apns-id"] = .string(device.makeAPNsID())
                record(device.receive(apnsPayload: accepted.payload, collapseID: nil), in: &reply)
            }
        case "fcm":
            try requirePlatform(.android, device, request)
            let body = try request.body("body")
            switch FCMRequest(body: body.bytes, parsedBody: body.value).validate(deviceToken: device.token) {
            case .failure(let error):
                reply = JSONObject([
                    ("reply", request.id), ("ok", false),
                    (
                        "error",
                        [
                            ("code", .integer(Int64(error.code))), ("status", .string(error.status)),
                            ("message", .string(error.message)),
                        ].jsonObject
                    ),
                ])
            case .success(let message):
                let messageID = device.makeFCMMessageID()
                reply["name"] = .string("projects/cxshell/messages/\(messageID)")
                record(Self.fcmOutcome(message, device: device, messageID: messageID), in: &reply)
            }
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
            let buffer = device.buffer
            reply["state"] = .string(device.appState.rawValue)
            reply["platform"] = .string(device.platform.rawValue)
            reply["permission"] = .string(device.authorization.rawValue)
            reply["token"] = device.token.map(JSON.string) ?? .null
            reply["subscriptions"] = .array((device.host?.subscribedKeys ?? []).map(JSON.string))
            reply["buffered"] = .integer(Int64(buffer.buffered))
            reply["dropped_taps"] = .integer(Int64(buffer.droppedTaps))
        }
    }

    private func makeDevice(_ request: Request, into reply: inout JSONObject) throws {
        let name = try request.string("platform")
        guard let platform = PushPlatform(rawValue: name) else {
            throw request.invalid("\"platform\" must be ios, android or web, not '\(name)'")
        }
        let bundle = try request.optionalString("bundle") ?? "com.example.app"
        guard !bundle.isEmpty else { throw request.invalid("\"bundle\" must not be empty") }
        device?.powerOff()
        endpoint.processEnded()
        _ = endpoint.takeLines()
        let endpoint = endpoint
        device = Device(platform: platform, bundleID: bundle) { endpoint.receive($0) }
        reply["platform"] = .string(platform.rawValue)
        reply["bundle"] = .string(bundle)
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

    private static func fcmOutcome(_ message: FCMMessage, device: Device, messageID: String) -> PushOutcome {
        if message.validateOnly {
            return PushOutcome(effect: "validated only (validate_only is true): nothing was sent")
        }
        switch message.target {
        case .token: return device.receive(fcm: message, messageID: messageID)
        case .topic(let topic):
            return PushOutcome(
                effect: "accepted for topic '\(topic)'; no device here subscribes to topics, so nothing was delivered")
        case .condition:
            return PushOutcome(
                effect: "accepted for a topic condition; no device here subscribes to topics, so nothing was delivered")
        }
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
