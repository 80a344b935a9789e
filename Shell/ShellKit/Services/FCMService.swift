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

    init(world: World, oauth: OAuthService) {
        self.world = world
        self.oauth = oauth
    }

    /// Validates, routes and delivers one `messages:send` body, as FCM does; one
    /// function for the line protocol and the network alike. What FCM did: `name`,
    /// `device` or `devices`, `effect`, `tray_id`.
    func send(
        body: [UInt8], parsed: JSON?, project: String?, defaultProject: String
    ) -> Result<JSONObject, FCMError> {
        let message: FCMMessage
        switch FCMRequest(body: body, parsedBody: parsed).validate() {
        case .failure(let error): return .failure(error)
        case .success(let valid): message = valid
        }
        let sentIn: String
        switch FCMRequest.route(
            message.target, project: project, defaultProject: defaultProject, tokens: world.registry.fcmRecord)
        {
        case .failure(let error): return .failure(error)
        case .success(let value): sentIn = value
        }
        var sent = JSONObject()
        let recipients = recipients(of: message.target, in: sentIn)
        let messageID = (recipients.first ?? world.current ?? world.devices.first)?.makeFCMMessageID() ?? "0:0%world"
        sent["name"] = .string("projects/\(sentIn)/messages/\(messageID)")
        if message.validateOnly {
            sent["effect"] = .string("validated only (validate_only is true): nothing was sent")
            return .success(sent)
        }
        switch message.target {
        case .token, .fid:
            guard let target = recipients.first else { return .success(sent) }
            world.touch(target)
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
            return world.device(holding: token).map { [$0] } ?? []
        case .fid(let fid):
            return world.device(installationID: fid).map { [$0] } ?? []
        case .topic(let topic):
            return world.devices.filter { Self.isFCMApp($0, in: project) && $0.topics.contains(topic) }
        case .condition(let condition):
            return world.devices.filter { Self.isFCMApp($0, in: project) && condition.matches(Set($0.topics)) }
        }
    }

    private static func isFCMApp(_ device: Device, in project: String) -> Bool {
        device.platform == .android && device.isInstalled && device.token != nil
            && device.options.fcmProject == project
    }

    /// `POST /v1/projects/{project}/messages:send` with a bearer access token the OAuth
    /// endpoint issued; validated and delivered by the line protocol's `fcm` code.
    func answer(_ request: HTTPRequest) -> ServiceAnswer {
        var report = JSONObject([("network", "fcm")])
        func refuse(_ error: FCMError) -> ServiceAnswer {
            report["status"] = .integer(Int64(error.code))
            report["error"] = .string(error.status)
            report["effect"] = .string("refused: \(error.message)")
            let body = JSON.object(JSONObject([("error", .object(Self.envelope(error)))])).compactBytes
            return (
                report, HTTPResponse(status: error.code, headers: [("content-type", "application/json")], body: body)
            )
        }
        let path = request.path ?? ""
        guard let project = Self.project(path) else {
            return refuse(FCMError(code: 404, status: "NOT_FOUND", message: "Requested entity was not found: \(path)"))
        }
        guard request.method == "POST" else {
            return refuse(FCMError(code: 405, status: "METHOD_NOT_ALLOWED", message: "messages:send takes POST"))
        }
        let authorization = request.header("authorization") ?? ""
        let bearer = authorization.lowercased().hasPrefix("bearer ") ? String(authorization.dropFirst(7)) : ""
        guard let grant = oauth.accessTokens.grant(for: bearer, now: world.clock()) else {
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
    static func project(_ path: String) -> String? {
        let prefix = "/v1/projects/"
        let suffix = "/messages:send"
        guard path.hasPrefix(prefix), path.hasSuffix(suffix), path.count > prefix.count + suffix.count else {
            return nil
        }
        let project = path.dropFirst(prefix.count).dropLast(suffix.count)
        return project.contains("/") ? nil : String(project)
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
}
