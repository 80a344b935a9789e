import Credentials
import Foundation
import HTTPMessage
import OrderedJSON
import PushPlugin
import SimulatedDevice

/// Who may reach the inspector (inspector.md, "Security"): the shell's own host names,
/// and the bearer token when one is set.
public struct InspectorSettings: Sendable {
    /// Required as `Authorization: Bearer <token>` on every inspector path but the
    /// health checks; nil: open (loopback only, `cxshell serve` sees to that).
    public var token: String?
    /// Names besides `localhost` and IP literals that address the shell (`--api-host`).
    public var hosts: Set<String>

    public init(token: String? = nil, hosts: Set<String> = []) {
        self.token = token
        self.hosts = Set(hosts.map { $0.lowercased() })
    }

    /// Whether `host` (from `:authority` / `Host`, without its port) addresses the shell.
    func isOwn(_ host: String?) -> Bool {
        guard let host, !host.isEmpty else { return false }
        if host == "localhost" || hosts.contains(host) { return true }
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }
}

/// What the inspector serves (inspector.md, "Where it is served"), by path without its
/// query; nil for a path it does not have.
enum InspectorResource: Equatable {
    case page, favicon, health, metrics, openAPI, requests, world, reset, snapshot, devices, log, logHAR, stream
    case credentials, chaos
    case device(String)
    case chaosRule(String)
    case entry(String)
    case entrySimctl(String)

    init?(_ path: String) {
        let parts = path.split(separator: "/").map(String.init)
        switch parts {
        case []: self = .page
        case ["favicon.ico"]: self = .favicon
        case ["livez"], ["readyz"]: self = .health
        case ["metrics"]: self = .metrics
        case ["api", "v1", "openapi.json"]: self = .openAPI
        case ["api", "v1", "requests"]: self = .requests
        case ["api", "v1", "world"]: self = .world
        case ["api", "v1", "reset"]: self = .reset
        case ["api", "v1", "snapshot"]: self = .snapshot
        case ["api", "v1", "devices"]: self = .devices
        case ["api", "v1", "log"]: self = .log
        case ["api", "v1", "log.har"]: self = .logHAR
        case ["api", "v1", "stream"]: self = .stream
        case ["api", "v1", "credentials"]: self = .credentials
        case ["api", "v1", "chaos"]: self = .chaos
        case _ where parts.count == 4 && parts.starts(with: ["api", "v1", "devices"]): self = .device(parts[3])
        case _ where parts.count == 4 && parts.starts(with: ["api", "v1", "log"]): self = .entry(parts[3])
        case _ where parts.count == 5 && parts.starts(with: ["api", "v1", "log"]) && parts[4] == "simctl":
            self = .entrySimctl(parts[3])
        case _ where parts.count == 4 && parts.starts(with: ["api", "v1", "chaos"]): self = .chaosRule(parts[3])
        default: return nil
        }
    }

    /// Whether a request's path is the inspector's to answer at all: `/`, `/api/v1/…`,
    /// and the few paths beside them. Every network request asks this, so it looks at
    /// bytes, not characters.
    static func claims(_ request: HTTPRequest) -> Bool { request.withPath { $0.map(claims) ?? false } }

    private static func claims(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // No name holds a `?`, so a name that matches ends where the query starts:
        // the path is not searched for one (an APNs path is some 80 bytes).
        func `is`(_ text: StaticString, prefix: Bool = false) -> Bool {
            guard bytes.hasBytePrefix(text) else { return false }
            let length = text.utf8CodeUnitCount
            return prefix || bytes.count == length || bytes[length] == UInt8(ascii: "?")
        }
        return `is`("/") || `is`("/api/v1/", prefix: true) || `is`("/metrics") || `is`("/livez") || `is`("/readyz")
            || `is`("/favicon.ico")
    }
}

/// An inspector request's answer, and what it writes on standard output.
struct InspectorAnswer {
    var response: HTTPResponse
    /// Deliveries and the `{"network":"api",…}` report, for a request that changed the world.
    var lines: [String] = []

    static func json(_ status: Int, _ body: JSONObject) -> InspectorAnswer {
        InspectorAnswer(
            response: HTTPResponse(status: status, headers: jsonHeaders, body: JSON.object(body).compactBytes))
    }

    static func json(_ status: Int, text: String) -> InspectorAnswer {
        InspectorAnswer(response: HTTPResponse(status: status, headers: jsonHeaders, body: Array(text.utf8)))
    }

    static func error(_ status: Int, _ sentence: String) -> InspectorAnswer {
        json(status, JSONObject([("error", .string(sentence))]))
    }

    static let jsonHeaders = [("content-type", "application/json"), ("cache-control", "no-store")]
}

/// The inspector as a door onto the world (inspector.md): the JSON API, the log and its
/// stream, metrics and the page. Its writes run the line protocol's handlers, or ask
/// the world and the services directly, and leave a report line and a log entry.
final class Inspector {
    let world: World
    let lines: LineProtocol
    let apns: APNsService
    let oauth: OAuthService

    init(world: World, lines: LineProtocol, apns: APNsService, oauth: OAuthService) {
        self.world = world
        self.lines = lines
        self.apns = apns
        self.oauth = oauth
    }

    /// An inspector request, checked as the spec's security section says, then served.
    func answer(_ request: HTTPRequest, settings: InspectorSettings) -> InspectorAnswer {
        let target = request.path ?? "/"
        let path = String(target.prefix { $0 != "?" })
        let query =
            target.firstIndex(of: "?").map { HTTPRequest.formFields(Array(target[target.index(after: $0)...].utf8)) }
            ?? [:]
        let method = request.method ?? "GET"
        guard settings.isOwn(request.authorityHost) else {
            return .error(
                421, "the inspector answers only to the shell's own names (localhost, an IP address or --api-host)")
        }
        guard let resource = InspectorResource(path) else {
            return .error(404, "the inspector has no \(method) \(path)")
        }
        // A browser asks for one; there is none, and nothing to log.
        if resource == .favicon { return InspectorAnswer(response: HTTPResponse(status: 204)) }
        if resource == .health && method == "GET" {
            return InspectorAnswer(
                response: HTTPResponse(status: 200, headers: [("content-type", "text/plain")], body: Array("ok\n".utf8))
            )
        }
        // The page is the shell's own static text, with no world in it: a browser opens it
        // by navigation, which carries no bearer header, and its sign-in form then asks
        // for the token that every API request it makes carries.
        if let token = settings.token, resource != .page || method != "GET",
            request.header("authorization") != "Bearer \(token)"
        {
            var answer = InspectorAnswer.error(401, "the inspector needs Authorization: Bearer <the --api-token>")
            answer.response.headers.append(("www-authenticate", #"Bearer realm="cxshell""#))
            return answer
        }
        if ["POST", "PUT", "DELETE", "PATCH"].contains(method) {
            let type = request.header("content-type")?.lowercased() ?? ""
            guard type == "application/json" || type.hasPrefix("application/json;") else {
                return .error(403, "a write to the inspector must carry Content-Type: application/json")
            }
            if let origin = request.header("origin") {
                let own =
                    (request.header(":authority") ?? request.header("host")).map { authority in
                        ["http://" + authority, "https://" + authority]
                    } ?? []
                guard own.contains(origin.lowercased()) else {
                    return .error(403, "a write from another origin (\(origin)) is refused")
                }
            }
        }
        switch (method, resource) {
        case ("GET", .page): return page()
        case ("GET", .metrics): return metricsPage()
        case ("GET", .openAPI): return .json(200, text: InspectorOpenAPI.json)
        case ("POST", .requests): return runLines(request.body)
        case ("GET", .world): return summary()
        case ("POST", .reset): return reset(request.body)
        case ("GET", .snapshot):
            return InspectorAnswer(
                response: HTTPResponse(
                    status: 200, headers: InspectorAnswer.jsonHeaders,
                    body: WorldSnapshot.document(of: world).compactBytes))
        case ("POST", .snapshot): return restore(request.body)
        case ("GET", .devices): return listDevices(query)
        case ("POST", .devices): return createDevices(request.body)
        case ("GET", .device(let id)): return showDevice(id)
        case ("DELETE", .device(let id)): return deleteDevice(id)
        case ("GET", .log): return readLog(query)
        case ("DELETE", .log):
            world.log.clear()
            return InspectorAnswer(response: HTTPResponse(status: 204))
        case ("GET", .logHAR): return readHAR(query)
        case ("GET", .entry(let seq)): return logEntry(seq)
        case ("GET", .entrySimctl(let seq)): return simctlFile(seq)
        case ("GET", .stream): return streamLog(query, lastEventID: request.header("last-event-id"))
        case ("POST", .credentials): return credentials(request.body)
        case ("GET", .chaos): return .json(200, JSONObject([("rules", .array(world.chaos.listed))]))
        case ("POST", .chaos): return addChaosRule(request.body)
        case ("DELETE", .chaosRule(let id)): return removeChaosRule(id)
        default: return .error(405, "the inspector has no \(method) \(path)")
        }
    }

    /// The body as a JSON object, or an answer that says why not.
    private func object(_ body: [UInt8]) -> Result<JSONObject, InspectorAnswerError> {
        guard let value = try? JSON.parse(body) else {
            return .failure(InspectorAnswerError(answer: .error(400, "the body is not JSON")))
        }
        guard let object = value.objectValue else {
            return .failure(InspectorAnswerError(answer: .error(400, "the body must be a JSON object")))
        }
        return .success(object)
    }

    struct InspectorAnswerError: Error {
        let answer: InspectorAnswer
    }

    /// The report line an API write leaves on standard output, and its log entry.
    private func report(
        _ op: String, status: Int, effect: String, devices: [String] = [], deliveries: [String] = [], body: [UInt8] = []
    ) -> String {
        world.finish(source: "api", status: status, deliveries: deliveries) { record in
            record = RequestLog.Record { $0.member("op", op) }
            if !body.isEmpty { record.body = body }
            record.devices = devices
            record.effect = effect
            record.deliveries = deliveries
        }
        return Self.apiReport(op: .string(op), status: status, effect: effect)
    }

    /// The `{"network":"api",…}` line an API write leaves on standard output.
    static func apiReport(op: JSON, status: Int, effect: String) -> String {
        JSONObject([("network", "api"), ("op", op), ("status", .integer(Int64(status))), ("effect", .string(effect))])
            .compactText
    }

    // MARK: The line protocol over HTTP

    /// `POST /api/v1/requests`: one request or an array, applied in order; the lines
    /// standard output would carry for them.
    private func runLines(_ body: [UInt8]) -> InspectorAnswer {
        guard let value = try? JSON.parse(body) else { return .error(400, "the body is not JSON") }
        let requests: [JSON]
        switch value {
        case .object: requests = [value]
        case .array(let items) where !items.isEmpty && items.count <= 10_000: requests = items
        default: return .error(400, "the body must be a request object or an array of 1 to 10,000 of them")
        }
        var answer: [String] = []
        var written: [String] = []
        for request in requests {
            // A JSON value is never white space only: every request runs.
            guard let (reply, deliveries) = lines.run(line: request.compactBytes, source: "api") else { continue }
            answer += deliveries + [reply.compactText]
            written += deliveries
            written.append(
                Self.apiReport(
                    op: request["op"] ?? .null, status: reply["ok"] == true ? 200 : 400,
                    effect: reply["effect"]?.stringValue ?? reply["error"]?.stringValue ?? "done"))
        }
        var result = InspectorAnswer.json(200, text: #"{"lines":["# + answer.joined(separator: ",") + "]}")
        result.lines = written
        return result
    }

    // MARK: The world and its devices

    /// `POST /api/v1/snapshot`: the world replaced by a state document's (the log stays);
    /// a damaged or newer document is refused and changes nothing.
    private func restore(_ body: [UInt8]) -> InspectorAnswer {
        guard let value = try? JSON.parse(body) else { return .error(400, "the body is not JSON") }
        let counts: JSONObject
        do {
            counts = try WorldSnapshot.restore(value, into: world)
        } catch {
            return .error(400, error.description)
        }
        let effect = "the world was replaced by the snapshot: \(counts["devices"]?.integerValue ?? 0) devices"
        var answer = InspectorAnswer.json(
            200, JSONObject([("restored", .object(counts)), ("effect", .string(effect))]))
        answer.lines = [report("snapshot", status: 200, effect: effect)]
        return answer
    }

    /// `POST /api/v1/reset`: the `reset` op (an empty body keeps nothing); its reply's
    /// `cleared` and `kept`, logged after the log itself was cleared.
    private func reset(_ body: [UInt8]) -> InspectorAnswer {
        var fields = JSONObject()
        if !body.allSatisfy(JSONSpace.isSpace) {
            switch object(body) {
            case .failure(let error): return error.answer
            case .success(let value): fields = value
            }
        }
        let (reply, deliveries, _) = lines.execute(Request(op: "reset", fields: fields))
        guard reply["ok"] == true else {
            return .error(400, reply["error"]?.stringValue ?? "the reset was refused")
        }
        let effect = reply["effect"]?.stringValue ?? "reset"
        var answer = InspectorAnswer.json(
            200,
            JSONObject([
                ("cleared", reply["cleared"] ?? .null), ("kept", reply["kept"] ?? .null), ("effect", .string(effect)),
            ]))
        answer.lines = deliveries + [report("reset", status: 200, effect: effect, deliveries: deliveries, body: body)]
        return answer
    }

    private func summary() -> InspectorAnswer {
        var counts = JSONObject()
        for (source, byStatus) in world.log.counts.sorted {
            var statuses = JSONObject()
            for (status, count) in byStatus.sorted(by: { $0.key < $1.key }) {
                statuses[String(status)] = .integer(Int64(count))
            }
            counts[source] = .object(statuses)
        }
        return .json(
            200,
            JSONObject([
                ("version", .string(Session.version)),
                ("listening", world.hub.frontDoorAddress.map(JSON.string) ?? .null),
                ("ca", world.caPath.map(JSON.string) ?? .null),
                ("uptime_ms", .integer(World.monotonicMilliseconds() - world.startedAt)),
                ("devices", .integer(Int64(world.devices.count))),
                (
                    "log",
                    .object(
                        JSONObject([
                            ("retained", .integer(Int64(world.log.retained))), ("dropped", .integer(world.log.dropped)),
                            ("max", .integer(Int64(world.log.max))), ("next_seq", .integer(world.log.nextSeq)),
                            ("secrets", .string(world.log.showsSecrets ? "shown" : "redacted")),
                        ]))
                ),
                ("counts", .object(counts)),
                (
                    "watching",
                    .object(
                        JSONObject([
                            ("polls", .integer(Int64(world.watchers.polls.count))),
                            ("streams", .integer(Int64(world.watchers.streams.count))),
                        ]))
                ),
                ("connections", .integer(Int64(world.connectionCount()))),
            ]))
    }

    /// One device as the list shows it: its `state`, its bundle and its tray's size.
    private func listing(_ device: Device) -> JSONObject {
        var entry = JSONObject([("device", .string(device.id))])
        for (key, value) in device.stateReport where key != "device" { entry[key] = value }
        entry["bundle"] = .string(device.bundleID)
        entry["tray"] = .integer(Int64(device.trayEntries.count))
        switch device.platform {
        case .ios:
            entry["apns_environment"] = .string(device.options.apnsEnvironment.rawValue)
            entry["apns_team"] = .string(device.options.apnsTeam)
        case .android: entry["fcm_project"] = .string(device.options.fcmProject)
        default: break
        }
        return entry
    }

    private func listDevices(_ query: [String: String]) -> InspectorAnswer {
        guard let limit = Self.number(query["limit"], default: 100, in: 1...1_000) else {
            return .error(400, "limit must be a whole number from 1 to 1000")
        }
        let devices = world.devices
        var start = devices.startIndex
        if let after = query["after"] {
            guard let index = world.index(of: after) else {
                return .error(400, "after names no device: '\(after)'")
            }
            start = index + 1
        }
        var found: [JSON] = []
        var next: String?
        for device in devices[start...] {
            if let platform = query["platform"], device.platform.rawValue != platform { continue }
            if let state = query["state"], device.appState.rawValue != state { continue }
            if found.count == limit {
                next = found.last?["device"]?.stringValue
                break
            }
            found.append(.object(listing(device)))
        }
        return .json(200, JSONObject([("devices", .array(found)), ("next", next.map(JSON.string) ?? .null)]))
    }

    private func showDevice(_ id: String) -> InspectorAnswer {
        guard let device = world.devicesByID[id] else { return .error(404, "there is no device '\(id)'") }
        var entry = listing(device)
        entry["tray"] = .array(device.trayReport(detail: true))
        entry["topics"] = .array(device.topics.map(JSON.string))
        let text = String(JSON.object(entry).compactText.dropLast())
        return .json(
            200,
            text: text + #","deliveries":["# + world.endpoint.recentDeliveries(of: id).joined(separator: ",") + "]}")
    }

    /// `POST /api/v1/devices`: the `device` op's options, `count` of them, each made
    /// ready (launched, registered, subscribed to `push` `events`) when asked.
    private func createDevices(_ body: [UInt8]) -> InspectorAnswer {
        let options: JSONObject
        switch object(body) {
        case .failure(let error): return error.answer
        case .success(let value): options = value
        }
        let count: Int
        switch options["count"] {
        case nil: count = 1
        case .number(let number)? where Int(number.text).map({ (1...100_000).contains($0) }) == true:
            count = Int(number.text)!
        default: return .error(400, "count must be a whole number from 1 to 100000")
        }
        var ready = false
        switch options["ready"] {
        case nil: break
        case .bool(let value)?: ready = value
        default: return .error(400, "ready must be true or false")
        }
        var fields = JSONObject()
        for (key, value) in options where key != "count" && key != "ready" && key != "op" { fields[key] = value }
        // All or nothing: what can be known before making a device is checked first, and a
        // device refused later takes the ones this request made with it.
        if ready, let platform = fields["platform"]?.stringValue.flatMap(PushPlatform.init(rawValue:)),
            platform.tokenService == nil
        {
            return refusedDevices(
                "ready needs a platform with push (ios or android): a \(platform.rawValue) app cannot register",
                body: body)
        }
        let deviceRequest = Request(op: "device", fields: fields)
        var made: [JSON] = []
        var ids: [String] = []
        var deliveries: [String] = []
        func undo(_ sentence: String) -> InspectorAnswer {
            for id in ids { _ = world.remove(device: id) }
            _ = world.takeDeliveries()
            let undone = ids.isEmpty ? "" : "; the \(ids.count) device\(ids.count == 1 ? "" : "s") it made were removed"
            return refusedDevices(sentence + undone, body: body)
        }
        for _ in 0..<count {
            let (reply, written, _) = lines.execute(deviceRequest)
            deliveries += written
            guard reply["ok"] == true, let id = reply["device"]?.stringValue else {
                return undo(reply["error"]?.stringValue ?? "the device was refused")
            }
            ids.append(id)
            // Room for the rest once the first is made: a refused request reserves nothing.
            if made.isEmpty, count > 1, let platform = world.devicesByID[id]?.platform {
                world.reserveCapacity(devices: count - 1, platform: platform)
            }
            var entry = JSONObject([("device", .string(id))])
            if ready {
                let device = JSON.string(id)
                for step in [
                    Request(op: "launch", fields: JSONObject([("device", device)])),
                    Request(
                        op: "call",
                        fields: JSONObject([
                            ("device", device), ("plugin", "push"), ("method", "register"), ("input", ""),
                        ])),
                    Request(
                        op: "subscribe",
                        fields: JSONObject([
                            ("device", device), ("key", "push"), ("plugin", "push"), ("stream", "events"),
                            ("input", ""),
                        ])),
                ] {
                    let (reply, written, _) = lines.execute(step)
                    deliveries += written
                    if reply["ok"] != true {
                        let why = reply["error"]?.stringValue ?? reply["output"]?.stringValue ?? "refused"
                        return undo("device \(id) could not be made ready: \(why)")
                    }
                }
                entry["token"] = world.devicesByID[id]?.token.map(JSON.string) ?? .null
            }
            made.append(.object(entry))
        }
        var answer = InspectorAnswer.json(201, JSONObject([("devices", .array(made))]))
        let effect =
            "made \(made.count) device\(made.count == 1 ? "" : "s")\(ready ? ", each launched, registered and subscribed" : "")"
        answer.lines =
            deliveries + [
                report("devices", status: 201, effect: effect, devices: ids, deliveries: deliveries, body: body)
            ]
        return answer
    }

    /// A bulk creation refused whole: its 400, its report line and its log entry.
    private func refusedDevices(_ sentence: String, body: [UInt8]) -> InspectorAnswer {
        var answer = InspectorAnswer.error(400, sentence)
        answer.lines = [report("devices", status: 400, effect: "nothing made: " + sentence, body: body)]
        return answer
    }

    private func deleteDevice(_ id: String) -> InspectorAnswer {
        guard world.remove(device: id) else { return .error(404, "there is no device '\(id)'") }
        var answer = InspectorAnswer(response: HTTPResponse(status: 204))
        let deliveries = world.takeDeliveries()
        answer.lines =
            deliveries + [
                report(
                    "delete_device", status: 204, effect: "device \(id) was uninstalled and left the world",
                    devices: [id], deliveries: deliveries)
            ]
        return answer
    }

    // MARK: The log

    /// The log filters of a query (`device`, `source`, `status`, `q`), or why not.
    func logFilter(_ query: [String: String]) -> Result<RequestLog.Filter, InspectorAnswerError> {
        if let status = query["status"], !RequestLog.Filter.isStatus(status) {
            return .failure(
                InspectorAnswerError(
                    answer: .error(400, "status must be a status (200) or a class (4xx), not '\(status)'")))
        }
        return .success(
            RequestLog.Filter(
                device: query["device"], source: query["source"], status: query["status"], text: query["q"])
        )
    }

    private func readLog(_ query: [String: String]) -> InspectorAnswer {
        guard let limit = Self.number(query["limit"], default: 100, in: 1...1_000) else {
            return .error(400, "limit must be a whole number from 1 to 1000")
        }
        guard let after = Self.number(query["after"], default: 0, in: 0...Int.max) else {
            return .error(400, "after must be a seq: a whole number")
        }
        let order = query["order"] ?? "asc"
        guard order == "asc" || order == "desc" else { return .error(400, "order must be asc or desc") }
        guard let wait = Self.number(query["wait"], default: 0, in: 0...30) else {
            return .error(400, "wait must be a number of seconds from 0 to 30")
        }
        let filter: RequestLog.Filter
        switch logFilter(query) {
        case .failure(let error): return error.answer
        case .success(let value): filter = value
        }
        let entries = world.log.entries(
            matching: filter, after: Int64(after), limit: limit, newestFirst: order == "desc")
        var response = LogWatchers.answer(entries, after: Int64(after), newestFirst: order == "desc")
        if entries.isEmpty && wait > 0 && order == "asc" {
            // Nothing yet: the answer waits for the first entry that matches, or the time.
            let later = HTTPLater(waitMilliseconds: wait * 1000)
            world.watchers.add(LogWatchers.Poll(filter: filter, after: Int64(after), limit: limit, later: later))
            response.later = later
        }
        return InspectorAnswer(response: response)
    }

    /// `GET /api/v1/log.har`: the network requests among the entries `/log`'s filters
    /// select (`after`, `device`, `source`, `status`, `q`; `limit` up to 100,000, all
    /// retained by default), oldest first, as HAR 1.2.
    private func readHAR(_ query: [String: String]) -> InspectorAnswer {
        guard let limit = Self.number(query["limit"], default: 100_000, in: 1...100_000) else {
            return .error(400, "limit must be a whole number from 1 to 100000")
        }
        guard let after = Self.number(query["after"], default: 0, in: 0...Int.max) else {
            return .error(400, "after must be a seq: a whole number")
        }
        let filter: RequestLog.Filter
        switch logFilter(query) {
        case .failure(let error): return error.answer
        case .success(let value): filter = value
        }
        let entries = world.log.entries(matching: filter, after: Int64(after), limit: limit)
        let document = HARExport.document(entries, version: Session.version)
        return InspectorAnswer(
            response: HTTPResponse(
                status: 200,
                headers: [
                    ("content-type", "application/json"), ("cache-control", "no-store"),
                    ("content-disposition", #"attachment; filename="cxshell.har""#),
                ],
                body: document.compactBytes))
    }

    /// `GET /api/v1/stream`: Server-Sent Events of new entries that match; with
    /// `Last-Event-ID`, first every retained entry after it (and a gap event when some
    /// were dropped).
    private func streamLog(_ query: [String: String], lastEventID: String?) -> InspectorAnswer {
        let filter: RequestLog.Filter
        switch logFilter(query) {
        case .failure(let error): return error.answer
        case .success(let value): filter = value
        }
        var resume: Int64?
        if let lastEventID {
            guard let seq = Int64(lastEventID), seq >= 0 else {
                return .error(400, "Last-Event-ID must be a seq, not '\(lastEventID)'")
            }
            resume = seq
        }
        let later = HTTPLater(waitMilliseconds: 0)
        later.send(
            .begin(status: 200, headers: [("content-type", "text/event-stream"), ("cache-control", "no-store")]))
        // A comment first, so a client sees the stream open before any event; a resumed
        // stream's backlog goes in the same piece.
        var opening = ByteOutput(headRoom: StreamBytes.framingRoom)
        opening.append(": cxshell log stream\n\n")
        // A backlog past one slice goes a slice a connection: the stream ends after it,
        // and the client resumes from the slice's last id (as EventSource does).
        var complete = true
        if let resume {
            complete = LogWatchers.backlog(
                world.log, after: resume, filter: filter, limit: LogWatchers.backlogSlice, into: &opening)
        }
        if let piece = LogWatchers.piece(taking: &opening) { later.send(piece) }
        if !complete {
            later.send(.end)
            var response = HTTPResponse(status: 500)
            response.later = later
            return InspectorAnswer(response: response)
        }
        world.watchers.add(LogWatchers.Stream(filter: filter, later: later))
        var response = InspectorAnswer.error(503, "the stream could not be opened: too many answers are open").response
        response.later = later
        return InspectorAnswer(response: response)
    }

    private func logEntry(_ seq: String) -> InspectorAnswer {
        guard let number = Int64(seq), let entry = world.log.entry(number) else {
            return .error(404, "the log has no entry \(seq) (it keeps \(world.log.firstSeq)…\(world.log.nextSeq - 1))")
        }
        return .json(200, text: entry.text)
    }

    /// `GET /api/v1/log/{seq}/simctl`: an APNs entry as an `.apns` file (PH-15).
    private func simctlFile(_ seq: String) -> InspectorAnswer {
        guard let number = Int64(seq), let entry = world.log.entry(number) else {
            return .error(404, "the log has no entry \(seq) (it keeps \(world.log.firstSeq)…\(world.log.nextSeq - 1))")
        }
        switch SimctlFile.make(entry) {
        case .failure(let refusal): return .error(404, refusal.description)
        case .success(let bytes):
            return InspectorAnswer(
                response: HTTPResponse(
                    status: 200,
                    headers: [
                        ("content-type", "application/json"), ("cache-control", "no-store"),
                        ("content-disposition", "attachment; filename=\"cxshell-\(number).apns\""),
                    ],
                    body: bytes))
        }
    }

    /// A query number within `range`; `fallback` when absent, nil when not a number in it.
    static func number(_ text: String?, default fallback: Int, in range: ClosedRange<Int>) -> Int? {
        guard let text else { return fallback }
        guard let value = Int(text), range.contains(value) else { return nil }
        return value
    }

    // MARK: Credentials for hand tests

    /// `POST /api/v1/credentials`: an APNs provider token signed by a key the world makes
    /// and registers, or an FCM access token bound to a project.
    private func credentials(_ body: [UInt8]) -> InspectorAnswer {
        let request: JSONObject
        switch object(body) {
        case .failure(let error): return error.answer
        case .success(let value): request = value
        }
        let now = world.clock()
        let format = request["format"]
        switch (request["service"]?.stringValue, format?.stringValue) {
        case (nil, "p8"?), ("apns"?, "p8"?): return apnsKeyFile(request, body: body)
        case (nil, "service_account"?), ("fcm"?, "service_account"?): return serviceAccountFile(request, body: body)
        case (_, _) where format != nil:
            return .error(
                400,
                #""format" must be "p8" (an APNs signing key) or "service_account" (an FCM service account's JSON), for its service"#
            )
        case ("apns"?, _):
            let team = request["team"]?.stringValue ?? DeviceOptions().apnsTeam
            let keyID = request["key_id"]?.stringValue ?? "CXSHELL\(apns.keys.keys.count + 1)"
            guard !team.isEmpty, !keyID.isEmpty, let key = SigningKey(),
                let publicKey = PublicKey(pem: key.publicKeyPEM),
                let token = key.es256JWT(
                    header: JSONObject([("alg", "ES256"), ("kid", .string(keyID))]).compactText,
                    claims: JSONObject([("iss", .string(team)), ("iat", .integer(now / 1000))]).compactText)
            else { return .error(400, "team and key_id must not be empty") }
            apns.keys.register(APNsProviderTokens.Key(keyID: keyID, team: team, publicKey: publicKey))
            var answer = InspectorAnswer.json(
                201,
                JSONObject([
                    ("authorization", .string("bearer " + token)), ("team", .string(team)), ("key_id", .string(keyID)),
                    ("expires_at", .string(RequestLog.timestamp((now / 1000 + 3600) * 1000))),
                ]))
            answer.lines = [
                report(
                    "credentials", status: 201,
                    effect:
                        "registered APNs key \(keyID) of team \(team) and signed a provider token with it; from now on every provider token's signature is checked",
                    body: body)
            ]
            return answer
        case ("fcm"?, _):
            guard let project = request["project"]?.stringValue, !project.isEmpty else {
                return .error(400, #"an FCM credential needs "project": the Firebase project it sends to"#)
            }
            let token = oauth.issue(project: project)
            var answer = InspectorAnswer.json(
                201,
                JSONObject([
                    ("authorization", .string("Bearer " + token)), ("project", .string(project)), ("expires_in", 3599),
                ]))
            answer.lines = [
                report(
                    "credentials", status: 201, effect: "issued an FCM access token for project \(project), for 3599 s",
                    body: body)
            ]
            return answer
        default:
            return .error(400, #""service" must be "apns" or "fcm""#)
        }
    }

    /// `"format":"p8"`: an APNs signing key made and registered, as Apple's developer site
    /// hands one out: `{"key_id","team_id","p8"}`, the `.p8` file's text in `p8`.
    private func apnsKeyFile(_ request: JSONObject, body: [UInt8]) -> InspectorAnswer {
        let team = request["team"]?.stringValue ?? DeviceOptions().apnsTeam
        let keyID = request["key_id"]?.stringValue ?? "CXSHELL\(apns.keys.keys.count + 1)"
        guard !team.isEmpty, !keyID.isEmpty else { return .error(400, "team and key_id must not be empty") }
        guard let key = SigningKey(.ecP256), let publicKey = PublicKey(pem: key.publicKeyPEM) else {
            return .error(500, "OpenSSL could not make a key")
        }
        apns.keys.register(APNsProviderTokens.Key(keyID: keyID, team: team, publicKey: publicKey))
        var answer = InspectorAnswer.json(
            201,
            JSONObject([("key_id", .string(keyID)), ("team_id", .string(team)), ("p8", .string(key.privateKeyPEM))]))
        answer.lines = [
            report(
                "credentials", status: 201,
                effect:
                    "made and registered APNs key \(keyID) of team \(team) and handed out its .p8; from now on every provider token's signature is checked",
                body: body)
        ]
        return answer
    }

    /// `"format":"service_account"`: a Google service account of `project` made and
    /// registered, answered as the JSON key file Google's console downloads (private key
    /// included), which firebase-admin's `credentials.Certificate` loads as it is.
    private func serviceAccountFile(_ request: JSONObject, body: [UInt8]) -> InspectorAnswer {
        guard let project = request["project"]?.stringValue, !project.isEmpty,
            project.utf8.allSatisfy({
                $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) || (0x61...0x7A).contains($0)
            })
        else {
            return .error(
                400, #"a service account needs "project": the Firebase project id it sends to (a-z, 0-9 and -)"#)
        }
        guard let key = SigningKey(.rsa2048), let publicKey = PublicKey(pem: key.publicKeyPEM) else {
            return .error(500, "OpenSSL could not make a key")
        }
        let number = oauth.googleKeys.count + 1
        let email = "cxshell-\(number)@\(project).iam.gserviceaccount.com"
        // Google's key ids are 40 hex digits.
        var random = SystemRandomNumberGenerator()
        let keyID = (0..<20).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &random)) }.joined()
        oauth.register(email: email, key: publicKey, project: project)
        let file = JSONObject([
            ("type", "service_account"), ("project_id", .string(project)), ("private_key_id", .string(keyID)),
            ("private_key", .string(key.privateKeyPEM)), ("client_email", .string(email)),
            ("client_id", .string("10000000000000000000\(number)")),
            ("auth_uri", "https://accounts.google.com/o/oauth2/auth"),
            ("token_uri", "https://oauth2.googleapis.com/token"),
            ("auth_provider_x509_cert_url", "https://www.googleapis.com/oauth2/v1/certs"),
            (
                "client_x509_cert_url",
                .string(
                    "https://www.googleapis.com/robot/v1/metadata/x509/cxshell-\(number)%40\(project).iam.gserviceaccount.com"
                )
            ),
            ("universe_domain", "googleapis.com"),
        ])
        var answer = InspectorAnswer.json(201, file)
        answer.lines = [
            report(
                "credentials", status: 201,
                effect:
                    "made and registered service account \(email) of project \(project) and handed out its key file; from now on every assertion's signature is checked",
                body: body)
        ]
        return answer
    }

    // MARK: Chaos rules

    /// `POST /api/v1/chaos`: a rule (chaos.md, "Rules"), as the `chaos` op's `rule`.
    private func addChaosRule(_ body: [UInt8]) -> InspectorAnswer {
        let rule: JSONObject
        switch object(body) {
        case .failure(let error): return error.answer
        case .success(let value): rule = value
        }
        do {
            let added = try world.addChaosRule(rule)
            var answer = InspectorAnswer.json(201, JSONObject([("rule", .object(added))]))
            let id = added["id"]?.stringValue ?? ""
            answer.lines = [report("chaos", status: 201, effect: "added chaos rule \(id)", body: body)]
            return answer
        } catch {
            return .error(400, error.message)
        }
    }

    /// `DELETE /api/v1/chaos/{id}` (`all`: every rule).
    private func removeChaosRule(_ id: String) -> InspectorAnswer {
        guard world.removeChaosRule(id) else { return .error(404, "there is no chaos rule '\(id)'") }
        var answer = InspectorAnswer(response: HTTPResponse(status: 204))
        answer.lines = [report("chaos", status: 204, effect: "removed chaos rule \(id)")]
        return answer
    }

    // MARK: Metrics and the page

    private func metricsPage() -> InspectorAnswer {
        var text = ""
        text += "# HELP cx_requests_total Requests answered, by the door they came by and their status.\n"
        text += "# TYPE cx_requests_total counter\n"
        for (source, byStatus) in world.log.counts.sorted {
            for (status, count) in byStatus.sorted(by: { $0.key < $1.key }) {
                text += "cx_requests_total{source=\"\(source)\",status=\"\(status)\"} \(count)\n"
            }
        }
        text += "# HELP cx_devices Devices in the world.\n# TYPE cx_devices gauge\ncx_devices \(world.devices.count)\n"
        text += "# HELP cx_connections Connections open at the front door.\n# TYPE cx_connections gauge\n"
        text += "cx_connections \(world.connectionCount())\n"
        text +=
            "# HELP cx_log_entries Log entries retained.\n# TYPE cx_log_entries gauge\ncx_log_entries \(world.log.retained)\n"
        text += "# HELP cx_log_dropped_total Log entries dropped by retention.\n# TYPE cx_log_dropped_total counter\n"
        text += "cx_log_dropped_total \(world.log.dropped)\n"
        text += world.metrics.exposition
        return InspectorAnswer(
            response: HTTPResponse(
                status: 200, headers: [("content-type", "text/plain; version=0.0.4; charset=utf-8")],
                body: Array(text.utf8)))
    }

    private func page() -> InspectorAnswer {
        InspectorAnswer(
            response: HTTPResponse(
                status: 200,
                headers: [
                    ("content-type", "text/html; charset=utf-8"), ("cache-control", "no-store"),
                    // Nothing but the shell's own script and style, and no framing by others.
                    (
                        "content-security-policy",
                        "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; frame-ancestors 'none'"
                    ),
                ],
                body: Array(InspectorPage.html.utf8)))
    }
}
