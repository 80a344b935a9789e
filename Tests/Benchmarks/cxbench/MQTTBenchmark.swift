import Foundation
import MQTTClient
import OrderedJSON
import ShellKit

/// MQTT on one loop (issue 22): 10,000 Appwrite devices, each a running app subscribed to
/// its `events`, connected to one real mosquitto; messages published to a topic all of
/// them hold, delivered end to end (broker → device → app core), counted by their QoS-1
/// report lines. Beside it, the floor: `mosquitto_sub` receiving as many QoS-1 messages
/// from the same broker, published by `mosquitto_pub -l`.
enum MQTTBenchmark {
    static func run() {
        let descriptors = raiseFileLimit()
        // One descriptor per device (its connection: CMosquittoConnect refuses
        // libmosquitto's socket pair), and room for the rest.
        let fits = descriptors - 512
        let count = max(min(10_000 / scale, fits), 2)
        let messages = 10
        guard let broker = try? MQTTBroker() else {
            report("mqtt_one_loop", [], target: "runs", met: false, note: "mosquitto did not start")
            return
        }
        let world = Session()
        let threadsBefore = threadCount()
        let start = ContinuousClock.now
        for index in 0..<count {
            _ = world.handle(#"{"op":"device","platform":"android"}"#)
            _ = world.handle(#"{"op":"launch"}"#)
            _ = world.handle(#"{"op":"subscribe","key":"push","plugin":"push","stream":"events"}"#)
            let input =
                #"{\"channel\":\"appwrite\",\"endpoint\":\"\#(broker.endpoint)\",\"user\":\"u\#(index)\",\"topics\":[\"users/u\#(index)\",\"all\"]}"#
            let reply = world.handle(#"{"op":"call","plugin":"push","method":"register","input":"\#(input)"}"#)
            guard reply.last?.contains(#""ok":true"#) == true else {
                report(
                    "mqtt_one_loop", [], target: "registered", met: false,
                    note: "device \(index) could not register: \(reply.last ?? "")")
                return
            }
        }
        let connectSeconds = (ContinuousClock.now - start).seconds
        let threadsConnected = threadCount()
        let publisher = try? MQTTConnection(clientID: "cxbench-publisher", cleanSession: true)
        guard let publisher, (try? publisher.connect(host: "127.0.0.1", port: broker.port)) != nil else {
            report("mqtt_one_loop", [], target: "runs", met: false, note: "the publisher could not connect")
            return
        }
        let expected = count * messages
        let sent = ContinuousClock.now
        for number in 0..<messages {
            try? publisher.publish(
                topic: "all", payload: Array(#"{"messageId":"m\#(number)","data":{"n":"\#(number)"}}"#.utf8), qos: 1)
        }
        var delivered = 0
        var peakThreads = threadCount()
        while delivered < expected && world.hub.waitForArrivals(timeout: 30) {
            for line in world.handleArrivals(limit: 4096) where line.contains(#""network":"mqtt""#) {
                if line.contains("delivered as received") { delivered += 1 }
            }
            peakThreads = max(peakThreads, threadCount())
        }
        let seconds = (ContinuousClock.now - sent).seconds
        publisher.close()
        let ours = Double(delivered) / seconds
        let floor = floorRate(broker: broker, messages: min(expected, 50_000))
        report(
            "mqtt_one_loop",
            [
                ("devices", Double(count)), ("descriptor_limit", Double(descriptors)),
                ("registered_per_second", Double(count) / connectSeconds),
                ("deliveries", Double(delivered)), ("deliveries_expected", Double(expected)),
                ("deliveries_per_second", ours), ("mosquitto_sub_messages_per_second", floor),
                ("ratio", floor > 0 ? ours / floor : 0), ("threads_before", Double(threadsBefore)),
                ("threads_connected", Double(threadsConnected)),
                ("threads_peak", Double(peakThreads)),
            ],
            target: "10000 devices, every QoS-1 message delivered, threads_peak <= 8",
            met: count >= 10_000 / scale && delivered == expected && peakThreads <= 8,
            note: count < 10_000 / scale
                ? "capped at \(count) devices: the descriptor limit is \(descriptors), one per client"
                : "one descriptor per client: libmosquitto's socket pair is refused")
    }

    /// `mosquitto_sub` receiving `messages` QoS-1 messages that `mosquitto_pub -l` publishes
    /// as fast as it can: messages per second from its first to its last (`%U` timestamps).
    /// At most 50,000: the broker queues 10,000 for a subscriber that falls behind and drops
    /// the rest, and a subscriber still waiting for them ends after two minutes (0).
    static func floorRate(broker: MQTTBroker, messages: Int) -> Double {
        let subscriber = Process()
        subscriber.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        subscriber.arguments = [
            "mosquitto_sub", "-h", "127.0.0.1", "-p", "\(broker.port)", "-t", "floor", "-q", "1", "-C",
            "\(messages)", "-F", "%U", "-W", "120",
        ]
        let output = Pipe()
        subscriber.standardOutput = output
        guard (try? subscriber.run()) != nil else { return 0 }
        // Its subscription is made within milliseconds on loopback; a benchmark may wait.
        usleep(500_000)
        let publisher = Process()
        publisher.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        publisher.arguments = [
            "mosquitto_pub", "-h", "127.0.0.1", "-p", "\(broker.port)", "-t", "floor", "-q", "1", "-l",
        ]
        let input = Pipe()
        publisher.standardInput = input
        guard (try? publisher.run()) != nil else { return 0 }
        let line = Data(#"{"messageId":"f","data":{"n":"0"}}"#.utf8 + [0x0A])
        var block = Data()
        for _ in 0..<messages { block.append(line) }
        input.fileHandleForWriting.write(block)
        try? input.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        subscriber.waitUntilExit()
        publisher.waitUntilExit()
        let stamps = text.split(separator: "\n").compactMap { Double($0) }
        guard stamps.count == messages, let first = stamps.first, let last = stamps.last, last > first else { return 0 }
        return Double(messages - 1) / (last - first)
    }

    static func threadCount() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") })
        else { return 0 }
        return Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) ?? 0
    }

    /// 10,000 connections need more descriptors than the usual limits (one each, and the
    /// broker as many). Raised to 65,536 where the process may (root may raise the hard
    /// limit), else to the hard limit; the broker started after this inherits it too.
    @discardableResult
    static func raiseFileLimit() -> Int {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        var wanted = limit
        wanted.rlim_cur = max(limit.rlim_max, 65_536)
        wanted.rlim_max = wanted.rlim_cur
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &wanted) != 0 {
            limit.rlim_cur = limit.rlim_max
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return Int(min(limit.rlim_cur, 1 << 30))
    }
}
