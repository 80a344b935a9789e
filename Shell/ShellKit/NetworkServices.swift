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
        let host = request.host ?? ""
        let path = request.path ?? ""
        let (report, response): (JSONObject, HTTPResponse)
        if let environment = Self.apnsHosts[host] {
            (report, response) = apns(request, environment: environment)
        } else if Self.serviceHosts.contains(host) || Self.unbuiltPaths.contains(where: path.hasPrefix) {
            (report, response) = Self.notBuilt(host.isEmpty ? path : host)
        } else if path.hasPrefix("/3/device/") {
            (report, response) = apns(request, environment: nil)
        } else {
            let body = "no service here answers \(request.method ?? "?") \(path)\n"
            (report, response) = (
                JSONObject([("network", "http"), ("status", 404), ("effect", .string(body.dropLast().description))]),
                HTTPResponse(status: 404, headers: [("content-type", "text/plain")], body: Array(body.utf8))
            )
        }
        var lines = endpoint.takeLines()
        if let problem = waitForTouchedHosts() {
            lines.append(JSONObject([("network", "error"), ("effect", .string(problem))]).compactText)
        }
        lines += endpoint.takeLines()
        lines.append(report.compactText)
        return NetworkExchange(lines: lines, response: response)
    }

    static let apnsHosts: [String: APNsEnvironment] = [
        "api.push.apple.com": .production, "api.development.push.apple.com": .development,
        "api.sandbox.push.apple.com": .development,
    ]
    static let serviceHosts: Set = ["fcm.googleapis.com", "oauth2.googleapis.com", "ps.pndsn.com"]

    /// The hosts an HTTPS proxy's CONNECT may open a tunnel to: the services' own.
    public static func isServiceHost(_ host: String) -> Bool {
        apnsHosts[host] != nil || serviceHosts.contains(host) || host.hasSuffix(".pndsn.com")
    }
    static let unbuiltPaths = ["/v1/projects/", "/token", "/publish/", "/v1/push/", "/v2/push/", "/webhooks/"]

    /// The services the front door does not serve yet answer so, rather than 404.
    static func notBuilt(_ what: String) -> (JSONObject, HTTPResponse) {
        let sentence = "the front door does not serve \(what) yet; only APNs is built"
        return (
            JSONObject([("network", "http"), ("status", 501), ("effect", .string(sentence))]),
            HTTPResponse(status: 501, headers: [("content-type", "text/plain")], body: Array((sentence + "\n").utf8))
        )
    }

    /// APNs over HTTP/2. `environment` is the host's; for an unknown host, the one
    /// that issued the token, so no environment mismatch arises.
    func apns(_ request: HTTPRequest, environment: APNsEnvironment?) -> (JSONObject, HTTPResponse) {
        guard request.http2 else {
            let sentence = "APNs takes HTTP/2 only; this request came over HTTP/1.1"
            return (
                JSONObject([("network", "apns"), ("status", 505), ("effect", .string(sentence))]),
                HTTPResponse(status: 505, headers: [("content-type", "text/plain")], body: Array((sentence + "\n").utf8))
            )
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
                APNsRejection(status: 400, reason: "DuplicateHeaders", detail: "the header \(duplicate) was sent twice"))
        } else {
            let now = Double(clock()) / 1000
            let keys = apnsKeys
            result = APNsRequest(headers: headers, body: request.body, token: nil, environment: environment)
                .validate(tokens: registry.apnsRecord) { record in
                    switch keys.check(authorization: headers["authorization"], team: record.team, now: now) {
                    case .success(let checked):
                        signatureChecked = checked
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
            return (report, HTTPResponse(status: rejection.status, headers: responseHeaders, body: JSON.object(body).compactBytes))
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
                            ? "" : "; the provider token's signature was not checked (no key is registered with apns_key)"))
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
}
