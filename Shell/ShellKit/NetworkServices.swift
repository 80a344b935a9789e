import Credentials
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
}

extension Session {
    /// The services behind the front door, chosen by host, then by path. The same
    /// validators as the line protocol's: one validator per service, reached two ways.
    public func handle(network request: HTTPRequest) -> NetworkExchange {
        touched.removeAll(keepingCapacity: true)
        requestStarted = Self.monotonicNanoseconds()
        let path = request.path ?? ""
        let route = Self.route(request)
        if route == .inspector, let inspector {
            // It writes what it changed itself, and logs only writes.
            let answer = inspect(request, settings: inspector)
            return NetworkExchange(lines: answer.lines, response: answer.response)
        }
        let (report, response): (JSONObject, HTTPResponse)
        switch route {
        case .misdirected(let connection, let authority):
            (report, response) = Self.plain(
                "http", 421,
                "misdirected: this connection was opened for \(connection), and the request names \(authority)")
        case .service(.apns(let environment)): (report, response) = apns(request, environment: environment)
        case .service(.fcm): (report, response) = fcm(request)
        case .service(.oauth): (report, response) = oauth(request)
        case .service(.pubnub): (report, response) = pubnub(request)
        case .unknownHost, .inspector:
            if path.hasPrefix("/v1/projects/") {
                (report, response) = fcm(request)
            } else if path.hasPrefix("/token") {
                (report, response) = oauth(request)
            } else if path.hasPrefix("/webhooks/") {
                (report, response) = webhook(request)
            } else if Self.pubnubPaths.contains(where: path.hasPrefix) {
                (report, response) = pubnub(request)
            } else if path.hasPrefix("/3/device/") {
                (report, response) = apns(request, environment: nil)
            } else {
                (report, response) = Self.plain("http", 404, "no service here answers \(request.method ?? "?") \(path)")
            }
        }
        let problem = waitForTouchedHosts()
        let deliveries = endpoint.takeLines()
        var lines = deliveries
        if let problem { lines.append(JSONObject([("network", "error"), ("effect", .string(problem))]).compactText) }
        lines.append(report.compactText)
        appendLog(source: report["network"]?.stringValue ?? "http", status: response.status, deliveries: deliveries) {
            Self.record(of: request, report: report, deliveries: deliveries)
        }
        return NetworkExchange(lines: lines, response: response)
    }

    /// A network request as the log shows it: what was sent, and what its report says.
    static func record(of request: HTTPRequest, report: JSONObject, deliveries: [String]) -> RequestLog.Record {
        var record = RequestLog.Record { json in
            json.member("method", request.method)
            json.member("path", request.path)
            json.member("host", request.authorityHost ?? request.serverHost)
            json.member("headers", headers: request.headers)
        }
        if !request.body.isEmpty { record.body = request.body }
        if let device = report["device"]?.stringValue {
            record.devices = [device]
        } else if let devices = report["devices"]?.arrayValue {
            record.devices = devices.compactMap { $0["device"]?.stringValue }
        }
        record.reason = report["reason"]?.stringValue
        record.error = report["error"]?.stringValue
        record.effect = report["effect"]?.stringValue
        record.deliveries = deliveries
        return record
    }

    /// A service the front door answers for, by its host (front-door.md's table).
    enum Service: Equatable {
        case apns(APNsEnvironment)
        case fcm, oauth, pubnub

        init?(host: String) {
            switch host {
            case "api.push.apple.com": self = .apns(.production)
            case "api.development.push.apple.com", "api.sandbox.push.apple.com": self = .apns(.development)
            case "fcm.googleapis.com": self = .fcm
            case "oauth2.googleapis.com": self = .oauth
            case _ where host == "ps.pndsn.com" || host.hasSuffix(".pndsn.com"): self = .pubnub
            default: return nil
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
        let authority = request.authorityHost.flatMap { host in Service(host: host).map { (host, $0) } }
        switch (connection, authority) {
        case (.some((let connectionHost, let connectionService)), .some((let authorityHost, let authorityService))):
            return connectionService == authorityService
                ? .service(connectionService) : .misdirected(connection: connectionHost, authority: authorityHost)
        case (.some((_, let service)), nil), (nil, .some((_, let service))): return .service(service)
        case (nil, nil): return InspectorResource.claims(request.path ?? "") ? .inspector : .unknownHost
        }
    }

    /// The hosts an HTTPS proxy's CONNECT may open a tunnel to: the services' own.
    public static func isServiceHost(_ host: String) -> Bool { Service(host: host) != nil }
    static let pubnubPaths = ["/publish/", "/v1/push/", "/v2/push/"]

    /// An answer that is one sentence of plain text, and its report line.
    static func plain(_ service: String, _ status: Int, _ sentence: String) -> (JSONObject, HTTPResponse) {
        (
            JSONObject([
                ("network", .string(service)), ("status", .integer(Int64(status))), ("effect", .string(sentence)),
            ]),
            HTTPResponse(status: status, headers: [("content-type", "text/plain")], body: Array((sentence + "\n").utf8))
        )
    }

    /// APNs over HTTP/2. `environment` is the host's; for an unknown host, the one
    /// that issued the token, so no environment mismatch arises.
    func apns(_ request: HTTPRequest, environment: APNsEnvironment?) -> (JSONObject, HTTPResponse) {
        guard request.http2 else {
            return Self.plain("apns", 505, "APNs takes HTTP/2 only; this request came over HTTP/1.1")
        }
        var headers: [String: String] = [:]
        var duplicate: String?
        for (name, value) in request.headers {
            if headers[name] != nil && !name.hasPrefix(":") { duplicate = duplicate ?? name }
            headers[name] = value
        }
        let token = String((request.path ?? "").dropFirst("/3/device/".count)).lowercased()
        let environment = environment ?? registry.apnsRecord(token)?.environment ?? .production
        let requestID = headers["apns-id"]
        let result: Result<APNsNotification, APNsRejection>
        var signatureChecked = false
        if let duplicate {
            result = .failure(
                APNsRejection(status: 400, reason: "DuplicateHeaders", detail: "the header \(duplicate) was sent twice")
            )
        } else {
            let now = Double(clock()) / 1000
            result = APNsRequest(headers: headers, body: request.body, token: nil, environment: environment)
                .validate(tokens: registry.apnsRecord) { [self] record in
                    switch apnsKeys.check(authorization: headers["authorization"], team: record.team, now: now) {
                    case .success(let accepted):
                        signatureChecked = accepted.signatureChecked
                        return nil
                    case .failure(let refusal):
                        return APNsRejection(status: 403, reason: refusal.reason, detail: refusal.detail)
                    }
                }
        }
        var report = JSONObject([("network", "apns")])
        var responseHeaders: [(name: String, value: String)] = []
        switch result {
        case .failure(let rejection):
            let apnsID = requestID ?? UUID().uuidString
            report["status"] = .integer(Int64(rejection.status))
            report["apns-id"] = .string(apnsID)
            report["reason"] = .string(rejection.reason)
            report["effect"] = .string("refused: \(rejection.detail)")
            var body = JSONObject([("reason", .string(rejection.reason))])
            if let timestamp = rejection.timestamp { body["timestamp"] = .integer(timestamp) }
            responseHeaders = [("apns-id", apnsID), ("content-type", "application/json")]
            return (
                report,
                HTTPResponse(status: rejection.status, headers: responseHeaders, body: JSON.object(body).compactBytes)
            )
        case .success(let notification):
            do {
                let (target, outcome) = try deliver(notification)
                let apnsID = requestID ?? target.makeAPNsID()
                report["status"] = 200
                report["device"] = .string(target.id)
                report["apns-id"] = .string(apnsID)
                report["effect"] = .string(
                    outcome.effect
                        + (signatureChecked
                            ? ""
                            : "; the provider token's signature was not checked (no key is registered with apns_key)"))
                if let trayID = outcome.trayID { report["tray_id"] = .string(trayID) }
                responseHeaders = [("apns-id", apnsID)]
                if environment == .development {
                    responseHeaders.append(("apns-unique-id", UUID().uuidString.lowercased()))
                }
                return (report, HTTPResponse(status: 200, headers: responseHeaders))
            } catch {
                report["status"] = 500
                report["effect"] = .string("\(error)")
                return (report, HTTPResponse(status: 500, body: Array(#"{"reason":"InternalServerError"}"#.utf8)))
            }
        }
    }

    // MARK: FCM HTTP v1

    /// `POST /v1/projects/{project}/messages:send` with a bearer access token the OAuth
    /// endpoint issued; validated and delivered by the line protocol's `fcm` code.
    func fcm(_ request: HTTPRequest) -> (JSONObject, HTTPResponse) {
        var report = JSONObject([("network", "fcm")])
        func answer(_ error: FCMError) -> (JSONObject, HTTPResponse) {
            report["status"] = .integer(Int64(error.code))
            report["error"] = .string(error.status)
            report["effect"] = .string("refused: \(error.message)")
            let body = JSON.object(JSONObject([("error", .object(Self.fcmEnvelope(error)))])).compactBytes
            return (
                report, HTTPResponse(status: error.code, headers: [("content-type", "application/json")], body: body)
            )
        }
        let path = request.path ?? ""
        guard let project = Self.fcmProject(path) else {
            return answer(FCMError(code: 404, status: "NOT_FOUND", message: "Requested entity was not found: \(path)"))
        }
        guard request.method == "POST" else {
            return answer(FCMError(code: 405, status: "METHOD_NOT_ALLOWED", message: "messages:send takes POST"))
        }
        let authorization = request.header("authorization") ?? ""
        let bearer = authorization.lowercased().hasPrefix("bearer ") ? String(authorization.dropFirst(7)) : ""
        guard let grant = accessTokens.grant(for: bearer, now: clock()) else {
            return answer(
                FCMError(
                    code: 401, status: "UNAUTHENTICATED",
                    message:
                        "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."
                ))
        }
        if let owner = grant.project, owner != project {
            // What Google answers a service account of another project: IAM refuses it
            // before FCM reads the message.
            return answer(
                FCMError(
                    code: 403, status: "PERMISSION_DENIED",
                    message:
                        "Permission 'cloudmessaging.messages.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/\(project)' (or it may not exist)."
                ))
        }
        switch sendFCM(body: request.body, parsed: nil, project: project, defaultProject: project) {
        case .failure(let error):
            return answer(error)
        case .success(let sent):
            report["status"] = 200
            if let device = sent["device"] { report["device"] = device }
            if let devices = sent["devices"]?.arrayValue {
                report["devices"] = .array(
                    devices.map { entry in
                        .object(JSONObject([("device", entry["device"] ?? nil), ("result", entry["effect"] ?? nil)]))
                    })
            }
            report["name"] = sent["name"]
            report["effect"] = sent["effect"] ?? "sent"
            let body = JSON.object(JSONObject([("name", sent["name"] ?? nil)])).compactBytes
            return (report, HTTPResponse(status: 200, headers: [("content-type", "application/json")], body: body))
        }
    }

    /// The `{project}` of `/v1/projects/{project}/messages:send`.
    static func fcmProject(_ path: String) -> String? {
        let prefix = "/v1/projects/"
        let suffix = "/messages:send"
        guard path.hasPrefix(prefix), path.hasSuffix(suffix), path.count > prefix.count + suffix.count else {
            return nil
        }
        let project = path.dropFirst(prefix.count).dropLast(suffix.count)
        return project.contains("/") ? nil : String(project)
    }

    // MARK: OAuth 2 token endpoint

    /// The `<project>` of a service account's `<name>@<project>.iam.gserviceaccount.com`.
    static func serviceAccountProject(_ email: String) -> String? {
        let suffix = ".iam.gserviceaccount.com"
        guard email.hasSuffix(suffix), let at = email.lastIndex(of: "@") else { return nil }
        let project = email[email.index(after: at)...].dropLast(suffix.count)
        return project.isEmpty ? nil : String(project)
    }

    /// Google's token URL: what an assertion's `aud` must be.
    static let tokenAudiences: Set = [
        "https://oauth2.googleapis.com/token", "https://www.googleapis.com/oauth2/v4/token",
    ]

    /// `POST /token`, `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` and an
    /// RS256 `assertion`, as Google's libraries send for a service account.
    func oauth(_ request: HTTPRequest) -> (JSONObject, HTTPResponse) {
        var report = JSONObject([("network", "oauth")])
        func refuse(_ error: String, _ description: String) -> (JSONObject, HTTPResponse) {
            report["status"] = 400
            report["error"] = .string(error)
            report["effect"] = .string("refused: \(description)")
            let body = JSON.object(
                JSONObject([("error", .string(error)), ("error_description", .string(description))])
            ).compactBytes
            return (report, HTTPResponse(status: 400, headers: [("content-type", "application/json")], body: body))
        }
        guard request.method == "POST", (request.path ?? "").hasPrefix("/token") else {
            return refuse("invalid_request", "the token endpoint takes POST /token")
        }
        let form = HTTPRequest.formFields(request.body)
        guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer" else {
            return refuse("unsupported_grant_type", "grant_type must be urn:ietf:params:oauth:grant-type:jwt-bearer")
        }
        guard let assertion = form["assertion"] else { return refuse("invalid_request", "no assertion") }
        let jwt: JWT
        do { jwt = try JWT(assertion) } catch { return refuse("invalid_grant", "the assertion is not a JWT: \(error)") }
        guard jwt.header["alg"] == "RS256" else { return refuse("invalid_grant", "the assertion's alg must be RS256") }
        guard let issuer = jwt.claims["iss"]?.stringValue, jwt.claims["scope"]?.stringValue != nil,
            let audience = jwt.claims["aud"]?.stringValue
        else {
            return refuse("invalid_grant", "the assertion needs iss, scope and aud")
        }
        guard Self.tokenAudiences.contains(audience) else {
            return refuse("invalid_grant", "the assertion's aud must be the token URL, not \(audience)")
        }
        guard let issuedAt = jwt.seconds("iat"), let expires = jwt.seconds("exp") else {
            return refuse("invalid_grant", "the assertion needs numeric iat and exp")
        }
        let now = Double(clock()) / 1000
        guard expires > issuedAt, expires - issuedAt <= 3600 else {
            return refuse("invalid_grant", "iat and exp must be at most 3600 s apart")
        }
        guard expires >= now else { return refuse("invalid_grant", "the assertion has expired") }
        guard issuedAt - now <= 300 else {
            return refuse("invalid_grant", "the assertion's iat is more than 5 minutes ahead of the clock")
        }
        var checked = "its signature was not checked (no key is registered with google_key)"
        var project: String?
        if !googleKeys.isEmpty {
            // Once any key is registered, every assertion must be signed by its issuer's.
            guard let account = googleKeys[issuer] else {
                return refuse("invalid_grant", "Invalid grant: account not found (no key is registered for \(issuer))")
            }
            guard account.key.verifies(jwt) else { return refuse("invalid_grant", "Invalid JWT Signature.") }
            checked = "its signature matches the registered key; the token sends to project \(account.project) only"
            project = account.project
        }
        let token = accessTokens.issue(project: project, lifetime: 3_599_000, now: clock())
        report["status"] = 200
        report["effect"] = .string("issued an access token to \(issuer) for 3599 s; \(checked)")
        let body = JSON.object(
            JSONObject([("access_token", .string(token)), ("expires_in", 3599), ("token_type", "Bearer")])
        ).compactBytes
        return (report, HTTPResponse(status: 200, headers: [("content-type", "application/json")], body: body))
    }
}
