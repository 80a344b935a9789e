import CXHost
import Foundation
import MQTTClient
import OrderedJSON
import ShellKit
import Testing

/// Appwrite Push over a real mosquitto broker (APW-1 … APW-8), driving a `Session`
/// and publishing as a backend does, with `mosquitto_pub`.
@Suite(.serialized) struct AppwriteChannelTests {
    final class World {
        let session = Session()
        let broker: MQTTBroker

        init() throws { broker = try MQTTBroker() }

        func send(_ line: String) -> [String] { session.handle(line) }

        func reply(_ line: String) throws -> JSONObject {
            let last = try #require(send(line).last)
            return try #require(try JSON.parse(text: last).objectValue)
        }

        /// `register` on the Appwrite channel with these extra options; the reply.
        func register(_ options: String = "", user: String = "u1", endpoint: String? = nil) throws -> JSONObject {
            let input =
                #"{"channel":"appwrite","endpoint":"\#(endpoint ?? broker.endpoint)","user":"\#(user)"\#(options)}"#
            let line = JSONObject([
                ("op", "call"), ("plugin", "push"), ("method", "register"), ("input", .string(input)),
            ])
            return try reply(JSON.object(line).compactText)
        }

        func token(_ reply: JSONObject) throws -> String {
            let output = try #require(reply["output"]?.stringValue)
            return try #require(try JSON.parse(text: output)["token"]?.stringValue)
        }

        /// Publishes with the `mosquitto_pub` command, as any backend could, to `port`
        /// (default: the test's broker); whether the broker took it.
        @discardableResult
        func publish(_ topic: String, _ message: String, qos: Int = 1, port: Int? = nil, expectTaken: Bool = true)
            throws -> Bool
        {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "mosquitto_pub", "-h", "127.0.0.1", "-p", "\(port ?? broker.port)", "-q", "\(qos)", "-t", topic, "-m",
                message,
            ]
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            if expectTaken { #expect(process.terminationStatus == 0) }
            return process.terminationStatus == 0
        }

        /// Waits for `count` arrivals and handles them; their output lines.
        func arrivals(_ count: Int = 1) -> [String] {
            #expect(session.hub.waitForArrivals(count: count, timeout: 10))
            return session.handleArrivals(limit: count)
        }

        /// Handles arrivals until the one with `messageId`; the lines of those before
        /// it too. QoS 1 is at least once: after a reconnect the broker may send an
        /// earlier message again (exactly once is the device's work, APW-6).
        func arrivals(through messageID: String) -> [String] {
            var lines: [String] = []
            while !lines.contains(where: { $0.contains(#""messageId":"\#(messageID)""#) }) {
                guard session.hub.waitForArrivals(count: 1, timeout: 10) else {
                    Issue.record("no message \(messageID) within 10 s")
                    return lines
                }
                lines += session.handleArrivals(limit: 1)
            }
            return lines
        }

        func channels() throws -> [JSON] {
            try #require(try reply(#"{"op":"state"}"#)["channels"]?.arrayValue)
        }
    }

    func runningApp(_ world: World, platform: String = "ios") {
        _ = world.send(#"{"op":"device","platform":"\#(platform)"}"#)
        _ = world.send(#"{"op":"launch"}"#)
        _ = world.send(#"{"op":"subscribe","key":"push","plugin":"push","stream":"events"}"#)
    }

    @Test func APW1_refusalsNameTheProblemAndChangeNothing() throws {
        let world = try World()
        runningApp(world)
        let stopped = try MQTTBroker()
        let unreachable = stopped.endpoint
        stopped.stop()
        let cases: [(JSONObject, String)] = [
            (try world.register(endpoint: unreachable), "cannot be reached"),
            (try world.register(#","topics":["news/+"]"#), "wildcard"),
            (try world.register(#","topics":["a/#"]"#), "wildcard"),
            (try world.register(#","topics":["users/u2"]"#), "another user's"),
            (try world.register(endpoint: "http://x:1"), "mqtt://HOST:PORT"),
            (try world.register(#","retry":"yes""#), "\"retry\""),
            (try world.register(#","colour":"red""#), "unknown option 'colour'"),
        ]
        for (reply, words) in cases {
            #expect(reply["ok"] == false && reply["output"]?.stringValue?.contains(words) == true, "\(reply)")
        }
        #expect(try world.channels().isEmpty)
        // The plugin's own refusals: not JSON, no channel, an unknown channel (REG-3).
        for (input, words) in [
            ("{nope", "not JSON"), (#"{"x":1}"#, "needs \"channel\""), (#"{"channel":"sms"}"#, "unknown channel 'sms'"),
        ] {
            let line = JSONObject([
                ("op", "call"), ("plugin", "push"), ("method", "register"), ("input", .string(input)),
            ])
            let reply = try world.reply(JSON.object(line).compactText)
            #expect(reply["ok"] == false && reply["output"]?.stringValue?.contains(words) == true, "\(reply)")
        }
        // A good registration still works after all that, and the OS channel is unchanged.
        #expect(try world.register()["ok"] == true)
        #expect(
            try world.reply(#"{"op":"call","plugin":"push","method":"register"}"#)["output"]?.stringValue?.contains(
                "apns") == true)
    }

    @Test func APW1_aDenialDoesNotFailTheRegistrationButNothingIsShown() throws {
        let world = try World()
        _ = world.send(#"{"op":"device","platform":"android"}"#)
        _ = world.send(#"{"op":"permission","answer":"deny"}"#)
        _ = world.send(#"{"op":"launch"}"#)
        #expect(try world.register()["ok"] == true)
        #expect(try world.reply(#"{"op":"state"}"#)["permission"] == "denied")
        _ = world.send(#"{"op":"background"}"#)
        try world.publish("users/u1", #"{"messageId":"m1","notification":{"title":"t"}}"#)
        let report = try JSON.parse(text: try #require(world.arrivals().last))
        #expect(report["effect"]?.stringValue?.contains("DEL-6") == true, "\(report)")
        #expect(try world.reply(#"{"op":"tray"}"#)["entries"] == .array([]))
    }

    @Test func APW2_theClientIDIsTheInstallsAndANewInstallGetsANewOne() throws {
        let world = try World()
        runningApp(world)
        let first = try world.token(try world.register())
        _ = world.send(#"{"op":"kill"}"#)
        _ = world.send(#"{"op":"launch"}"#)
        #expect(try world.token(try world.register()) == first)
        _ = world.send(#"{"op":"uninstall"}"#)
        #expect(try world.channels().isEmpty)
        _ = world.send(#"{"op":"install"}"#)
        _ = world.send(#"{"op":"launch"}"#)
        let second = try world.token(try world.register())
        #expect(second != first)
        #expect(try world.token(try world.register(#","client_id":"mine""#)) == "mine")
    }

    @Test func APW3_retryFalseSubscribesAtQoS0() throws {
        let world = try World()
        runningApp(world)
        #expect(try world.register(#","topics":["news"],"retry":false"#)["ok"] == true)
        try world.publish("news", #"{"messageId":"q0"}"#, qos: 1)
        // The broker downgrades to the subscription's QoS: 0.
        let report = try JSON.parse(text: try #require(world.arrivals().last))
        #expect(report["qos"] == 0 && report["topic"] == "news", "\(report)")
        #expect(try world.register(#","topics":["news"]"#)["ok"] == true)
        try world.publish("news", #"{"messageId":"q1"}"#, qos: 1)
        #expect(try JSON.parse(text: try #require(world.arrivals(through: "q1").last))["qos"] == 1)
    }

    @Test func APW5_topicsAreSilentInTheBackgroundUnlessAsked() throws {
        let world = try World()
        runningApp(world, platform: "android")
        #expect(try world.register(#","topics":["news"],"title":"News""#)["ok"] == true)
        _ = world.send(#"{"op":"background"}"#)
        try world.publish("news", #"{"messageId":"n1","data":{"a":"1"}}"#)
        let silent = world.arrivals()
        #expect(silent.count == 1 && silent[0].contains("background is false"), "\(silent)")
        #expect(try world.register(#","topics":["news"],"background":true,"title":"News""#)["ok"] == true)
        try world.publish("news", #"{"messageId":"n2","notification":{"body":"b"}}"#)
        _ = world.arrivals(through: "n2")
        let tray = try #require(try world.reply(#"{"op":"tray"}"#)["entries"]?.arrayValue)
        #expect(tray.count == 1 && tray[0]["title"] == "News" && tray[0]["body"] == "b", "\(tray)")
        // A cold-start tap is `opened`, buffered until the core subscribes (TAP-2).
        _ = world.send(#"{"op":"kill"}"#)
        let tap = world.send(#"{"op":"tap","which":"newest"}"#)
        #expect(tap.count == 1)
        let flushed = world.send(#"{"op":"subscribe","key":"push","plugin":"push","stream":"events"}"#)
        #expect(flushed.first?.contains(#"{\"body\":\"b\",\"mobiler_push\":\"opened\"}"#) == true, "\(flushed)")
    }

    /// Offline phones (chaos.md): the connection drops cleanly, so the broker keeps the
    /// persistent session and queues QoS 1 messages; back online, the device reconnects
    /// and the queued message arrives. Registering while offline is refused.
    @Test func anOfflineDeviceGetsWhatTheBrokerQueuedWhenItIsBack() throws {
        let world = try World()
        runningApp(world)
        #expect(try world.register()["ok"] == true)
        #expect(try world.reply(#"{"op":"network","online":false}"#)["online"] == false)
        #expect(try world.channels().first?["connected"] == false)
        let refused = try world.register()
        #expect(refused["ok"] == false && refused["output"]?.stringValue?.contains("the device is offline") == true)
        try world.publish("users/u1", #"{"messageId":"kept","data":{"x":"1"}}"#)
        #expect(try world.reply(#"{"op":"network","online":true}"#)["online"] == true)
        let lines = world.arrivals(through: "kept")
        #expect(lines.contains { $0.hasPrefix(#"{"delivery":"push""#) && $0.contains(#"\"x\":\"1\""#) }, "\(lines)")
    }

    /// A `broker_down` chaos rule stops the world's own broker at once (a backend's
    /// publish is refused), and it starts again `for_ms` later: the device reconnects by
    /// itself (APW-8) and what is published then arrives.
    @Test func aBrokerDownRuleStopsTheWorldsBrokerUntilItComesBack() throws {
        let world = try World()
        let endpoint = try world.session.startBroker()
        let port = try #require(Int(endpoint.split(separator: ":").last ?? ""))
        runningApp(world)
        #expect(try world.register(endpoint: endpoint)["ok"] == true)
        let down = try world.reply(
            #"{"op":"chaos","rule":{"service":"mqtt","then":{"fault":"broker_down","for_ms":300}}}"#)
        #expect(down["rule"]?["effect"] == "the broker stopped; it starts again in 300 ms")
        #expect(down["rules"] == .array([]))  // it acted at once; nothing is kept
        #expect(try !world.publish("users/u1", #"{"messageId":"lost"}"#, port: port, expectTaken: false))
        // The device sees the connection go, then reconnects by itself once the broker is
        // back (backoff from 1 s).
        func waitUntil(connected: Bool) throws -> Bool {
            for _ in 0..<150 {
                if try world.channels().first?["connected"] == .bool(connected) { return true }
                usleep(100_000)
            }
            return false
        }
        #expect(try waitUntil(connected: false))
        #expect(try waitUntil(connected: true))
        try world.publish("users/u1", #"{"messageId":"after","data":{"y":"2"}}"#, port: port)
        let lines = world.arrivals(through: "after")
        #expect(lines.contains { $0.hasPrefix(#"{"delivery":"push""#) && $0.contains(#"\"y\":\"2\""#) }, "\(lines)")
    }

    @Test func APW6_aReplayedMessageIDIsHandledOncePerInstall() throws {
        let world = try World()
        runningApp(world)
        #expect(try world.register()["ok"] == true)
        for _ in 0..<3 { try world.publish("users/u1", #"{"messageId":"same","data":{"x":"1"}}"#) }
        let lines = world.arrivals(3)
        #expect(lines.filter { $0.hasPrefix(#"{"delivery""#) }.count == 1)
        #expect(lines.filter { $0.contains("already handled") }.count == 2)
    }

    @Test func APW7_aFloodOfBadPayloadsIsDroppedAndTheConnectionGoesOn() throws {
        let world = try World()
        runningApp(world)
        #expect(try world.register()["ok"] == true)
        let backend = try MQTTConnection(clientID: "flood", cleanSession: true)
        try backend.connect(host: "127.0.0.1", port: world.broker.port)
        let bad: [[UInt8]] = [
            Array("[1,2]".utf8), [0xFF, 0xFE], Array(#"{"messageId":7}"#.utf8),
            Array(#"{"messageId":"x","data":[]}"#.utf8),
            [UInt8](repeating: 0x20, count: 300 * 1024),
        ]
        for index in 0..<200 { try backend.publish(topic: "users/u1", payload: bad[index % bad.count], qos: 1) }
        try backend.publish(topic: "users/u1", payload: Array(#"{"messageId":"ok","data":{"v":"1"}}"#.utf8), qos: 1)
        backend.close()
        let lines = world.arrivals(201)
        #expect(lines.filter { $0.contains("dropped:") }.count == 200)
        #expect(lines.filter { $0.hasPrefix(#"{"delivery""#) }.count == 1)
        #expect(lines.contains { $0.contains("at most 262144") })
    }

    @Test func APW8_theDeviceReconnectsAfterTheBrokerComesBackAndLosesNothing() throws {
        let world = try World()
        runningApp(world)
        #expect(try world.register()["ok"] == true)
        _ = world.send(#"{"op":"kill"}"#)
        _ = world.send(#"{"op":"launch"}"#)
        world.broker.stop()
        _ = world.send(#"{"op":"subscribe","key":"push","plugin":"push","stream":"events"}"#)
        #expect(try world.channels().first?["connected"] == false)
        try world.broker.start()
        // The backoff is at most 5 s: wait for the device to say it is connected.
        var connected = false
        for _ in 0..<150 where !connected {
            connected = try world.channels().first?["connected"] == true
            if !connected { usleep(100_000) }
        }
        #expect(connected)
        try world.publish("users/u1", #"{"messageId":"after","data":{"k":"v"}}"#)
        #expect(
            world.arrivals().first
                == #"{"delivery":"push","device":"d1","ok":true,"output":"{\"k\":\"v\",\"mobiler_push\":\"received\"}"}"#
        )
    }

    /// In `cxshell serve`, a message is written as it arrives, between requests:
    /// its deliveries, then its report line, without any request asking.
    @Test func serveWritesArrivalsAsTheyComeAndKeepsServing() throws {
        let broker = try MQTTBroker()
        let shell = try FrontDoorTests.Shell()
        _ = try shell.send(#"{"op":"device","platform":"android"}"#)
        _ = try shell.send(#"{"op":"launch"}"#)
        _ = try shell.send(#"{"op":"subscribe","key":"push","plugin":"push","stream":"events"}"#)
        let input = #"{\"channel\":\"appwrite\",\"endpoint\":\"\#(broker.endpoint)\",\"user\":\"u9\"}"#
        let registered = try shell.send(#"{"op":"call","plugin":"push","method":"register","input":"\#(input)"}"#)
        #expect(registered.last?.contains(#""ok":true"#) == true, "\(registered)")
        let publish = Process()
        publish.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        publish.arguments = [
            "mosquitto_pub", "-h", "127.0.0.1", "-p", "\(broker.port)", "-q", "1", "-t", "users/u9", "-m",
            #"{"messageId":"live","data":{"n":"1"}}"#,
        ]
        try publish.run()
        publish.waitUntilExit()
        // Nothing was asked: the lines come on their own.
        let delivery = try FrontDoorTests.Shell.readLine(shell.output, &shell.pending)
        let report = try FrontDoorTests.Shell.readLine(shell.output, &shell.pending)
        #expect(
            delivery
                == #"{"delivery":"push","device":"d1","ok":true,"output":"{\"n\":\"1\",\"mobiler_push\":\"received\"}"}"#
        )
        #expect(
            report.hasPrefix(#"{"network":"mqtt","device":"d1","topic":"users/u9","messageId":"live""#), "\(report)")
        #expect(try shell.send(#"{"op":"state"}"#).last?.contains(#""connected":true"#) == true)
        #expect(shell.stop() == 0)
    }
}
