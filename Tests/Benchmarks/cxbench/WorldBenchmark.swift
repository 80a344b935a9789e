import Foundation
import ShellKit

/// A world of 10,000 devices (half iOS, half Android), each launched, registered
/// and subscribed: the resident memory each idle device costs, and pushes per second
/// routed by token into it, side by side with the same pushes into a world of one
/// device (the ratio is the cost of finding a device among many).
enum WorldBenchmark {
    static let devices = 10_000

    /// A world of `count` devices; returns each device's token and platform.
    static func makeWorld(_ count: Int) -> (Session, [(token: String, ios: Bool)]) {
        let session = Session()
        var tokens: [(token: String, ios: Bool)] = []
        tokens.reserveCapacity(count)
        for index in 0..<count {
            let ios = index % 2 == 0
            _ = session.handle(#"{"op":"device","platform":"\#(ios ? "ios" : "android")"}"#)
            _ = session.handle(#"{"op":"launch"}"#)
            _ = session.handle(#"{"op":"call","plugin":"push","method":"register","input":""}"#)
            _ = session.handle(#"{"op":"subscribe","key":"push","plugin":"push","stream":"events","input":""}"#)
            tokens.append((session.deviceToken ?? "", ios))
        }
        return (session, tokens)
    }

    /// A foreground push that reaches the device's subscriber (and its tray).
    static func push(to device: (token: String, ios: Bool), n: Int) -> [UInt8] {
        let line =
            device.ios
            ? #"{"op":"apns","token":"\#(device.token)","headers":{"apns-topic":"com.example.app","apns-collapse-id":"c"},"body":{"aps":{"alert":"hi"},"n":\#(n)}}"#
            : #"{"op":"fcm","body":{"message":{"token":"\#(device.token)","data":{"n":"\#(n)"},"android":{"notification":{"tag":"c"}}}}}"#
        return Array(line.utf8)
    }

    /// `cxbench world-one` and `world-many`: the routed pushes of `run` into one world alone,
    /// twice over 20,000 pushes and untimed, for callgrind (`--toggle-collect=*routePushes*`):
    /// the two worlds' instructions and cache misses, which the timed figure cannot split.
    static func profile(many: Bool) {
        let (world, tokens) = makeWorld(many ? manyDevices : 2)
        let lines = routedLines(tokens)
        for _ in 0..<2 { routePushes(world, lines) }
    }

    /// The many devices' world: `devices`, divided by `CXBENCH_SCALE`.
    static var manyDevices: Int { max(devices / scale, 2) }

    /// 4,096 pushes spread over `tokens` (a prime stride; over two tokens they alternate),
    /// made ahead so that a run measures only the shell's work.
    static func routedLines(_ tokens: [(token: String, ios: Bool)]) -> [[UInt8]] {
        (0..<4096).map { push(to: tokens[($0 &* 7919) % tokens.count], n: $0) }
    }

    @inline(never) static func routePushes(_ session: Session, _ lines: [[UInt8]]) {
        for index in 0..<20_000 { _ = session.handle(line: lines[index & 4095]) }
    }

    static func run() {
        let count = manyDevices
        let before = residentBytes()
        let (world, tokens) = makeWorld(count)
        let after = residentBytes()
        let perDevice = Double(after - before) / Double(count)
        report(
            "world_memory_per_idle_device",
            [("devices", Double(count)), ("rss_growth", Double(after - before)), ("bytes_per_device", perDevice)],
            target: "bytes_per_device <= 65536", met: perDevice <= 65_536)

        let (single, singleTokens) = makeWorld(2)
        let perPush = nanosecondsPerLine([(single, routedLines(singleTokens)), (world, routedLines(tokens))])
        let ratio = perPush[0] / perPush[1]
        report(
            "world_pushes_routed_by_token",
            [
                ("devices", Double(count)), ("pushes_per_second_world", 1e9 / perPush[1]),
                ("pushes_per_second_one_device", 1e9 / perPush[0]), ("world_vs_one_device", ratio),
            ],
            target: "world_vs_one_device >= 0.8", met: ratio >= 0.8)

        // A topic with one subscriber (the second device, an Android app) in each world:
        // the send asks the topic's subscribers, not the fleet.
        for session in [single, world] {
            _ = session.handle(#"{"op":"fcm_topic","device":"d2","topic":"news"}"#)
        }
        let topicLines = (0..<4096).map {
            Array(#"{"op":"fcm","body":{"message":{"topic":"news","data":{"n":"\#($0)"}}}}"#.utf8)
        }
        let perTopicSend = nanosecondsPerLine([(single, topicLines), (world, topicLines)])
        let topicRatio = perTopicSend[0] / perTopicSend[1]
        report(
            "world_topic_send_one_subscriber",
            [
                ("devices", Double(count)), ("sends_per_second_world", 1e9 / perTopicSend[1]),
                ("sends_per_second_two_devices", 1e9 / perTopicSend[0]), ("world_vs_two_devices", topicRatio),
            ],
            target: "world_vs_two_devices >= 0.8", met: topicRatio >= 0.8)
    }
}
