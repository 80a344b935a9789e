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

    /// The floor: the fastest correct jansson round trip, a parse and a compact dump
    /// into an output buffer made once and reused (jansson's own nodes are its to
    /// allocate).
    static func floor(_ bytes: UnsafeBufferPointer<CChar>, into output: UnsafeMutableBufferPointer<CChar>) -> Int {
        var error = json_error_t()
        guard let root = json_loadb(bytes.baseAddress, bytes.count, 0, &error) else { return 0 }
        defer { cx_json_release(root) }
        return json_dumpb(root, output.baseAddress, output.count, Int(JSON_COMPACT))
    }

    static func run() {
        for (name, bytes, iterations) in [("alert", alert, 20_000), ("nested", nested, 2_000)] {
            let data = Data(bytes)
            var sink = 0
            let input = UnsafeMutableBufferPointer<CChar>.allocate(capacity: bytes.count)
            _ = input.initialize(from: bytes.map { CChar(bitPattern: $0) })
            let output = UnsafeMutableBufferPointer<CChar>.allocate(capacity: bytes.count * 2 + 64)
            defer {
                input.deallocate()
                output.deallocate()
            }
            let times = sideBySide(
                iterations: iterations,
                [
                    { sink &+= ours(bytes) }, { sink &+= foundation(data) },
                    { sink &+= floor(UnsafeBufferPointer(input), into: output) },
                ])
            let (oursNs, foundationNs, floorNs) = (times[0], times[1], times[2])
            precondition(sink > 0)
            let speedup = foundationNs / oursNs
            let overFloor = oursNs / floorNs
            report(
                "payload_to_event_\(name)_\(bytes.count)B",
                [
                    ("bytes", Double(bytes.count)), ("ours_ns", oursNs), ("foundation_ns", foundationNs),
                    ("floor_ns", floorNs), ("foundation_over_ours", speedup), ("ours_over_floor", overFloor),
                ], target: "foundation_over_ours >= 5 and ours_over_floor <= 1.3", met: speedup >= 5 && overFloor <= 1.3
            )
        }
    }
}
