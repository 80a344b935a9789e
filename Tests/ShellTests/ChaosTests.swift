import CNGHTTP2
import Foundation
import HTTPMessage
import OrderedJSON
import ShellKit
import Testing

/// Faults on demand (chaos.md, "Rules"): each rule answers in the service's own shape and
/// changes nothing in the world; seeded probabilities repeat; a held answer holds only itself.
@Suite struct ChaosTests {
    final class World {
        lazy var session = Session()

        func reply(_ line: String) throws -> JSONObject {
            let last = try #require(session.handle(line).last)
            return try #require(try JSON.parse(text: last).objectValue)
        }

        /// A device whose app registered and subscribed; its token.
        func readyDevice(_ platform: String) throws -> String {
            _ = try reply(#"{"op":"device","platform":"\#(platform)"}"#)
            _ = try reply(#"{"op":"launch"}"#)
            _ = try reply(#"{"op":"call","plugin":"push","method":"register","input":""}"#)
            _ = try reply(#"{"op":"subscribe","key":"k","plugin":"push","stream":"events","input":""}"#)
            return try #require(try reply(#"{"op":"state"}"#)["token"]?.stringValue)
        }

        /// The current device's token.
        func readyToken() throws -> String {
            try #require(try reply(#"{"op":"state"}"#)["token"]?.stringValue)
        }

        /// An FCM send over the network, with an access token the world issued.
        func fcm(_ token: String) -> NetworkExchange {
            session.handle(
                network: HTTPRequest(
                    headers: [
                        (":method", "POST"), (":path", "/v1/projects/cxshell/messages:send"),
                        (":authority", "fcm.googleapis.com"), ("authorization", "Bearer " + (accessToken ?? "")),
                    ],
                    body: Array(#"{"message":{"token":"\#(token)","data":{"k":"v"}}}"#.utf8),
                    serverName: "fcm.googleapis.com", tls: true, http2: true))
        }

        var accessToken: String?

        func apns(_ token: String) -> NetworkExchange {
            session.handle(
                network: HTTPRequest(
                    headers: [
                        (":method", "POST"), (":path", "/3/device/\(token)"), (":authority", "api.push.apple.com"),
                        ("apns-topic", "com.example.app"),
                        ("authorization", ProviderTokenSigner().authorization(issuedAt: Date().timeIntervalSince1970)),
                    ],
                    body: Array(#"{"aps":{"alert":"x"}}"#.utf8), serverName: "api.push.apple.com", tls: true,
                    http2: true))
        }
    }

    /// An access token from the OAuth endpoint (no key registered: any assertion's issuer).
    static func accessToken(_ session: Session) throws -> String {
        let now = Int(Date().timeIntervalSince1970)
        func part(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        }
        let assertion =
            part(#"{"alg":"RS256"}"#) + "."
            + part(
                #"{"iss":"a@cxshell.iam.gserviceaccount.com","scope":"s","aud":"https://oauth2.googleapis.com/token","iat":\#(now),"exp":\#(now + 3600)}"#
            ) + ".c2ln"
        let exchange = session.handle(
            network: HTTPRequest(
                headers: [(":method", "POST"), (":path", "/token"), (":authority", "oauth2.googleapis.com")],
                body: Array(
                    "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)".utf8),
                serverName: "oauth2.googleapis.com", tls: true, http2: true))
        return try #require(try JSON.parse(exchange.response.body)["access_token"]?.stringValue)
    }

    @Test func aCountedUnavailableRuleAnswersTwiceInFCMsShapeThenRetires() throws {
        let world = World()
        let token = try world.readyDevice("android")
        world.accessToken = try Self.accessToken(world.session)
        let added = try world.reply(
            #"{"op":"chaos","rule":{"service":"fcm","match":{"device":"d1"},"count":2,"retry_after_s":7,"then":{"answer":"UNAVAILABLE"}}}"#
        )
        #expect(added["rule"]?["id"] == "c1")
        for left in [1, 0] {
            let exchange = world.fcm(token)
            #expect(exchange.response.status == 503)
            #expect(exchange.response.headers.contains { $0.name == "retry-after" && $0.value == "7" })
            let error = try JSON.parse(exchange.response.body)["error"]
            #expect(error?["status"] == "UNAVAILABLE")
            #expect(error?["details"]?.arrayValue?.first?["errorCode"] == "UNAVAILABLE")
            // Nothing delivered: the report line is the only line, and it names the rule.
            #expect(exchange.lines.count == 1)
            let report = try JSON.parse(text: exchange.lines[0])
            #expect(report["chaos"] == "c1")
            #expect(
                report["effect"]?.stringValue
                    == "answered 503 UNAVAILABLE by chaos rule c1, \(left) left; nothing delivered")
        }
        let third = world.fcm(token)
        #expect(third.response.status == 200)
        #expect(third.lines.first?.hasPrefix(#"{"delivery":"k","device":"d1""#) == true)
        #expect(try world.reply(#"{"op":"chaos"}"#)["rules"] == .array([]))
        let entry = try #require(world.session.log.entries(matching: .init(source: "fcm"), limit: 10).first)
        #expect(entry.summary.contains(#""chaos":"c1""#))
    }

    @Test func anAPNsRuleMeetsOnlyItsDeviceAndAnswersAsAPNsDoes() throws {
        let world = World()
        let first = try world.readyDevice("ios")
        let second = try world.readyDevice("ios")
        _ = try world.reply(
            #"{"op":"chaos","rule":{"service":"apns","match":{"device":"d2"},"then":{"answer":"Unregistered"}}}"#)
        #expect(world.apns(first).response.status == 200)
        let refused = world.apns(second)
        #expect(refused.response.status == 410)
        let body = try JSON.parse(refused.response.body)
        #expect(body["reason"] == "Unregistered" && body["timestamp"]?.stringValue == nil && body["timestamp"] != nil)
        #expect(refused.response.headers.contains { $0.name == "apns-id" })
        #expect(try world.reply(#"{"op":"tray","device":"d2"}"#)["entries"] == .array([]))
        #expect(try world.reply(#"{"op":"chaos","remove":"c1"}"#)["removed"] == "c1")
        #expect(world.apns(second).response.status == 200)
    }

    /// The line protocol's pushes meet `answer` rules too (its reply names the rule), and
    /// never a latency or a fault: a line has no connection to hold or break.
    @Test func theLineProtocolsPushesMeetAnswerRules() throws {
        let world = World()
        _ = try world.readyDevice("ios")
        _ = try world.reply(#"{"op":"chaos","rule":{"service":"apns","then":{"latency_ms":{"fixed":5000}}}}"#)
        let apns = #"{"op":"apns","headers":{"apns-topic":"com.example.app"},"body":{"aps":{"alert":"x"}}}"#
        #expect(try world.reply(apns)["ok"] == true)  // the latency rule is the network's
        _ = try world.reply(
            #"{"op":"chaos","rule":{"service":"apns","count":1,"then":{"answer":"Unregistered"}}}"#)
        let lines = world.session.handle(apns)
        let last = try #require(lines.last)
        let refused = try #require(try JSON.parse(text: last).objectValue)
        #expect(lines.count == 1 && refused["ok"] == false && refused["status"] == 410)
        #expect(refused["reason"] == "Unregistered" && refused["timestamp"] != nil && refused["chaos"] == "c2")
        #expect(refused["effect"] == "answered 410 Unregistered by chaos rule c2, 0 left; nothing delivered")
        _ = try world.readyDevice("android")
        _ = try world.reply(
            #"{"op":"chaos","rule":{"service":"fcm","match":{"device":"d2"},"then":{"answer":"UNREGISTERED"}}}"#)
        let token = try world.readyToken()
        let fcm = try world.reply(#"{"op":"fcm","body":{"message":{"token":"\#(token)","data":{}}}}"#)
        #expect(fcm["ok"] == false && fcm["error"]?["status"] == "NOT_FOUND" && fcm["chaos"] == "c3")
        let entry = try #require(world.session.log.entries(matching: .init(device: "d2"), limit: 100).last)
        #expect(entry.summary.contains(#""chaos":"c3""#))
    }

    @Test func aSeededProbabilityMeetsTheSameRequestsEveryTime() throws {
        func pattern(seed: Int) throws -> [Int] {
            let world = World()
            let token = try world.readyDevice("ios")
            _ = try world.reply(
                #"{"op":"chaos","rule":{"service":"apns","probability":0.5,"seed":\#(seed),"then":{"answer":"TooManyRequests"}}}"#
            )
            return (0..<64).map { _ in world.apns(token).response.status }
        }
        let first = try pattern(seed: 7)
        #expect(try pattern(seed: 7) == first)
        #expect(try pattern(seed: 8) != first)
        let faults = first.filter { $0 == 429 }.count
        #expect(faults > 16 && faults < 48)  // about half, from a fixed seed: this holds every run
    }

    @Test func aBadRuleIsRefusedWithASentenceAndAddsNothing() throws {
        let world = World()
        let cases: [(String, String)] = [
            (#"{"service":"fcm","then":{"answer":"Nope"}}"#, "'Nope' is not an answer fcm gives"),
            (
                #"{"service":"apns","probability":1.5,"then":{"answer":"Shutdown"}}"#,
                "\"probability\" must be from 0 to 1"
            ),
            (#"{"service":"smtp","then":{"answer":"x"}}"#, "\"service\" must be one of"),
            (
                #"{"service":"apns","match":{"colour":"red"},"then":{"answer":"Shutdown"}}"#,
                "\"match\" has no \"colour\""
            ),
            (#"{"service":"apns","count":0,"then":{"answer":"Shutdown"}}"#, "\"count\" must be a whole number"),
            (#"{"service":"apns","then":{"latency_ms":{"uniform":[9,3]}}}"#, "a ≤ b"),
            (#"{"service":"mqtt","then":{"fault":"broker_down","for_ms":100}}"#, "no broker of its own"),
            (#"{"service":"mqtt","then":{"answer":"503"}}"#, "no broker of its own"),
            (#"{"service":"apns","match":{"device":"d1"},"then":{"fault":"tls_fail"}}"#, "takes no \"match\""),
            (#"{"service":"webhook","then":{"fault":"tls_fail"}}"#, "is not a fault webhook takes"),
        ]
        for (rule, words) in cases {
            let refused = try world.reply(#"{"op":"chaos","rule":\#(rule)}"#)
            let error = refused["error"]?.stringValue ?? ""
            #expect(refused["ok"] == false && error.contains(words), "\(rule): \(error)")
        }
        #expect(try world.reply(#"{"op":"chaos"}"#)["rules"] == .array([]))
        let missing = try world.reply(#"{"op":"chaos","remove":"c9"}"#)
        #expect(missing["error"] == "there is no chaos rule 'c9'; the rules are: none")
    }

    /// A held answer holds only itself: the interleaving is forced (the second push is
    /// sent only once the shell has written the first one's report line, so the first is
    /// being held), and the first's client is still waiting when the second's has its answer.
    @Test func latencyHoldsOneAnswerWhileAnotherConnectionIsServed() throws {
        let shell = try FrontDoorTests.Shell()
        let held = try FrontDoorTests().iosDevice(shell)
        let served = try FrontDoorTests().iosDevice(shell)
        _ = try shell.send(
            #"{"op":"chaos","rule":{"service":"apns","match":{"device":"d1"},"then":{"latency_ms":{"fixed":30000}}}}"#)
        func push(_ token: String) -> [String] {
            [
                "--http2-prior-knowledge", "-H", "apns-topic: com.example.app", "-H",
                "authorization: \(FrontDoorTests.providerToken)", "-d", #"{"aps":{"alert":"x"}}"#,
                "http://127.0.0.1:\(shell.port)/3/device/\(token)",
            ]
        }
        let waiting = Process()
        waiting.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        waiting.arguments = ["curl", "-s", "-i"] + push(held)
        waiting.standardOutput = Pipe()
        try waiting.run()
        var report = ""
        while !report.contains(#""chaos":"c1""#) {
            report = try FrontDoorTests.Shell.readLine(shell.output, &shell.pending)
        }
        #expect(report.contains("the answer waits 30000 ms (chaos rule c1)"))
        let answer = try shell.curl(push(served))
        #expect(answer.hasPrefix("HTTP/2 200"))
        #expect(waiting.isRunning)  // d1's answer is still held
        kill(waiting.processIdentifier, SIGKILL)
        waiting.waitUntilExit()
        // A short hold ends in the real answer.
        _ = try shell.send(#"{"op":"chaos","remove":"all"}"#)
        _ = try shell.send(#"{"op":"chaos","rule":{"service":"apns","then":{"latency_ms":{"fixed":200}}}}"#)
        #expect(try shell.curl(push(held)).hasPrefix("HTTP/2 200"))
        #expect(shell.stop() == 0)
    }

    /// The transport faults, frame by frame as an HTTP/2 client sees them: a GOAWAY whose
    /// last stream id is below the request's (then the connection closes), a reset with
    /// REFUSED_STREAM (the connection goes on), a close with no answer; and each over
    /// HTTP/1.1, a close with no answer. None delivers anything.
    @Test func transportFaultsAreTheFramesTheyName() throws {
        let shell = try FrontDoorTests.Shell()
        var written: [String] = []  // every line the shell wrote, the report lines among them
        func rule(_ fault: String) throws {
            written += try shell.send(
                #"{"op":"chaos","rule":{"service":"fcm","count":1,"then":{"fault":"\#(fault)"}}}"#)
        }
        let path = "/v1/projects/cxshell/messages:send"
        // GOAWAY below the first stream: last stream id 0, no answer, then the close.
        try rule("goaway")
        let first = try #require(HTTP2TestClient(port: shell.port))
        let refused = first.request("POST", "fcm.googleapis.com", path, body: 2)
        first.pump { first.closed }
        #expect(first.goawayLastStream == 0 && first.statuses[refused] == nil && first.closed)
        // GOAWAY below a later stream names the stream answered before it.
        let second = try #require(HTTP2TestClient(port: shell.port))
        let answered = second.request("POST", "fcm.googleapis.com", path, body: 2)
        second.pump { second.statuses[answered] != nil }
        try rule("goaway")
        let later = second.request("POST", "fcm.googleapis.com", path, body: 2)
        second.pump { second.closed }
        #expect(second.statuses[answered] == "401" && second.goawayLastStream == answered)
        #expect(second.statuses[later] == nil)
        // A reset refuses the stream; the connection serves the next one.
        try rule("rst_stream")
        let third = try #require(HTTP2TestClient(port: shell.port))
        let reset = third.request("POST", "fcm.googleapis.com", path, body: 2)
        third.pump { third.resets[reset] != nil }
        let next = third.request("POST", "fcm.googleapis.com", path, body: 2)
        third.pump { third.statuses[next] != nil }
        #expect(third.resets[reset] == NGHTTP2_REFUSED_STREAM.rawValue && !third.closed)
        #expect(third.statuses[next] == "401" && third.goawayLastStream == nil)
        // A close: no answer, no GOAWAY.
        try rule("close")
        let fourth = try #require(HTTP2TestClient(port: shell.port))
        let dropped = fourth.request("POST", "fcm.googleapis.com", path, body: 2)
        fourth.pump { fourth.closed }
        #expect(fourth.closed && fourth.statuses[dropped] == nil && fourth.goawayLastStream == nil)
        // HTTP/1.1 has neither GOAWAY nor resets: every fault closes, unanswered.
        try rule("goaway")
        let http1 = try shell.curl(["--http1.1", "-d", "{}", "http://127.0.0.1:\(shell.port)\(path)"])
        #expect(http1.isEmpty)
        written += try shell.send(#"{"op":"chaos"}"#)  // after the last fault's report line
        let reports = written.filter { $0.hasPrefix(#"{"network""#) && $0.contains(#""chaos":"c"#) }
        #expect(reports.count == 5 && reports.allSatisfy { $0.contains(#""status":0"#) })
        #expect(!written.contains { $0.hasPrefix(#"{"delivery""#) })
        #expect(shell.stop() == 0)
    }

    /// `tls_fail`: new TLS handshakes for the service's hosts fail with an alert (curl's
    /// exit 35), until the rule is spent; other hosts' go on, and the refusal is reported.
    @Test func aTLSFailRuleFailsTheServicesHandshakes() throws {
        let shell = try FrontDoorTests.Shell()
        let token = try FrontDoorTests().iosDevice(shell)
        _ = try shell.send(#"{"op":"chaos","rule":{"service":"apns","count":1,"then":{"fault":"tls_fail"}}}"#)
        func push(_ host: String) throws -> (output: String, status: Int32) {
            let curl = Process()
            curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            curl.arguments = [
                "curl", "-s", "-i", "--cacert", shell.ca, "--resolve", "\(host):\(shell.port):127.0.0.1", "-H",
                "apns-topic: com.example.app", "-H", "authorization: \(FrontDoorTests.providerToken)", "-d",
                #"{"aps":{"alert":"x"}}"#, "https://\(host):\(shell.port)/3/device/\(token)",
            ]
            let pipe = Pipe()
            curl.standardOutput = pipe
            try curl.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            curl.waitUntilExit()
            return (String(decoding: data, as: UTF8.self), curl.terminationStatus)
        }
        // Another service's host is not the rule's: its handshake goes on (FCM answers 404
        // to an APNs path, after the handshake).
        #expect(try push("fcm.googleapis.com").output.hasPrefix("HTTP/2 404"))
        let refused = try push("api.push.apple.com")
        #expect(refused.status == 35 && refused.output.isEmpty)
        #expect(try push("api.push.apple.com").output.hasPrefix("HTTP/2 200"))  // spent
        let written = try shell.send(#"{"op":"chaos"}"#)
        let report = try #require(written.first { $0.hasPrefix(#"{"network":"tls""#) })
        #expect(report.contains(#""host":"api.push.apple.com""#) && report.contains(#""chaos":"c1""#))
        #expect(written.filter { $0.hasPrefix(#"{"delivery""#) }.count == 1)
        #expect(shell.stop() == 0)
    }
}
