import OrderedJSON

/// A logged APNs request as an `.apns` file for `xcrun simctl push booted <file>` (PH-15):
/// the payload as sent (secrets redacted as every read of the log shows them), with
/// `"Simulator Target Bundle"` set to the request's `apns-topic`. Pure: a function of the
/// entry. APNs requests are the front door's (`source` apns) and the line protocol's
/// `apns` op, from any door.
enum SimctlFile {
    static func make(_ entry: RequestLog.Entry) -> Result<[UInt8], Refusal> {
        let record = entry.record
        let request = (try? JSON.parse(record.requestJSON(body: nil, redacted: !entry.secretsShown))) ?? .null
        let body = entry.shown(record.body).flatMap { try? JSON.parse($0) }
        let topic: String?
        let payload: JSONObject?
        if request["method"] != nil {
            guard entry.source == "apns" else { return .failure(Refusal(entry: entry)) }
            topic = request["headers"]?["apns-topic"]?.stringValue
            payload = body?.objectValue
        } else if request["op"] == "apns" {
            topic = body?["headers"]?["apns-topic"]?.stringValue
            payload = body?["body"]?.objectValue
        } else {
            return .failure(Refusal(entry: entry))
        }
        guard var file = payload else {
            return .failure(Refusal(description: "log entry \(entry.seq)'s APNs payload is not a JSON object"))
        }
        guard let topic, !topic.isEmpty else {
            return .failure(
                Refusal(
                    description:
                        "log entry \(entry.seq) has no apns-topic: simctl needs the app's bundle id as \"Simulator Target Bundle\""
                ))
        }
        file["Simulator Target Bundle"] = .string(topic)
        return .success(JSON.object(file).compactBytes)
    }

    struct Refusal: Error, CustomStringConvertible {
        let description: String

        init(description: String) { self.description = description }

        init(entry: RequestLog.Entry) {
            description = "log entry \(entry.seq) is not an APNs request (it came by \(entry.source))"
        }
    }
}
