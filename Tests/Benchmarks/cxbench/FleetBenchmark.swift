import Foundation
import HTTPMessage
import OrderedJSON
import ShellKit

/// A fleet of a million idle devices (issue 22): made in bulk through the inspector's
/// `POST /api/v1/devices` (`count` 100,000 per request), the resident memory each one
/// costs, and pushes routed by token among them beside the same pushes into a world of
/// one device.
enum FleetBenchmark {
    static func run() {
        let count = max(1_000_000 / scale, 2)
        let fleet = Session()
        fleet.inspector = InspectorSettings()
        let before = residentBytes()
        let start = ContinuousClock.now
        var made = 0
        while made < count {
            let batch = min(100_000, count - made)
            guard make(batch, in: fleet) else {
                report("fleet_of_a_million", [], target: "made", met: false, note: "the bulk API refused a batch")
                return
            }
            made += batch
        }
        let seconds = (ContinuousClock.now - start).seconds
        let perDevice = Double(residentBytes() - before) / Double(count)
        report(
            "fleet_of_a_million",
            [
                ("devices", Double(count)), ("devices_per_second", Double(count) / seconds),
                ("bytes_per_device", perDevice),
            ],
            target: "devices_per_second >= 100000 and bytes_per_device <= 5120",
            met: Double(count) / seconds >= 100_000 && perDevice <= 5_120)

        let single = Session()
        single.inspector = InspectorSettings()
        _ = make(1, in: single)
        // Tokens of devices spread over the fleet; lines made ahead of the clock.
        let fleetLines = (0..<4096).map { index in
            push(token(of: "d\(1 + (index &* 7919) % count)", in: fleet), n: index)
        }
        let singleToken = token(of: "d1", in: single)
        let singleLines = (0..<4096).map { push(singleToken, n: $0) }
        let perPush = nanosecondsPerLine([(single, singleLines), (fleet, fleetLines)])
        let ratio = perPush[0] / perPush[1]
        report(
            "fleet_pushes_routed_by_token",
            [
                ("devices", Double(count)), ("pushes_per_second_fleet", 1e9 / perPush[1]),
                ("pushes_per_second_one_device", 1e9 / perPush[0]), ("fleet_vs_one_device", ratio),
            ],
            target: "fleet_vs_one_device >= 0.8", met: ratio >= 0.8)
    }

    /// `POST /api/v1/devices` with `count`, as a backend's test would send it.
    static func make(_ count: Int, in session: Session) -> Bool {
        let exchange = session.handle(
            network: HTTPRequest(
                headers: [
                    (":method", "POST"), (":path", "/api/v1/devices"), (":authority", "127.0.0.1"),
                    ("content-type", "application/json"),
                ],
                body: Array(#"{"platform":"ios","count":\#(count)}"#.utf8), serverName: nil, tls: false, http2: true))
        return exchange.response.status == 201
    }

    static func token(of device: String, in session: Session) -> String {
        let reply = session.handle(#"{"op":"state","device":"\#(device)"}"#).last ?? ""
        return (try? JSON.parse(text: reply))?["token"]?.stringValue ?? ""
    }

    /// A push to an idle device's app (not running): APNs finds it by token, iOS puts it
    /// in the tray.
    static func push(_ token: String, n: Int) -> [UInt8] {
        Array(
            #"{"op":"apns","token":"\#(token)","headers":{"apns-topic":"com.example.app","apns-collapse-id":"c"},"body":{"aps":{"alert":"hi"},"n":\#(n)}}"#
                .utf8)
    }
}
