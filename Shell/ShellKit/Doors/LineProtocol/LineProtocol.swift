import CXHost
import OrderedJSON
import PushPlugin
import SimulatedDevice

/// `cxshell serve`'s line protocol (`../shared/spec/shell-protocol.md`) as one door onto
/// the world: a request line in, its deliveries and reply out. Each op is a small
/// handler in the table below (`DeviceOps`, `CoreOps`, `PushOps`, `CredentialOps`,
/// `WorldOps`); the inspector's `POST /api/v1/requests` runs the same handlers.
///
/// A request is handled completely, and the hosts it touched are idle, before its
/// reply. A request that cannot be understood, or that does not fit the device, gets
/// `ok: false` with a sentence and changes nothing.
final class LineProtocol {
    /// The longest request line accepted.
    static let maxLineBytes = 1 << 20
    /// One op: it reads its request's fields and writes its reply's; a thrown
    /// `Request.Invalid` or `DeviceRefusal` becomes `ok: false` with its sentence.
    typealias Handler = (LineProtocol) -> (Request, inout JSONObject) throws -> Void

    let world: World
    let apns: APNsService
    let fcm: FCMService
    let oauth: OAuthService
    let appwrite: AppwriteService
    /// The ops in the order the unknown-op error lists them.
    private let names: [String]
    private let handlers: [String: Handler]

    init(world: World, apns: APNsService, fcm: FCMService, oauth: OAuthService, appwrite: AppwriteService) {
        self.world = world
        self.apns = apns
        self.fcm = fcm
        self.oauth = oauth
        self.appwrite = appwrite
        let table: [(String, Handler)] = [
            ("device", LineProtocol.makeDevice), ("devices", LineProtocol.listDevices),
            ("permission", LineProtocol.permission), ("launch", LineProtocol.launch),
            ("background", LineProtocol.background), ("foreground", LineProtocol.foreground),
            ("kill", LineProtocol.kill), ("force_stop", LineProtocol.forceStop), ("call", LineProtocol.call),
            ("notify", LineProtocol.notify), ("subscribe", LineProtocol.subscribe),
            ("unsubscribe", LineProtocol.unsubscribe), ("apns", LineProtocol.sendAPNs),
            ("simctl", LineProtocol.simctl), ("fcm", LineProtocol.sendFCM), ("tap", LineProtocol.tap),
            ("dismiss", LineProtocol.dismiss), ("restore", LineProtocol.restore), ("low_power", LineProtocol.lowPower),
            ("idle", LineProtocol.idle), ("focus", LineProtocol.focus),
            ("channel", LineProtocol.notificationChannel),
            ("tray", LineProtocol.tray), ("rotate_token", LineProtocol.rotateToken), ("state", LineProtocol.state),
            ("uninstall", LineProtocol.uninstall), ("install", LineProtocol.install),
            ("fcm_topic", LineProtocol.fcmTopic), ("apns_key", LineProtocol.apnsKey),
            ("google_key", LineProtocol.googleKey), ("clock", LineProtocol.clock),
            ("network", LineProtocol.network), ("chaos", LineProtocol.chaos),
            ("appwrite_project", LineProtocol.appwriteProject), ("reset", LineProtocol.reset),
        ]
        names = table.map(\.0)
        handlers = Dictionary(uniqueKeysWithValues: table)
    }

    /// Runs one request line from `source` (the log's name for the door it came by) and
    /// logs it: its reply and deliveries; nil for a line of JSON white space only.
    func run(line: [UInt8], source: String) -> (reply: JSONObject, deliveries: [String])? {
        if line.allSatisfy(JSONSpace.isSpace) { return nil }
        let (reply, deliveries, op) = execute(line: line)
        world.finish(source: source, status: reply["ok"] == true ? 200 : 400, deliveries: deliveries) { record in
            record = RequestLog.Record { $0.member("op", op) }
            record.body = line
            let touched = world.touchedIDs
            if touched.isEmpty, let id = reply["device"]?.stringValue {
                record.touched(id)
            } else {
                record.devices = touched
            }
            record.error = reply["error"]?.stringValue
            record.reason = reply["reason"]?.stringValue
            record.effect = reply["effect"]?.stringValue
            record.chaos = reply["chaos"]?.stringValue
            record.deliveries = deliveries
        }
        return (reply, deliveries)
    }

    /// Runs one request line without logging it: its reply, deliveries and op.
    func execute(line: [UInt8]) -> (reply: JSONObject, deliveries: [String], op: String?) {
        let request: Request
        do {
            request = try Request(line: line, maxBytes: Self.maxLineBytes)
        } catch {
            world.begin()
            return conclude(Self.error(error.id, error.message), op: nil)
        }
        return execute(request)
    }

    /// Runs one parsed request without logging it: the inspector's bulk devices run one
    /// request many times, parsed once.
    func execute(_ request: Request) -> (reply: JSONObject, deliveries: [String], op: String?) {
        var reply: JSONObject
        world.begin()
        do {
            guard let handler = handlers[request.op] else {
                throw request.invalid("unknown op '\(request.op)'; the ops are: \(names.joined(separator: ", "))")
            }
            // Room for a push's five or six members, made once.
            reply = JSONObject()
            reply.reserveCapacity(8)
            reply["reply"] = request.id
            reply["ok"] = true
            do {
                try handler(self)(request, &reply)
            } catch let refusal as DeviceRefusal {
                reply = Self.error(request.id, refusal.message)
            }
        } catch let invalid as Request.Invalid {
            reply = Self.error(invalid.id, invalid.message)
        } catch {
            reply = Self.error(nil, "\(error)")
        }
        return conclude(reply, op: request.op)
    }

    /// Waits for the hosts the request touched: a host that did not settle turns the
    /// reply into its error.
    private func conclude(_ reply: JSONObject, op: String?) -> (
        reply: JSONObject, deliveries: [String], op: String?
    ) {
        var reply = reply
        if let problem = world.settle() { reply = Self.error(reply["reply"] ?? nil, problem) }
        return (reply, world.takeDeliveries(), op)
    }

    static func error(_ id: JSON, _ message: String) -> JSONObject {
        JSONObject([("reply", id), ("ok", false), ("error", .string(message))])
    }

    /// The device a request names with `"device"`, or the current one; the request
    /// touches it (its host is waited for before the reply).
    func target(_ request: Request) throws -> Device {
        guard let device = try named(request) else {
            throw request.invalid(#"there is no device yet: start with {"op":"device","platform":"ios"}"#)
        }
        world.touch(device)
        return device
    }

    /// The device a request names with `"device"`, or the current one (nil when there is
    /// none yet), without touching it: for a push that goes by token, the device it
    /// reaches is the one its service touches, and only that one is logged.
    func named(_ request: Request) throws -> Device? {
        guard let name = try request.optionalString("device") else { return world.current }
        guard let named = world.devicesByID[name] else {
            throw request.invalid("there is no device '\(name)'; \(Self.knownDevices(world.devices.lazy.map(\.id)))")
        }
        return named
    }

    /// The devices an unknown id's error names: the count and at most the first five, so
    /// the sentence (kept in the log) stays short however large the world.
    static func knownDevices(_ ids: some Collection<String>) -> String {
        switch ids.count {
        case 0: return "there is none yet"
        case 1...5: return "the devices are: " + ids.joined(separator: ", ")
        default: return "there are \(ids.count) devices: " + ids.prefix(5).joined(separator: ", ") + ", …"
        }
    }

    /// The device's running app's host, or a refusal that says to launch it.
    func runningHost(_ device: Device) throws -> PluginHost {
        guard let host = device.host else {
            throw DeviceRefusal("the app is not running: launch it first (the core lives in the app's process)")
        }
        return host
    }

    func requirePlatform(_ platform: PushPlatform, _ device: Device, _ request: Request) throws {
        guard device.platform == platform else {
            let service = platform == .ios ? "an iOS" : "an Android"
            throw DeviceRefusal("\(request.op) sends to \(service) device; this device is \(device.platform.rawValue)")
        }
    }
}
