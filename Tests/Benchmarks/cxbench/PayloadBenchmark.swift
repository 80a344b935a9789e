import CJansson
import Foundation
import OrderedJSON
import PushPlugin

/// Payload → event: the project's transform against Foundation's JSONSerialization
/// doing the same job, and against the floor (a bare jansson parse + compact dump).
enum PayloadBenchmark {
    static let alert = Array(
        #"{"aps":{"alert":{"title":"New booking","body":"Anna booked the 10:30 slot"},"sound":"default","badge":3},"booking_id":"01J9ZK3Q","type":"new_booking","n":42}"#
            .utf8)

    static let nested: [UInt8] = {
        var object = JSONObject()
        object["aps"] = ["alert": ["title": "Digest", "body": "Your week"], "content-available": 1]
        for section in 0..<9 {
            var entries: [JSON] = []
            for item in 0..<4 {
                entries.append([
                    "id": .integer(Int64(section * 100 + item)), "name": .string("entry \(section).\(item) ünïcødé"),
                    "price": .real(9.99 + Double(item)), "tags": ["a", "b", "c"], "meta": ["seen": false, "rank": 3],
                ])
            }
            object["section_\(section)"] = .array(entries)
        }
        return object.compactText.utf8.map { $0 }
    }()

    static func ours(_ bytes: [UInt8]) -> Int {
        guard let payload = try? JSON.parse(bytes).objectValue else { return 0 }
        return PushEvent.ios(userInfo: payload, action: .received).compactText.utf8.count
    }

    /// The way a Swift shell built on Foundation does it today.
    static func foundation(_ data: Data) -> Int {
        guard var payload = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return 0 }
        let aps = payload.removeValue(forKey: "aps") as? [String: Any]
        payload["mobiler_push"] = nil
        if let alert = aps?["alert"] as? [String: Any] {
            if payload["title"] == nil, let title = alert["title"] { payload["title"] = title }
            if payload["body"] == nil, let body = alert["body"] { payload["body"] = body }
        } else if let text = aps?["alert"] as? String, payload["body"] == nil {
            payload["body"] = text
        }
        payload["mobiler_push"] = "received"
        return (try? JSONSerialization.data(withJSONObject: payload))?.count ?? 0
    }

    static func floor(_ bytes: [UInt8]) -> Int {
        var error = json_error_t()
        let root = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { json_loadb($0.baseAddress, $0.count, 0, &error) }
        }
        guard let root else { return 0 }
        defer { cx_json_release(root) }
        var output = [CChar](repeating: 0, count: bytes.count * 2 + 64)
        return output.withUnsafeMutableBufferPointer { json_dumpb(root, $0.baseAddress, $0.count, Int(JSON_COMPACT)) }
    }

    static func run() {
        for (name, bytes, iterations) in [("alert_200B", alert, 20_000), ("nested_4KB", nested, 2_000)] {
            let data = Data(bytes)
            var sink = 0
            let times = sideBySide(
                iterations: iterations,
                [{ sink &+= ours(bytes) }, { sink &+= foundation(data) }, { sink &+= floor(bytes) }])
            let (oursNs, foundationNs, floorNs) = (times[0], times[1], times[2])
            precondition(sink > 0)
            let speedup = foundationNs / oursNs
            let overFloor = oursNs / floorNs
            report(
                "payload_to_event_\(name)",
                [
                    ("bytes", Double(bytes.count)), ("ours_ns", oursNs), ("foundation_ns", foundationNs),
                    ("floor_ns", floorNs), ("foundation_over_ours", speedup), ("ours_over_floor", overFloor),
                ], target: "foundation_over_ours >= 3 and ours_over_floor <= 1.5", met: speedup >= 3 && overFloor <= 1.5
            )
        }
    }
}
