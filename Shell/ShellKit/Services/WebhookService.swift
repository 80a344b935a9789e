import Credentials
import HTTPMessage
import OrderedJSON
import PushServices
import SimulatedDevice

/// The `http` channel's receiving end (XM-2 … XM-6): `POST /webhooks/<recipient id>`
/// with Standard Webhooks headers, verified before its body is read.
final class WebhookService {
    let world: World
    /// Webhook ids accepted per recipient, with their timestamps (s), for XM-4.
    private var ids: [String: [String: Int64]] = [:]

    init(world: World) { self.world = world }

    /// The `<recipient id>` of `/webhooks/<recipient id>`.
    static func recipient(_ request: HTTPRequest) -> String {
        String((request.path ?? "").dropFirst("/webhooks/".count).prefix { $0 != "?" })
    }

    func answer(_ request: HTTPRequest) -> ServiceAnswer {
        let recipient = Self.recipient(request)
        var report = JSONObject([("network", "webhook"), ("recipient", .string(recipient))])
        func answer(_ status: Int, _ sentence: String) -> ServiceAnswer {
            report["status"] = .integer(Int64(status))
            report["effect"] = .string(sentence)
            let body = status == 204 ? [] : Array((sentence + "\n").utf8)
            return (Report(report), HTTPResponse(status: status, headers: [("content-type", "text/plain")], body: body))
        }
        guard request.hasMethod("POST") else { return answer(405, "a webhook takes POST") }
        guard let deviceID = world.hub.device(ofRecipient: recipient), let device = world.devicesByID[deviceID] else {
            return answer(404, "no app was ever registered as webhook recipient '\(recipient)'")
        }
        report["device"] = .string(device.id)
        guard let key = device.webhookKey(recipient: recipient) else {
            return answer(410, "the app that was recipient \(recipient) was uninstalled; this URL is gone")
        }
        // XM-3: authenticity first; the body is not parsed before the signature holds.
        let now = world.clock() / 1000
        let id = request.header("webhook-id")
        let verified = StandardWebhook.verify(
            key: key, id: id, timestamp: request.header("webhook-timestamp"),
            signatures: request.header("webhook-signature"), body: request.body, now: now)
        guard case .success(let timestamp) = verified, let id else {
            if case .failure(let refusal) = verified { return answer(401, "refused: \(refusal.message) (XM-3)") }
            return answer(401, "refused: the webhook-id header is missing (XM-3)")
        }
        report["webhook-id"] = .string(id)
        // XM-4: an id accepted within the tolerance window is a replay.
        var seen = ids[recipient] ?? [:]
        seen = seen.filter { now - $0.value <= 2 * StandardWebhook.tolerance }
        if seen[id] != nil {
            return answer(409, "refused: webhook-id \(id) was already accepted for this recipient (XM-4)")
        }
        let hint: XMTPHint
        switch XMTPHint.validate(request.body, recipient: recipient) {
        case .failure(let refusal): return answer(400, "refused: \(refusal.message) (XM-5)")
        case .success(let valid): hint = valid
        }
        world.touch(device)
        guard let outcome = device.receive(hint: hint.object) else {
            return answer(503, "the app is not running; the sender retries later (XM-6)")
        }
        seen[id] = timestamp
        ids[recipient] = seen
        return answer(204, outcome.effect)
    }

    // MARK: Chaos

    /// What a chaos rule may match in a webhook: the recipient's device, and the path.
    func chaosFacts(_ request: HTTPRequest) -> ChaosRules.Facts {
        ChaosRules.Facts(
            service: "webhook", device: world.hub.device(ofRecipient: Self.recipient(request)),
            path: request.path ?? "")
    }

    /// The receiver's own failure for a chaos rule's answer name (`500`, `503`).
    static func chaosAnswer(_ name: String) -> ServiceAnswer {
        plainAnswer("webhook", Int(name) ?? 503, "the receiver answered \(name)")
    }
}

extension WebhookService: WorldService {
    /// Devices: the message ids each recipient has seen (counted with their devices).
    func clear(_ part: WorldPart) -> Int {
        if part == .devices { ids.removeAll() }
        return 0
    }
}
