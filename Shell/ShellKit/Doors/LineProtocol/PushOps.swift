import OrderedJSON
import PushServices
import SimulatedDevice

/// The ops that push as a backend would: to APNs, through `simctl`, to FCM. Each goes
/// through the same service (and validator) as the network's requests.
extension LineProtocol {
    /// An APNs request finds its device by token, as APNs does: `token` when given,
    /// else the named (or current) device's.
    func sendAPNs(_ request: Request, _ reply: inout JSONObject) throws {
        let headers = try request.apnsHeaders()
        var token = try request.optionalString("token")
        if token == nil && headers.path == nil {
            let device = try target(request)
            try requirePlatform(.ios, device, request)
            guard let own = device.token else {
                throw DeviceRefusal(
                    "the app on \(device.id) has no APNs token yet (it gets one when it registers); pass \"token\" to send to one anyway"
                )
            }
            token = own
        }
        var environment = APNsEnvironment.production
        if let name = try request.optionalString("environment") {
            guard let value = APNsEnvironment(rawValue: name) else {
                throw request.invalid("\"environment\" must be production or development, not '\(name)'")
            }
            environment = value
        }
        let body = try request.body(.body)
        if let token,
            let met = meetAnswerRule(
                service: "apns", token: token,
                facts: { facts in
                    facts.topic = headers.topic
                    facts.environment = environment.rawValue
                    facts.path = headers.path ?? "/3/device/\(token)"
                })
        {
            let rejection = apns.chaosRejection(met.name, rule: met.id)
            reply = Self.rejection(request.id, rejection)
            Self.note(met, status: rejection.status, in: &reply)
            return
        }
        let push = APNsRequest(
            headers: headers, body: body.bytes, parsedBody: body.value, token: token, environment: environment)
        switch apns.validate(push) {
        case .failure(let rejection):
            reply = Self.rejection(request.id, rejection)
        case .success(let accepted):
            let (target, outcome) = try apns.deliver(accepted.notification, holder: accepted.holder)
            reply["apns-id"] = .string(accepted.notification.apnsID ?? target.makeAPNsID())
            reply["device"] = .string(target.id)
            Self.record(outcome, in: &reply)
        }
    }

    /// `xcrun simctl push`: the file's payload to the app, as the simulator does.
    func simctl(_ request: Request, _ reply: inout JSONObject) throws {
        let device = try target(request)
        try requirePlatform(.ios, device, request)
        let file = try request.body(.file)
        let simctl = SimctlPayload(
            file: file.bytes, parsedFile: file.value, bundleArgument: try request.optionalString("bundle"))
        switch simctl.validate(installedBundle: device.isInstalled ? device.bundleID : "(no app)") {
        case .failure(let rejection):
            reply = Self.rejection(request.id, rejection)
        case .success(let accepted):
            reply["apns-id"] = .string(device.makeAPNsID())
            Self.record(device.receive(apnsPayload: accepted.payload, collapseID: nil), in: &reply)
        }
    }

    /// A `messages:send` body. A topic or a condition goes to the world; its project is
    /// `project`, else the request's device's when that is an Android app, else the
    /// default project.
    func sendFCM(_ request: Request, _ reply: inout JSONObject) throws {
        // FCM goes by the message's token or topic: the named device only lends its project.
        let device = try named(request)
        let body = try request.body(.body)
        let project = try request.optionalString("project")
        if project == "" { throw request.invalid("\"project\" must not be empty") }
        let defaultProject =
            device?.platform == .android ? device!.options.fcmProject : DeviceOptions().fcmProject
        let message = body.value?["message"]
        if let met = meetAnswerRule(
            service: "fcm", token: message?["token"]?.stringValue,
            facts: { facts in
                facts.topic = message?["topic"]?.stringValue
                facts.project = project ?? defaultProject
            })
        {
            let error = FCMService.chaosError(met.name)
            reply = JSONObject([("reply", request.id), ("ok", false), ("error", .object(FCMService.envelope(error)))])
            Self.note(met, status: error.code, in: &reply)
            return
        }
        switch fcm.send(body: body.bytes, parsed: body.value, project: project, defaultProject: defaultProject) {
        case .failure(let error):
            reply = JSONObject([("reply", request.id), ("ok", false), ("error", .object(FCMService.envelope(error)))])
        case .success(let sent):
            for (key, value) in sent.object { reply[key] = value }
        }
    }

    /// The `answer` rule a push of the line protocol meets, if one does (latency and
    /// faults are the network's: a line has no connection to hold or break).
    private func meetAnswerRule(
        service: String, token: String?, facts fill: (inout ChaosRules.Facts) -> Void
    ) -> (id: String, name: String, remaining: Int?, device: String?)? {
        guard world.chaos.applies(to: service) else { return nil }
        var facts = ChaosRules.Facts(
            service: service, device: token.flatMap { world.device(holding: $0)?.id }, token: token, path: "")
        fill(&facts)
        guard let met = world.chaos.meet(facts, answersOnly: true), case .answer(let name) = met.outcome else {
            return nil
        }
        return (met.id, name, met.remaining, facts.device)
    }

    /// A reply's `chaos` and `effect` for a push a rule answered.
    /// The device the push was for (its token's) is named, though nothing reached it.
    private static func note(
        _ met: (id: String, name: String, remaining: Int?, device: String?), status: Int, in reply: inout JSONObject
    ) {
        if let device = met.device { reply["device"] = .string(device) }
        reply["chaos"] = .string(met.id)
        reply["effect"] = .string(
            ChaosRules.answeredEffect(status: status, name: met.name, rule: met.id, remaining: met.remaining))
    }

    private static func record(_ outcome: PushOutcome, in reply: inout JSONObject) {
        reply["effect"] = .string(outcome.effect)
        if let trayID = outcome.trayID { reply["tray_id"] = .string(trayID) }
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
