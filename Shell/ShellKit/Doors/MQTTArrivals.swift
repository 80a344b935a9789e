import OrderedJSON
import SimulatedDevice

/// The channels' door: messages that arrived over MQTT on their own time, handled
/// between two requests, oldest first. Each writes its deliveries, then one report
/// line (channels.md), and is logged with source `mqtt`.
struct MQTTArrivals {
    let world: World
    let appwrite: AppwriteService

    /// Handles at most `limit` arrivals; the lines to write.
    func handle(limit: Int) -> [String] {
        var lines: [String] = []
        for arrival in world.hub.takeArrivals(limit: limit) {
            // A device taken out of the world (`DELETE /api/v1/devices/{id}`) takes
            // what was still on its way to it.
            guard let device = world.devicesByID[arrival.deviceID] else { continue }
            world.begin()
            world.touch(device)
            var report = JSONObject([
                ("network", "mqtt"), ("device", .string(arrival.deviceID)), ("topic", .string(arrival.message.topic)),
            ])
            // Appwrite's broker replays only the newest missed, and none expired (APW-14).
            let (messageID, outcome) =
                if let dropped = appwrite.replayVerdict(arrival) {
                    (AppwriteService.messageID(arrival), PushOutcome(effect: dropped))
                } else {
                    device.receive(mqtt: arrival)
                }
            report["messageId"] = messageID.map(JSON.string) ?? .null
            report["qos"] = .integer(Int64(arrival.message.qos))
            report["effect"] = .string(outcome.effect)
            if let trayID = outcome.trayID { report["tray_id"] = .string(trayID) }
            if let problem = world.settle() { report["effect"] = .string(problem) }
            let deliveries = world.takeDeliveries()
            world.finish(source: "mqtt", status: 200, deliveries: deliveries) { record in
                let topic = arrival.message.topic
                record = RequestLog.Record { $0.member("topic", topic) }
                record.body = arrival.message.payload
                record.touched(arrival.deviceID)
                record.effect = report["effect"]?.stringValue
                record.deliveries = deliveries
            }
            lines += deliveries
            lines.append(report.compactText)
        }
        return lines
    }
}
