import CXHost
import Foundation
import OrderedJSON
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The inspector (inspector.md) on a real `cxshell serve --listen`, reached with curl as
/// a test framework or a person would: the JSON API, the log, credentials, metrics, and
/// every security refusal beside the success it guards, each checked to change nothing.
@Suite(.serialized) struct InspectorTests {
    typealias Shell = FrontDoorTests.Shell

    /// An HTTP/1.1 request to the inspector: the status and the body parsed (or its text).
    struct Answer {
        let status: Int
        let text: String
        var json: JSON? { try? JSON.parse(text: text) }
    }

    func call(
        _ shell: Shell, _ method: String, _ path: String, json body: String? = nil, headers: [String] = [],
        host: String? = nil, maxTime: Int? = nil
    ) throws -> Answer {
        var arguments = ["-X", method, "-o", "-", "-w", "\n%{http_code}"]
        if let maxTime { arguments += ["--max-time", String(maxTime)] }
        if let body { arguments += ["-H", "content-type: application/json", "--data-binary", body] }
        for header in headers { arguments += ["-H", header] }
        if let host { arguments += ["-H", "host: \(host)"] }
        arguments.append("http://127.0.0.1:\(shell.port)\(path)")
        let output = try shell.curl(["--http1.1", "--no-include"] + arguments)
        let split = try #require(output.lastIndex(of: "\n"))
        return Answer(status: Int(output[output.index(after: split)...]) ?? 0, text: String(output[..<split]))
    }

    /// Makes `count` ready iOS devices through the API; their ids and tokens.
    func devices(_ shell: Shell, _ count: Int, platform: String = "ios") throws -> [(id: String, token: String)] {
        let made = try call(
            shell, "POST", "/api/v1/devices", json: #"{"platform":"\#(platform)","count":\#(count),"ready":true}"#)
        #expect(made.status == 201, "\(made.text)")
        return try (made.json?["devices"]?.arrayValue ?? []).map { entry in
            (try #require(entry["device"]?.stringValue), try #require(entry["token"]?.stringValue))
        }
    }

    func push(_ shell: Shell, _ token: String, _ alert: String = "hi", authorization: String? = nil) throws -> String {
        try shell.curl([
            "--http2-prior-knowledge", "-H", "apns-topic: com.example.app", "-H",
            "authorization: \(authorization ?? FrontDoorTests.providerToken)", "-d", #"{"aps":{"alert":"\#(alert)"}}"#,
            "http://127.0.0.1:\(shell.port)/3/device/\(token)",
        ])
    }

    @Test func devicesAreMadeInBulkListedWithACursorShownAndDeleted() throws {
        let shell = try Shell()
        let made = try devices(shell, 5)
        #expect(made.map(\.id) == ["d1", "d2", "d3", "d4", "d5"])
        _ = try call(shell, "POST", "/api/v1/devices", json: #"{"platform":"android","fcm_project":"demo"}"#)
        let page = try call(shell, "GET", "/api/v1/devices?limit=2")
        #expect(page.json?["devices"]?.arrayValue?.map { $0["device"]?.stringValue } == ["d1", "d2"])
        #expect(page.json?["next"] == "d2")
        let rest = try call(shell, "GET", "/api/v1/devices?after=d2&limit=1000")
        #expect(rest.json?["devices"]?.arrayValue?.count == 4 && rest.json?["next"] == .null)
        let android = try call(shell, "GET", "/api/v1/devices?platform=android")
        #expect(android.json?["devices"]?.arrayValue?.map { $0["device"]?.stringValue } == ["d6"])
        let running = try call(shell, "GET", "/api/v1/devices?state=foreground")
        #expect(running.json?["devices"]?.arrayValue?.count == 5)
        // A push shows in the device's view: its tray and the core's deliveries.
        #expect(try push(shell, made[0].token).hasPrefix("HTTP/2 200"))
        let shown = try call(shell, "GET", "/api/v1/devices/d1")
        #expect(shown.json?["tray"]?.arrayValue?.count == 1)
        #expect(shown.json?["deliveries"]?.arrayValue?.first?["output"]?.stringValue?.contains(#""body":"hi""#) == true)
        #expect(shown.json?["token"]?.stringValue == made[0].token)
        // Deleted: gone from the world, and its token retired as an uninstall retires it.
        #expect(try call(shell, "DELETE", "/api/v1/devices/d1", json: "").status == 204)
        #expect(try call(shell, "GET", "/api/v1/devices/d1").status == 404)
        #expect(try call(shell, "DELETE", "/api/v1/devices/d1", json: "").status == 404)
        #expect(try push(shell, made[0].token).hasPrefix("HTTP/2 410"))
        #expect(try call(shell, "GET", "/api/v1/world").json?["devices"] == 5)
        // New ids never reuse a deleted one's.
        let next = try call(shell, "POST", "/api/v1/devices", json: #"{"platform":"ios"}"#)
        #expect(next.json?["devices"]?.arrayValue?.first?["device"] == "d7")
        // Bad requests name the problem and make nothing.
        for (body, words) in [
            (#"{"platform":"ios","count":0}"#, "count must be"),
            (#"{"platform":"ios","count":100001}"#, "count must be"),
            (#"{"platform":"pager"}"#, "platform"), ("[1]", "JSON object"), ("{", "not JSON"),
            (#"{"platform":"ios","ready":"yes"}"#, "ready must be"),
        ] {
            let refused = try call(shell, "POST", "/api/v1/devices", json: body)
            #expect(
                refused.status == 400 && refused.json?["error"]?.stringValue?.contains(words) == true,
                "\(body): \(refused.text)")
        }
        #expect(try call(shell, "GET", "/api/v1/world").json?["devices"] == 6)
        #expect(try call(shell, "GET", "/api/v1/devices?limit=0").status == 400)
        #expect(try call(shell, "GET", "/api/v1/devices?after=d99").status == 400)
        #expect(shell.stop() == 0)
    }

    /// The line protocol over HTTP answers exactly the lines standard output would carry.
    @Test func requestsSpeakTheLineProtocol() throws {
        let shell = try Shell()
        let answer = try call(
            shell, "POST", "/api/v1/requests",
            json:
                #"[{"op":"device","platform":"ios","id":1},{"op":"launch"},{"op":"call","plugin":"push","method":"register","input":"","id":2},{"op":"bogus"}]"#
        )
        let lines = try #require(answer.json?["lines"]?.arrayValue)
        #expect(lines.count == 4)
        #expect(lines[0]["reply"] == 1 && lines[0]["device"] == "d1")
        #expect(lines[2]["reply"] == 2 && lines[2]["ok"] == true)
        #expect(lines[3]["ok"] == false && lines[3]["error"]?.stringValue?.contains("unknown op 'bogus'") == true)
        // Standard output has a report line for each, in order.
        let reports = shell.linesWritten().filter { $0.hasPrefix(#"{"network":"api""#) }
        #expect(reports.count == 4 && reports[3].contains(#""status":400"#), "\(reports)")
        let single = try call(shell, "POST", "/api/v1/requests", json: #"{"op":"state"}"#)
        #expect(single.json?["lines"]?.arrayValue?.first?["state"] == "foreground")
        #expect(try call(shell, "POST", "/api/v1/requests", json: "[]").status == 400)
        #expect(try call(shell, "POST", "/api/v1/requests", json: "3").status == 400)
        #expect(shell.stop() == 0)
    }

    @Test func theLogHasEveryDoorFiltersAndNeverReusesASeq() throws {
        let shell = try Shell()
        let made = try devices(shell, 2)
        _ = try shell.send(#"{"op":"state","device":"d2"}"#)
        #expect(try push(shell, made[0].token, "one").hasPrefix("HTTP/2 200"))
        #expect(try push(shell, "00", "bad").hasPrefix("HTTP/2 400"))
        let all = try call(shell, "GET", "/api/v1/log")
        let entries = try #require(all.json?["entries"]?.arrayValue)
        #expect(entries.map { $0["source"]?.stringValue } == ["api", "line", "apns", "apns"], "\(all.text)")
        #expect(entries.map { $0["seq"] } == [1, 2, 3, 4])
        #expect(entries[2]["device"] == "d1" && entries[2]["status"] == 200)
        #expect(entries[2]["deliveries"]?.arrayValue?.first?["output"]?.stringValue?.contains("one") == true)
        #expect(entries[2]["request"]?["body"] == #"{"aps":{"alert":"one"}}"#)
        #expect(entries[3]["reason"] == "BadDeviceToken")
        // Filters.
        func seqs(_ query: String) throws -> [Int64] {
            try (call(shell, "GET", "/api/v1/log?" + query).json?["entries"]?.arrayValue ?? []).compactMap {
                $0["seq"]?.numberValue.flatMap { Int64($0.text) }
            }
        }
        #expect(try seqs("source=apns") == [3, 4])
        #expect(try seqs("status=4xx") == [4])
        #expect(try seqs("status=2xx&device=d1") == [1, 3])
        #expect(try seqs("status=200&device=d1") == [3])
        #expect(try seqs("device=d2") == [1, 2])
        #expect(try seqs("q=baddevicetoken") == [4])
        #expect(try seqs("after=2&limit=1") == [3])
        #expect(try seqs("order=desc&limit=2") == [4, 3])
        #expect(try call(shell, "GET", "/api/v1/log?after=2&limit=1").json?["next"] == 3)
        #expect(try call(shell, "GET", "/api/v1/log?status=abc").status == 400)
        #expect(try call(shell, "GET", "/api/v1/log?limit=1001").status == 400)
        // Reads are not logged; one entry whole.
        #expect(try seqs("") == [1, 2, 3, 4])
        #expect(try call(shell, "GET", "/api/v1/log/3").json?["seq"] == 3)
        #expect(try call(shell, "GET", "/api/v1/log/99").status == 404)
        // Cleared: the world is unchanged, and seq goes on.
        #expect(try call(shell, "DELETE", "/api/v1/log", json: "").status == 204)
        #expect(try seqs("") == [])
        #expect(try push(shell, made[1].token).hasPrefix("HTTP/2 200"))
        #expect(try seqs("") == [5])
        #expect(try call(shell, "GET", "/api/v1/world").json?["devices"] == 2)
        #expect(shell.stop() == 0)
    }

    /// The seed's hand test: a provider token and an access token minted by the world.
    @Test func credentialsAreMintedRegisteredAndBound() throws {
        let shell = try Shell()
        let made = try devices(shell, 1)
        let apns = try call(shell, "POST", "/api/v1/credentials", json: #"{"service":"apns","team":"TEAM000001"}"#)
        #expect(apns.status == 201)
        let authorization = try #require(apns.json?["authorization"]?.stringValue)
        #expect(authorization.hasPrefix("bearer ey") && apns.json?["team"] == "TEAM000001")
        _ = shell.linesWritten()
        #expect(try push(shell, made[0].token, authorization: authorization).hasPrefix("HTTP/2 200"))
        // From now on signatures are checked: the unsigned token of the other tests fails.
        let report = try #require(shell.linesWritten().last)
        #expect(report.contains(#""status":200"#) && !report.contains("not checked"), "\(report)")
        #expect(try push(shell, made[0].token).hasPrefix("HTTP/2 403"))
        // FCM: a token bound to its project.
        let android = try call(
            shell, "POST", "/api/v1/devices", json: #"{"platform":"android","fcm_project":"demo","ready":true}"#)
        let token = try #require(android.json?["devices"]?.arrayValue?.first?["token"]?.stringValue)
        let fcm = try call(shell, "POST", "/api/v1/credentials", json: #"{"service":"fcm","project":"demo"}"#)
        #expect(fcm.status == 201 && fcm.json?["expires_in"] == 3599)
        let bearer = try #require(fcm.json?["authorization"]?.stringValue)
        func send(_ project: String) throws -> String {
            try shell.curl([
                "--http2-prior-knowledge", "-H", "authorization: \(bearer)", "-d",
                #"{"message":{"token":"\#(token)","data":{"a":"b"}}}"#,
                "http://127.0.0.1:\(shell.port)/v1/projects/\(project)/messages:send",
            ])
        }
        #expect(try send("demo").hasPrefix("HTTP/2 200"))
        #expect(try send("other").hasPrefix("HTTP/2 403"))
        for body in [#"{"service":"fcm"}"#, #"{"service":"sms"}"#, #"{"service":"apns","team":""}"#] {
            #expect(try call(shell, "POST", "/api/v1/credentials", json: body).status == 400, "\(body)")
        }
        #expect(shell.stop() == 0)
    }

    /// Each refusal changes nothing: the device count and the log stay as they were.
    @Test func theInspectorRefusesOtherNamesOtherOriginsAndPlainWrites() throws {
        let shell = try Shell()
        _ = try devices(shell, 1)
        let body = #"{"platform":"ios"}"#
        let rebinding = try call(shell, "POST", "/api/v1/devices", json: body, host: "attacker.example")
        #expect(rebinding.status == 421, "\(rebinding.text)")
        #expect(try call(shell, "GET", "/api/v1/world", host: "attacker.example").status == 421)
        let plain = try shell.curl([
            "--http1.1", "-o", "/dev/null", "-w", "%{http_code}", "-H", "content-type: text/plain", "-d", body,
            "http://127.0.0.1:\(shell.port)/api/v1/devices",
        ])
        #expect(plain == "403")
        let crossSite = try call(shell, "POST", "/api/v1/devices", json: body, headers: ["origin: http://evil.example"])
        #expect(crossSite.status == 403 && crossSite.json?["error"]?.stringValue?.contains("origin") == true)
        let sameSite = try call(
            shell, "POST", "/api/v1/devices", json: body, headers: ["origin: http://127.0.0.1:\(shell.port)"])
        #expect(sameSite.status == 201)
        #expect(try call(shell, "GET", "/api/v1/world").json?["devices"] == 2)
        #expect(try call(shell, "GET", "/api/v1/log").json?["entries"]?.arrayValue?.count == 2)
        // A named host given with --api-host is the shell's own; a service host never is.
        #expect(try call(shell, "GET", "/api/v1/nothing").status == 404)
        #expect(try call(shell, "PUT", "/api/v1/world", json: "{}").status == 405)
        let service = try call(shell, "GET", "/api/v1/world", host: "api.push.apple.com")
        #expect(service.status == 505 && service.text.contains("APNs takes HTTP/2 only"), "\(service.text)")
        #expect(shell.stop() == 0)
    }

    @Test func aTokenGuardsEverythingButHealthAndThePage() throws {
        let shell = try Shell(arguments: ["--api-token", "s3cret", "--api-host", "cx.test"])
        #expect(try call(shell, "GET", "/livez").status == 200)
        #expect(try call(shell, "GET", "/readyz").text == "ok\n")
        // The page opens by navigation; it holds no world, and its form asks for the token.
        let page = try call(shell, "GET", "/")
        #expect(page.status == 200 && page.text.contains(#"id="token-form""#))
        #expect(try call(shell, "POST", "/", json: "{}").status == 401)
        let refused = try call(shell, "POST", "/api/v1/devices", json: #"{"platform":"ios"}"#)
        #expect(refused.status == 401)
        #expect(try call(shell, "GET", "/metrics").status == 401)
        #expect(try call(shell, "GET", "/api/v1/world", headers: ["authorization: Bearer wrong"]).status == 401)
        let allowed = try call(
            shell, "GET", "/api/v1/world", headers: ["authorization: Bearer s3cret"], host: "cx.test:80")
        #expect(allowed.status == 200 && allowed.json?["devices"] == 0, "\(allowed.text)")
        #expect(shell.stop() == 0)
    }

    /// A --listen address off loopback without a token is refused at start, by name.
    @Test func anOpenInspectorOffLoopbackIsRefusedAtStart() throws {
        let process = Process()
        process.executableURL = ServeProcessTests.executable
        process.arguments = ["serve", "--listen", "0.0.0.0:0", "--ca-dir", NSTemporaryDirectory() + "cx-\(UUID())"]
        let errors = Pipe()
        process.standardInput = Pipe()
        process.standardOutput = Pipe()
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 2)
        #expect(said.contains("not a loopback address") && said.contains("--api-token"), "\(said)")
    }

    @Test func metricsCountRequestsAndDevices() throws {
        let shell = try Shell()
        let made = try devices(shell, 2)
        #expect(try push(shell, made[0].token).hasPrefix("HTTP/2 200"))
        #expect(try push(shell, "00").hasPrefix("HTTP/2 400"))
        // The notification tapped: an `opened` delivery beside the `received` one.
        let tap = try call(
            shell, "POST", "/api/v1/requests", json: #"{"op":"tap","device":"\#(made[0].id)","which":"newest"}"#)
        #expect(tap.text.contains(#""mobiler_push\":\"opened\""#), "\(tap.text)")
        let metrics = try call(shell, "GET", "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.text.contains(#"cx_requests_total{source="apns",status="200"} 1"#), "\(metrics.text)")
        #expect(metrics.text.contains(#"cx_requests_total{source="apns",status="400"} 1"#))
        #expect(metrics.text.contains("\ncx_devices 2\n") && metrics.text.contains("# TYPE cx_requests_total counter"))
        #expect(metrics.text.contains(#"cx_request_duration_seconds_count{source="apns"} 2"#))
        #expect(metrics.text.contains(#"cx_request_duration_seconds_bucket{source="apns",le="+Inf"} 2"#))
        #expect(metrics.text.contains("# TYPE cx_request_duration_seconds histogram"))
        let deliveries = metrics.text.split(separator: "\n").filter { $0.hasPrefix("cx_deliveries_total{") }
        #expect(
            deliveries == [
                #"cx_deliveries_total{kind="opened"} 1"#, #"cx_deliveries_total{kind="other"} 0"#,
                #"cx_deliveries_total{kind="received"} 1"#, #"cx_deliveries_total{kind="token_refresh"} 0"#,
            ], "\(metrics.text)")
        #expect(metrics.text.contains("\ncx_connections "))
        #expect(shell.stop() == 0)
    }

    /// Retention: the last --log-max entries, a count of the dropped, and a body over
    /// 4 KiB cut in the list but whole at /log/{seq}.
    @Test func theLogKeepsItsMaximumAndCutsLongBodies() throws {
        let shell = try Shell(arguments: ["--log-max", "5"])
        let made = try devices(shell, 1)
        for index in 0..<12 { #expect(try push(shell, made[0].token, "n\(index)").hasPrefix("HTTP/2 200")) }
        let world = try call(shell, "GET", "/api/v1/world").json
        #expect(world?["log"]?["retained"] == 5 && world?["log"]?["dropped"] == 8 && world?["log"]?["max"] == 5)
        let seqs = (try call(shell, "GET", "/api/v1/log").json?["entries"]?.arrayValue ?? []).map { $0["seq"] }
        #expect(seqs == [9, 10, 11, 12, 13])
        // 6,000 bytes of UTF-8: too large for APNs (413), logged all the same.
        let long = String(repeating: "é", count: 3000)
        #expect(try push(shell, made[0].token, long).hasPrefix("HTTP/2 413"))
        let listed = try #require(try call(shell, "GET", "/api/v1/log?after=13").json?["entries"]?.arrayValue?.first)
        #expect(listed["truncated"] == true)
        #expect((listed["request"]?["body"]?.stringValue?.utf8.count ?? 0) <= 4096)
        let whole = try call(shell, "GET", "/api/v1/log/14").json
        #expect(whole?["request"]?["body"]?.stringValue == #"{"aps":{"alert":"\#(long)"}}"#)
        #expect(shell.stop() == 0)
    }

    /// --keep-running: the end of input does not end the shell; a signal does, cleanly.
    @Test func keepRunningServesAfterTheEndOfInput() throws {
        let shell = try Shell(arguments: ["--keep-running"])
        try shell.input.fileHandleForWriting.close()
        _ = try devices(shell, 1)
        #expect(try call(shell, "GET", "/api/v1/world").json?["devices"] == 1)
        kill(shell.process.processIdentifier, SIGTERM)
        shell.process.waitUntilExit()
        #expect(shell.process.terminationReason == .exit && shell.process.terminationStatus == 0)
    }

    /// A client reading a stream (curl -N) until what it read contains `until`, or
    /// `seconds` pass (then the test fails on what is missing, rather than hanging).
    final class StreamReader: @unchecked Sendable {
        let process = Process()
        let pipe = Pipe()
        private let text = Monitor("")

        init(_ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["curl", "-s", "-N"] + arguments
            process.standardOutput = pipe
            try process.run()
            let handle = pipe.fileHandleForReading
            let text = self.text
            Thread {
                while case let data = handle.availableData, !data.isEmpty {
                    text.withLock { $0 += String(decoding: data, as: UTF8.self) }
                }
            }.start()
        }

        func read(until: String, seconds: Double = 20) -> String {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                let now = text.withLock { $0 }
                if now.contains(until) { return now }
                usleep(2_000)
            }
            return text.withLock { $0 }
        }

        /// Ends the client (SIGKILL: Foundation starts children with SIGTERM blocked).
        func stop() {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// wait= answers with the first matching entry after `after`, whenever it comes,
    /// ignoring others; with none, the empty answer when the wait is over.
    @Test func aLongPollAnswersWithTheNextMatchingEntry() throws {
        let shell = try Shell()
        let made = try devices(shell, 2)
        let poll = try StreamReader([
            "-w", "\n%{http_code}", "http://127.0.0.1:\(shell.port)/api/v1/log?after=1&device=d2&source=apns&wait=30",
        ])
        // The poll is open once the stream of the world shows it (a round trip, no sleep).
        var rounds = 0
        while try call(shell, "GET", "/api/v1/world").json?["watching"]?["polls"] != 1, rounds < 1_000 { rounds += 1 }
        #expect(try push(shell, made[0].token, "to d1").hasPrefix("HTTP/2 200"))
        #expect(try push(shell, made[1].token, "to d2").hasPrefix("HTTP/2 200"))
        let answer = poll.read(until: "\n200")
        poll.stop()
        let body = try JSON.parse(text: String(answer.dropLast(4)))
        let entries = try #require(body["entries"]?.arrayValue)
        #expect(entries.count == 1 && entries[0]["device"] == "d2" && entries[0]["seq"] == 3, "\(answer)")
        #expect(body["next"] == 3)
        // Nothing matches: the wait passes and the answer is empty, with the same cursor.
        let empty = try call(shell, "GET", "/api/v1/log?after=3&source=fcm&wait=1")
        #expect(empty.json?["entries"]?.arrayValue?.isEmpty == true && empty.json?["next"] == 3)
        #expect(try call(shell, "GET", "/api/v1/log?wait=31").status == 400)
        #expect(shell.stop() == 0)
    }

    /// Server-Sent Events: live entries that match, a resume after Last-Event-ID with a gap
    /// event for what retention dropped, over HTTP/1.1 and HTTP/2; a stream whose client
    /// went away is dropped.
    @Test func theStreamResumesAfterTheLastEventAndNamesTheGap() throws {
        let shell = try Shell(arguments: ["--log-max", "3"])
        let made = try devices(shell, 1)
        for index in 0..<5 { #expect(try push(shell, made[0].token, "n\(index)").hasPrefix("HTTP/2 200")) }
        // Six entries, seqs 4 to 6 retained: a client that saw 1 missed 2 and 3.
        let resumed = try StreamReader([
            "--http2-prior-knowledge", "-H", "Last-Event-ID: 1", "http://127.0.0.1:\(shell.port)/api/v1/stream",
        ])
        var text = resumed.read(until: "id: 6")
        #expect(text.contains("event: gap\ndata: {\"dropped\":2}\n\n"), "\(text)")
        let ids = text.split(separator: "\n").filter { $0.hasPrefix("id: ") }
        #expect(ids == ["id: 4", "id: 5", "id: 6"], "\(ids)")
        let live = try StreamReader(["http://127.0.0.1:\(shell.port)/api/v1/stream?source=apns&status=2xx"])
        #expect(live.read(until: "log stream").contains(": cxshell log stream"))
        #expect(try push(shell, made[0].token, "live").hasPrefix("HTTP/2 200"))
        #expect(try push(shell, "00", "refused").hasPrefix("HTTP/2 400"))
        _ = try shell.send(#"{"op":"state"}"#)
        text = resumed.read(until: "id: 9")
        #expect(text.contains("id: 7") && text.contains("id: 8") && text.contains("id: 9"))
        let liveText = live.read(until: "id: 7")
        #expect(liveText.contains("id: 7") && !liveText.contains("id: 8") && !liveText.contains("id: 9"), "\(liveText)")
        let event = try #require(liveText.split(separator: "\n").first { $0.hasPrefix("data: ") })
        #expect(try JSON.parse(text: String(event.dropFirst(6)))["request"]?["body"] == #"{"aps":{"alert":"live"}}"#)
        // Clients gone: their streams are dropped at the next entry.
        resumed.stop()
        live.stop()
        #expect(try call(shell, "GET", "/livez").status == 200)
        #expect(try push(shell, made[0].token).hasPrefix("HTTP/2 200"))
        #expect(try call(shell, "GET", "/api/v1/world").json?["watching"]?["streams"] == 0)
        #expect(try call(shell, "GET", "/api/v1/stream", headers: ["Last-Event-ID: x"]).status == 400)
        #expect(shell.stop() == 0)
    }

    /// A backlog past what the transport holds for one stream (1 MiB) resumes over HTTP/2
    /// a slice a connection: each slice ends cleanly (no reset), and resuming from its
    /// last id reaches every entry, in order, none twice.
    @Test func aBacklogOfMegabytesResumesOverHTTP2InSlices() throws {
        let shell = try Shell()
        let pad = String(repeating: "x", count: 4_000)
        // 400 entries of 4 KB each (1.6 MB of events), sent 100 a request under the body limit.
        let file = shell.directory + "-requests.json"
        defer { try? FileManager.default.removeItem(atPath: file) }
        for batch in 0..<4 {
            let requests = (0..<100).map { #"{"op":"state","n":\#(batch * 100 + $0),"pad":"\#(pad)"}"# }
            try Data("[\(requests.joined(separator: ","))]".utf8).write(to: URL(fileURLWithPath: file))
            #expect(try call(shell, "POST", "/api/v1/requests", json: "@" + file).status == 200)
        }
        let last = try #require(try call(shell, "GET", "/api/v1/world").json?["log"]?["next_seq"]?.integerValue) - 1
        var seen: [Int64] = []
        var slices = 0
        while seen.last ?? 0 < last, slices < 20 {
            slices += 1
            let curl = Process()
            curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            curl.arguments = [
                "curl", "-s", "-N", "--http2-prior-knowledge", "--max-time", "5", "-H",
                "Last-Event-ID: \(seen.last ?? 0)", "http://127.0.0.1:\(shell.port)/api/v1/stream",
            ]
            let pipe = Pipe()
            curl.standardOutput = pipe
            try curl.run()
            let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            curl.waitUntilExit()
            let ids = text.split(separator: "\n").filter { $0.hasPrefix("id: ") }.compactMap { Int64($0.dropFirst(4)) }
            // A slice ends the stream (curl exits 0); the last one stays open for what comes
            // (curl's --max-time ends it: 28). A reset would be 92.
            #expect(
                curl.terminationStatus == 0 || (curl.terminationStatus == 28 && ids.last == last),
                "\(curl.terminationStatus)")
            #expect(!ids.isEmpty)
            seen += ids
        }
        #expect(seen == Array(1...last), "\(seen.count) ids of \(last), in \(slices) slices")
        #expect(slices >= 3)
        #expect(shell.stop() == 0)
    }

    /// The document in the repository is the one served, and it describes the server:
    /// every documented method answers with a documented status; every other is 405.
    /// Chaos rules over the API (chaos.md, "Rules"): added, listed, met by a push, and
    /// removed; a bad rule is refused with its sentence and adds nothing.
    @Test func chaosRulesAreAddedListedAndRemovedOverTheAPI() throws {
        let shell = try Shell()
        let device = try #require(try devices(shell, 1).first)
        let bad = try call(shell, "POST", "/api/v1/chaos", json: #"{"service":"apns","then":{"answer":"Nope"}}"#)
        #expect(bad.status == 400 && bad.text.contains("'Nope' is not an answer apns gives"))
        #expect(try call(shell, "GET", "/api/v1/chaos").json?["rules"] == .array([]))
        let added = try call(
            shell, "POST", "/api/v1/chaos", json: #"{"service":"apns","count":1,"then":{"answer":"Shutdown"}}"#)
        #expect(added.status == 201 && added.json?["rule"]?["id"] == "c1")
        #expect(try call(shell, "GET", "/api/v1/chaos").json?["rules"]?.arrayValue?.first?["remaining"] == 1)
        #expect(try push(shell, device.token).contains("HTTP/2 503"))
        #expect(try push(shell, device.token).contains("HTTP/2 200"))  // the rule retired
        _ = try call(shell, "POST", "/api/v1/chaos", json: #"{"service":"fcm","then":{"fault":"close"}}"#)
        #expect(try call(shell, "DELETE", "/api/v1/chaos/c9", json: "").status == 404)
        #expect(try call(shell, "DELETE", "/api/v1/chaos/all", json: "").status == 204)
        #expect(try call(shell, "GET", "/api/v1/chaos").json?["rules"] == .array([]))
        #expect(shell.stop() == 0)
    }

    @Test func theOpenAPIDocumentIsWhatTheServerAnswers() throws {
        let shell = try Shell()
        _ = try devices(shell, 1)
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Docs/openapi.json")
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(try call(shell, "GET", "/api/v1/openapi.json").text == text)
        let document = try JSON.parse(text: text)
        #expect(document["openapi"] == "3.1.0")
        let paths = try #require(document["paths"]?.objectValue)
        let bodies = [
            "/api/v1/requests": #"{"op":"state","device":"d1"}"#, "/api/v1/devices": #"{"platform":"ios"}"#,
            "/api/v1/credentials": #"{"service":"apns"}"#,
            "/api/v1/chaos": #"{"service":"fcm","then":{"answer":"INTERNAL"}}"#,
        ]
        var checked = 0
        for (path, item) in paths {
            let concrete = path.replacingOccurrences(of: "{id}", with: "d1").replacingOccurrences(
                of: "{seq}", with: "1")
            for method in ["get", "post", "put", "delete"] {
                let isStream = path == "/api/v1/stream" && method == "get"
                let answer = try call(
                    shell, method.uppercased(), concrete, json: method == "get" ? nil : bodies[path] ?? "",
                    maxTime: isStream ? 1 : nil)
                if let operation = item[method] {
                    #expect(
                        operation["responses"]?[String(answer.status)] != nil, "\(method) \(path): \(answer.status)")
                    checked += 1
                } else {
                    #expect(answer.status == 405, "\(method) \(path) is not documented: \(answer.status)")
                }
            }
        }
        #expect(checked == 24)
        #expect(shell.stop() == 0)
    }

    /// HTTP/1.1 answers in order: a request pipelined behind a long poll waits for it, and
    /// both are answered, in order, once the poll is.
    @Test func aRequestPipelinedBehindALongPollWaitsForIt() throws {
        let shell = try Shell()
        let made = try devices(shell, 1)
        let socket = try #require(FrontDoorTests.connection(port: shell.port))
        defer { close(socket) }
        FrontDoorTests.write(
            Array(
                ("GET /api/v1/log?after=1&wait=30 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                    + "GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").utf8), to: socket)
        var rounds = 0
        while try call(shell, "GET", "/api/v1/world").json?["watching"]?["polls"] != 1, rounds < 1_000 { rounds += 1 }
        var byte: UInt8 = 0
        #expect(recv(socket, &byte, 1, Int32(MSG_DONTWAIT)) == -1 && errno == EAGAIN, "answered before the poll")
        #expect(try push(shell, made[0].token).hasPrefix("HTTP/2 200"))
        let poll = FrontDoorTests.answer(on: socket)
        #expect(poll.hasPrefix("HTTP/1.1 200"), "\(poll)")
        let health = FrontDoorTests.answer(on: socket)
        #expect(health.hasPrefix("HTTP/1.1 200") && health.contains("content-type: text/plain"), "\(health)")
        #expect(shell.stop() == 0)
    }
}
