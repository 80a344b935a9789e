import Foundation
import HTTPMessage
import OrderedJSON
import PushServices
import SimulatedDevice

/// What a network request did: the lines to write on standard output (its
/// deliveries, then its report line) before the answer goes back (front-door.md,
/// "Ordering").
public struct NetworkExchange: Sendable {
    public let lines: [String]
    public let response: HTTPResponse

    public init(lines: [String], response: HTTPResponse) {
        self.lines = lines
        self.response = response
    }

    /// The lines as `Session.handle(network:writingLinesTo:)` wrote them, each ended by a newline.
    init(output: [UInt8], response: HTTPResponse) {
        self.init(lines: output.split(separator: 0x0A).map { String(decoding: $0, as: UTF8.self) }, response: response)
    }
}

/// The front door as a door onto the world: a request the transport parsed is routed
/// to its service (by SNI and host, then by path) or to the inspector, answered, and
/// logged. It knows no socket; the services know no route.
final class NetworkDoor {
    let world: World
    let apns: APNsService
    let fcm: FCMService
    let oauth: OAuthService
    let pubnub: PubNubService
    let webhooks: WebhookService
    let appwrite: AppwriteService
    let inspector: Inspector
    /// Who may reach the inspector; nil: it is off, and its paths are nobody's.
    var inspectorSettings: InspectorSettings?

    init(
        world: World, apns: APNsService, fcm: FCMService, oauth: OAuthService, pubnub: PubNubService,
        webhooks: WebhookService, appwrite: AppwriteService, inspector: Inspector
    ) {
        self.world = world
        self.apns = apns
        self.fcm = fcm
        self.oauth = oauth
        self.pubnub = pubnub
        self.webhooks = webhooks
        self.appwrite = appwrite
        self.inspector = inspector
    }

    /// Answers `request`, appending the lines it writes to `output`, each ended by a
    /// newline: the report goes in as bytes, never a `String` (a third of a report line's
    /// cost was making a `String` of it, copied into the output right after).
    func handle(_ request: consuming HTTPRequest, writingLinesTo output: inout ByteOutput) -> HTTPResponse {
        world.begin()
        let route = Self.route(request)
        if route == .inspector, let inspectorSettings {
            // It writes what it changed itself, and logs only writes.
            let answer = inspector.answer(request, settings: inspectorSettings)
            Session.appendLines(answer.lines, to: &output)
            return answer.response
        }
        let (report, response): ServiceAnswer
        switch route {
        case .misdirected(let connection, let authority):
            (report, response) = plainAnswer(
                "http", 421,
                "misdirected: this connection was opened for \(connection), and the request names \(authority)")
        case .service(let service): (report, response) = answer(request, by: service)
        case .unknownHost, .inspector:
            if let service = AppwriteService.claims(request) ? .appwrite : Service(request) {
                (report, response) = answer(request, by: service)
            } else {
                (report, response) = plainAnswer(
                    "http", 404, "no service here answers \(request.method ?? "?") \(request.path ?? "")")
            }
        }
        let problem = world.settle()
        let deliveries = world.takeDeliveries()
        Session.appendLines(deliveries, to: &output)
        if let problem {
            JSONObject([("network", "error"), ("effect", .string(problem))]).write(to: &output)
            output.append(0x0A)
        }
        report.write(to: &output)
        output.append(0x0A)
        finish(consume request, report: report, response: response, deliveries: deliveries)
        return response
    }

    /// Logs the request as answered, taking the request and the report: a closure that
    /// captured them copied them (a retain and a release for each of their strings and
    /// arrays, ~0.6k instructions a push for the report, ~0.25k for the request); this one
    /// takes them out of a variable it captures (the log calls it once at most), and the
    /// log keeps them or takes their facts.
    private func finish(
        _ request: consuming HTTPRequest, report: consuming Report, response: borrowing HTTPResponse,
        deliveries: [String]
    ) {
        let source = report.network ?? "http"
        var request = Optional(request)
        var report = Optional(report)
        world.finish(source: source, status: response.status, deliveries: deliveries) {
            Self.fill(&$0, of: request.take()!, report: report.take()!, response: response, deliveries: deliveries)
        }
    }

    /// Whether a TLS handshake for `serverName` may go on: not when a `tls_fail` rule for
    /// its service meets it. A refused handshake is logged (source `tls`) and reported.
    func handshake(serverName: String) -> (allowed: Bool, lines: [String]) {
        guard let service = Service(host: serverName), world.chaos.applies(to: service.name),
            let met = world.chaos.meetHandshake(service: service.name)
        else { return (true, []) }
        world.begin()
        let rule = ChaosRules.naming(met.id, remaining: met.remaining)
        let report = JSONObject([
            ("network", "tls"), ("host", .string(serverName)), ("status", 0),
            ("effect", .string("the TLS handshake failed by \(rule); nothing delivered")),
            ("chaos", .string(met.id)),
        ])
        world.finish(source: "tls", status: 0, deliveries: []) { record in
            record = RequestLog.Record { $0.member("host", serverName) }
            record.effect = report["effect"]?.stringValue
            record.chaos = met.id
        }
        return (false, [report.compactText])
    }

    /// The service's answer, unless a chaos rule meets the request first: then the
    /// service's own error (nothing delivered), or its answer held back a while.
    private func answer(_ request: HTTPRequest, by service: Service) -> ServiceAnswer {
        guard world.chaos.applies(to: service.name),
            let met = world.chaos.meet(chaosFacts(request, service))
        else { return serve(request, by: service) }
        let rule = ChaosRules.naming(met.id, remaining: met.remaining)
        var (report, response): ServiceAnswer
        switch met.outcome {
        case .answer(let name):
            (report, response) = chaosAnswer(name, rule: met.id, retryAfter: met.retryAfter, request, service)
            report.effect = ChaosRules.answeredEffect(
                status: response.status, name: name, rule: met.id, remaining: met.remaining)
        case .fault(let fault):
            let what =
                switch fault {
                case .goaway: "sent GOAWAY below this stream (the client retries it on a new connection)"
                case .resetStream: "reset the stream (REFUSED_STREAM)"
                case .close: "closed the connection with no answer"
                }
            report = Report(
                Report.Fields(network: service.name, status: 0, effect: "\(what) by \(rule); nothing delivered"))
            // Status 0 in the log: no HTTP answer was given.
            response = HTTPResponse(status: 0)
            response.fault = fault
        case .latency(let milliseconds):
            (report, response) = serve(request, by: service)
            report.effect = (report.effect ?? "") + "; the answer waits \(milliseconds) ms (\(rule))"
            // The transport sends the answer at its deadline; other requests go on meanwhile.
            if milliseconds > 0 { response.later = HTTPLater(waitMilliseconds: milliseconds) }
        }
        report.mark(chaos: met.id)
        return (report, response)
    }

    private func chaosFacts(_ request: HTTPRequest, _ service: Service) -> ChaosRules.Facts {
        switch service {
        case .apns(let environment): apns.chaosFacts(request, environment: environment)
        case .fcm: fcm.chaosFacts(request)
        case .webhook: webhooks.chaosFacts(request)
        case .oauth, .pubnub, .appwrite: ChaosRules.Facts(service: service.name, path: request.path ?? "")
        }
    }

    private func chaosAnswer(_ name: String, rule: String, retryAfter: Int?, _ request: HTTPRequest, _ service: Service)
        -> ServiceAnswer
    {
        switch service {
        case .apns: apns.chaosAnswer(name, rule: rule, request)
        case .fcm: FCMService.chaosAnswer(name, retryAfter: retryAfter)
        case .oauth: OAuthService.chaosAnswer(name)
        case .pubnub: PubNubService.chaosAnswer(name)
        case .webhook: WebhookService.chaosAnswer(name)
        case .appwrite: AppwriteService.chaosAnswer(name)
        }
    }

    private func serve(_ request: HTTPRequest, by service: Service) -> ServiceAnswer {
        switch service {
        case .apns(let environment): apns.answer(request, environment: environment)
        case .fcm: fcm.answer(request)
        case .oauth: oauth.answer(request)
        case .pubnub: pubnub.answer(request)
        case .webhook: webhooks.answer(request)
        case .appwrite: appwrite.answer(request)
        }
    }

    /// The answer to a request the world is too busy to take, as its service gives it
    /// (APNs `ServiceUnavailable`, FCM `UNAVAILABLE` with `Retry-After`), from the route
    /// alone: it runs on the door's thread and touches nothing of the world.
    static func busyAnswer(_ request: HTTPRequest) -> HTTPResponse {
        let service: Service? =
            switch route(request) {
            case .service(let service): service
            case .unknownHost: Service(request)
            case .inspector, .misdirected: nil
            }
        switch service {
        case .apns:
            // A generator of its own (seeded once from the system's), not Foundation's
            // UUID: its formatting alone is some 6,600 instructions, paid when busiest.
            var ids = IDGenerator()
            return APNsService.response(
                status: 503, apnsID: request.header("apns-id") ?? ids.uuid(),
                body: Array(#"{"reason":"ServiceUnavailable"}"#.utf8))
        case .fcm:
            return FCMService.chaosAnswer("UNAVAILABLE", retryAfter: 1).1
        default:
            return .busy
        }
    }

    /// A network request as the log shows it: what was sent, what its report says and
    /// what it was answered.
    static func fill(
        _ record: inout RequestLog.Record, of request: consuming HTTPRequest, report: consuming Report,
        response: HTTPResponse, deliveries: [String]
    ) {
        report.moveFacts(into: &record)
        record.deliveries = deliveries
        record.keep(network: request, answer: response)
    }

    /// A service the front door answers for, by its host (front-door.md's table), or
    /// by its path when the host is not a service's (an IP, `localhost`).
    enum Service: Equatable {
        /// APNs; the environment is the host's (nil: the one that issued the token).
        case apns(APNsEnvironment?)
        case fcm, oauth, pubnub, webhook, appwrite

        /// Its name in chaos rules and report lines.
        var name: String {
            switch self {
            case .apns: "apns"
            case .fcm: "fcm"
            case .oauth: "oauth"
            case .pubnub: "pubnub"
            case .webhook: "webhook"
            case .appwrite: "appwrite"
            }
        }

        /// The service of a host in any case, as DNS compares names (RFC 4343).
        init?(host: String) {
            var text = host
            guard let service = text.withUTF8(Self.named) else { return nil }
            self = service
        }

        /// The service of a host's bytes, compared in any case without making text of them.
        static func named(_ host: UnsafeBufferPointer<UInt8>) -> Service? {
            // Lengths first: every request asks this of two hosts, an IP's too.
            for (name, service) in hosts where name.utf8CodeUnitCount == host.count {
                if matches(host, name) { return service }
            }
            if matches(host, ".pndsn.com", suffix: true) { return .pubnub }  // ps.pndsn.com and its regional hosts
            if matches(host, "cloud.appwrite.io") || matches(host, ".cloud.appwrite.io", suffix: true) {
                return .appwrite
            }
            return nil
        }

        /// Whether `host` is `name` (or ends with it), ASCII letters in any case.
        private static func matches(_ host: UnsafeBufferPointer<UInt8>, _ name: StaticString, suffix: Bool = false)
            -> Bool
        {
            let length = name.utf8CodeUnitCount
            guard suffix ? host.count >= length : host.count == length else { return false }
            let start = host.count - length
            for index in 0..<length {
                let byte = host[start + index]
                if (byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte) != name.utf8Start[index] { return false }
            }
            return true
        }

        private static let hosts: [(name: StaticString, service: Service)] = [
            ("api.push.apple.com", .apns(.production)), ("api.development.push.apple.com", .apns(.development)),
            ("api.sandbox.push.apple.com", .apns(.development)), ("fcm.googleapis.com", .fcm),
            ("oauth2.googleapis.com", .oauth),
        ]

        /// The service `request`'s path names.
        init?(_ request: borrowing HTTPRequest) {
            guard let service = request.withPath({ $0.flatMap(Service.init(path:)) }) else { return nil }
            self = service
        }

        private init?(path: UnsafeBufferPointer<UInt8>) {
            // APNs first: the path most requests take, ahead of PubNub's several.
            if path.hasBytePrefix(APNsRequest.devicePath) {
                self = .apns(nil)
            } else if path.hasBytePrefix("/v1/projects/") {
                self = .fcm
            } else if path.hasBytePrefix("/token") {
                self = .oauth
            } else if path.hasBytePrefix("/webhooks/") {
                self = .webhook
            } else if PubNubService.paths.contains(where: { path.hasBytePrefix($0) }) {
                self = .pubnub
            } else {
                return nil
            }
        }
    }

    enum Route: Equatable {
        case service(Service)
        /// A host the shell does not know (an IP, `localhost`): the path decides.
        case unknownHost
        /// Such a host, and one of the inspector's paths (it checks the host is its own).
        case inspector
        /// The request names another service than the one its connection was opened for.
        case misdirected(connection: String, authority: String)
    }

    /// SNI (or a CONNECT's target) first, then `:authority` / `Host` (front-door.md):
    /// a request that names another service than its connection's is misdirected.
    static func route(_ request: HTTPRequest) -> Route {
        let connection = request.serverHost.flatMap { host in Service(host: host).map { (host, $0) } }
        let authority = request.withAuthorityHost { host in host.flatMap(Service.named) }
        switch (connection, authority) {
        case (.some((let connectionHost, let connectionService)), .some(let authorityService)):
            return connectionService == authorityService
                ? .service(connectionService)
                : .misdirected(connection: connectionHost, authority: request.authorityHost ?? "")
        case (.some((_, let service)), nil), (nil, .some(let service)): return .service(service)
        case (nil, nil): return InspectorResource.claims(request) ? .inspector : .unknownHost
        }
    }
}
