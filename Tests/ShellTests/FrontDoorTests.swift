import CXHost
import Foundation
import HTTPMessage
import OrderedJSON
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The front door as a backend sees it: a real `cxshell serve --listen` on a free
/// loopback port, and curl (HTTP/2 over TLS with the shell's CA, h2c, HTTP/1.1) as the
/// client. The line protocol drives the world on the same process.
@Suite(.serialized) struct FrontDoorTests {
    /// A running `cxshell serve --listen 127.0.0.1:0`, its input and its output lines.
    final class Shell: @unchecked Sendable {
        let process = Process()
        let input = Pipe()
        let output = Pipe()
        var pending = [UInt8]()
        let port: Int
        let ca: String
        let directory = NSTemporaryDirectory() + "cxshell-front-door-\(UUID().uuidString)"

        /// `ulimit`: arguments for the shell's `ulimit` to start it under (`-Sn 1024`),
        /// so the process starts with that limit whatever the test process has.
        /// `environment`: variables added to the test process's own for the shell.
        /// `arguments`: more of `serve`'s arguments (`--log-max 5`).
        init(ulimit: String? = nil, environment: [String: String] = [:], arguments more: [String] = []) throws {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            let arguments = ["serve", "--listen", "127.0.0.1:0", "--ca-dir", directory + "/ca"] + more
            if let ulimit {
                process.executableURL = URL(fileURLWithPath: "/bin/sh")
                process.arguments =
                    ["-c", "ulimit \(ulimit) && exec \"$0\" \"$@\"", ServeProcessTests.executable.path] + arguments
            } else {
                process.executableURL = ServeProcessTests.executable
                process.arguments = arguments
            }
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            let first = try JSON.parse(text: Self.readLine(output, &pending))
            let address = try #require(first["listening"]?["address"]?.stringValue)
            port = try #require(Int(address.split(separator: ":").last ?? ""))
            ca = try #require(first["listening"]?["ca"]?.stringValue)
        }

        /// Sends one protocol line and returns its output, through its reply.
        func send(_ line: String) throws -> [String] {
            input.fileHandleForWriting.write(Data((line + "\n").utf8))
            var lines: [String] = []
            repeat { lines.append(try Self.readLine(output, &pending)) } while !lines.last!.hasPrefix(#"{"reply""#)
            return lines
        }

        /// The lines already written, without waiting for more.
        func linesWritten() -> [String] {
            let descriptor = output.fileHandleForReading.fileDescriptor
            let flags = fcntl(descriptor, F_GETFL)
            _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
            defer { _ = fcntl(descriptor, F_SETFL, flags) }
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(descriptor, &chunk, chunk.count)
                if count <= 0 { break }
                pending += chunk[..<count]
            }
            var lines: [String] = []
            while let newline = pending.firstIndex(of: 0x0A) {
                lines.append(String(decoding: pending[..<newline], as: UTF8.self))
                pending.removeSubrange(...newline)
            }
            return lines
        }

        /// A line of the process's `/proc/<pid>/status` (`VmHWM`, `VmRSS`) in KiB.
        func memoryKiB(_ field: String) -> Int {
            let status =
                (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }

        /// The CPU time the process has used (user and system), in clock ticks.
        func cpuTicks() -> Int {
            let stat = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8)) ?? ""
            // The fields after the command's closing parenthesis; utime and stime are 14 and 15.
            let fields = stat[(stat.lastIndex(of: ")") ?? stat.startIndex)...].split(separator: " ")
            return (Int(fields.dropFirst(12).first ?? "") ?? 0) + (Int(fields.dropFirst(13).first ?? "") ?? 0)
        }

        /// Reads the shell's output from now on, on a thread of its own, so that a flood of
        /// report lines never fills the pipe; returns how many lines begin with each prefix.
        func drainOutput() -> Monitor<[String]> {
            let lines = Monitor<[String]>([])
            let output = self.output
            Thread {
                var pending = [UInt8]()
                while let line = try? Self.readLine(output, &pending) {
                    if !line.hasPrefix(#"{"network":"http","status":404"#) { lines.withLock { $0.append(line) } }
                }
            }.start()
            return lines
        }

        static func readLine(_ pipe: Pipe, _ pending: inout [UInt8]) throws -> String {
            while true {
                if let newline = pending.firstIndex(of: 0x0A) {
                    defer { pending.removeSubrange(...newline) }
                    return String(decoding: pending[..<newline], as: UTF8.self)
                }
                let data = pipe.fileHandleForReading.availableData
                guard !data.isEmpty else { throw EndOfOutput() }
                pending += data
            }
        }

        struct EndOfOutput: Error {}

        /// Runs curl with `arguments`; its output (headers and body, with -i).
        func curl(_ arguments: [String]) throws -> String { try Self.curl(["-i"] + arguments) }

        /// Runs `curl -s` with `arguments`; its output.
        static func curl(_ arguments: [String]) throws -> String {
            let curl = Process()
            curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            curl.arguments = ["curl", "-s"] + arguments
            let pipe = Pipe()
            curl.standardOutput = pipe
            try curl.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            curl.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }

        func stop() -> Int32 {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
            try? FileManager.default.removeItem(atPath: directory)
            return process.terminationStatus
        }

        /// A shell a test did not stop (it failed, or needed no status) is stopped here,
        /// and its CA's keys removed with its directory.
        deinit {
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    /// A well-formed provider token, unsigned: no key is registered, so its signature
    /// is not checked (everything else is).
    static let providerToken = ProviderTokenSigner().authorization(
        issuedAt: Date().timeIntervalSince1970, signed: false)

    /// An iOS device with the app running, registered and subscribed; its token.
    func iosDevice(_ shell: Shell, environment: String = "production") throws -> String {
        _ = try shell.send(#"{"op":"device","platform":"ios","apns_environment":"\#(environment)"}"#)
        _ = try shell.send(#"{"op":"launch"}"#)
        let reply = try #require(try shell.send(#"{"op":"call","plugin":"push","method":"register","input":""}"#).last)
        let output = try #require(try JSON.parse(text: reply)["output"]?.stringValue)
        _ = try shell.send(#"{"op":"subscribe","key":"push","plugin":"push","stream":"events","input":""}"#)
        return try #require(try JSON.parse(text: output)["token"]?.stringValue)
    }

    @Test func anAPNsPushOverTLSReachesTheCoreBeforeItsAnswer() throws {
        let shell = try Shell()
        let token = try iosDevice(shell)
        let answer = try shell.curl([
            "--http2", "--cacert", shell.ca, "--resolve", "api.push.apple.com:\(shell.port):127.0.0.1",
            "-H", "apns-topic: com.example.app", "-H", "apns-id: 11111111-2222-3333-4444-555555555555",
            "-H", "authorization: \(Self.providerToken)",
            "-d", #"{"aps":{"alert":"over h2"},"n":1.50}"#,
            "https://api.push.apple.com:\(shell.port)/3/device/\(token)",
        ])
        #expect(answer.hasPrefix("HTTP/2 200"), "\(answer)")
        #expect(answer.lowercased().contains("apns-id: 11111111-2222-3333-4444-555555555555"))
        // Written before the answer was sent: there without waiting.
        let lines = shell.linesWritten()
        #expect(
            lines == [
                #"{"delivery":"push","device":"d1","ok":true,"output":"{\"n\":1.50,\"body\":\"over h2\",\"mobiler_push\":\"received\"}"}"#,
                #"{"network":"apns","status":200,"device":"d1","apns-id":"11111111-2222-3333-4444-555555555555","effect":"delivered as received (willPresent) to 1 subscriber and shown in the tray as t1; the provider token's signature was not checked (no key is registered with apns_key)","tray_id":"t1"}"#,
            ])
        #expect(shell.stop() == 0)
    }

    /// The door's two threads go by their names, `door` and `door-world`, where tools that
    /// list a process's threads read them (top -H, /proc, cxbench's busy figures).
    @Test func theDoorsThreadsAreNamed() throws {
        let shell = try Shell()
        func names() -> [String] {
            let task = "/proc/\(shell.process.processIdentifier)/task"
            return ((try? FileManager.default.contentsOfDirectory(atPath: task)) ?? []).compactMap { thread in
                (try? String(contentsOfFile: "\(task)/\(thread)/comm", encoding: .utf8))?
                    .trimmingCharacters(in: .newlines)
            }
        }
        // The door's thread names itself as it starts, which may be after the shell says it listens.
        for _ in 0..<1_000 where !names().contains("door") { usleep(1_000) }
        #expect(names().filter { $0.hasPrefix("door") }.sorted() == ["door", "door-world"], "\(names())")
        #expect(shell.stop() == 0)
    }

    /// What the door sends through TLS in one turn is sealed together: sixteen answers,
    /// each a HEADERS and a DATA frame, arrive in at most sixteen records (sealed a frame
    /// at a time they were thirty-two or more, a record's header, tag and encryption each).
    @Test func answersThroughTLSAreSealedTogetherNotAFrameARecord() throws {
        let shell = try Shell()
        let client = try #require(HTTP2TestClient(port: shell.port, ca: shell.ca))
        let path = "/3/device/" + String(repeating: "ab", count: 32)
        // The handshake, the session tickets and the settings come before the first answer.
        let first = client.request("POST", "api.push.apple.com", path, body: 8)
        client.pump { client.statuses[first] != nil }
        let before = client.recordsReceived
        let streams = (0..<16).map { _ in client.request("POST", "api.push.apple.com", path, body: 8) }
        client.pump { streams.allSatisfy { client.statuses[$0] != nil } }
        #expect(streams.allSatisfy { client.statuses[$0] == "400" && client.bodyBytes[$0, default: 0] > 0 })
        let records = client.recordsReceived - before
        #expect(records >= 1 && records <= streams.count, "\(records) records for \(streams.count) answers")
        #expect(shell.stop() == 0)
    }

    /// HTTP/1.1 through TLS too: a streamed answer's chunks are sealed together in the turn
    /// that sends them, so the log's stream arrives in no more records than chunks.
    @Test func http11ChunksThroughTLSAreSealedTogetherNotAPieceARecord() throws {
        let shell = try Shell()
        let tls = try #require(TLSTestClient(ca: shell.ca, serverName: "localhost", alpn: "http/1.1"))
        let reader = try #require(StreamReader(port: shell.port, open: { tls.open($0) }))
        func write(_ bytes: [UInt8]) -> Bool {
            bytes.isEmpty || bytes.withUnsafeBytes { send(reader.socket, $0.baseAddress, $0.count, 0) } == bytes.count
        }
        while !tls.connected {
            guard write(tls.seal()), !tls.connected, reader.read(until: { tls.connected }) else { break }
        }
        #expect(tls.connected)
        let request = Array("GET /api/v1/stream HTTP/1.1\r\nHost: localhost:\(shell.port)\r\n\r\n".utf8)
        #expect(request.withUnsafeBufferPointer { write(tls.seal($0)) })
        func chunks() -> (count: Int, text: String) {
            let read = Self.chunks(reader.received)
            return (read.sizeLines.count, read.text)
        }
        // The head and the stream's first comment come first, with the session tickets.
        #expect(reader.read { chunks().count >= 1 }, "\(String(decoding: reader.received, as: UTF8.self))")
        let (before, chunksBefore) = (tls.recordsReceived, chunks().count)
        for number in 0..<16 {
            _ = try shell.send(#"{"op":"state","n":\#(number)}"#)
            // One at a time, so that the entries come in several chunks.
            #expect(reader.read { chunks().text.components(separatedBy: "event: log").count > number + 1 })
        }
        let (records, sent) = (tls.recordsReceived - before, chunks().count - chunksBefore)
        #expect(sent >= 1 && records <= sent, "\(records) records for \(sent) chunks")
        #expect(shell.stop() == 0)
    }

    /// An HTTP/1.1 answer's chunks whole after its head: their size lines as sent, and
    /// their text.
    static func chunks(_ received: [UInt8]) -> (sizeLines: [String], text: String) {
        let crlf: [UInt8] = [0x0D, 0x0A]
        guard let head = received.firstRange(of: crlf + crlf) else { return ([], "") }
        var (at, lines, text) = (head.upperBound, [String](), [UInt8]())
        while let line = received[at...].firstRange(of: crlf),
            let size = Int(String(decoding: received[at..<line.lowerBound], as: UTF8.self), radix: 16),
            line.upperBound + size + 2 <= received.count
        {
            lines.append(String(decoding: received[at..<line.lowerBound], as: UTF8.self))
            text += received[line.upperBound..<line.upperBound + size]
            at = line.upperBound + size + 2
        }
        return (lines, String(decoding: text, as: UTF8.self))
    }

    /// In clear text, a stream's pieces are framed where the renderer wrote them: the size
    /// line fills the room left before the bytes (eight hex digits, leading zeros), and the
    /// events read back whole, in order.
    @Test func http11StreamChunksAreFramedInTheRoomLeftBeforeThem() throws {
        let shell = try Shell()
        let reader = try #require(StreamReader(port: shell.port))
        Self.write(
            Array("GET /api/v1/stream HTTP/1.1\r\nHost: localhost:\(shell.port)\r\n\r\n".utf8), to: reader.socket)
        #expect(
            reader.read { !Self.chunks(reader.received).sizeLines.isEmpty },
            "\(String(decoding: reader.received, as: UTF8.self))")
        for number in 0..<3 {
            _ = try shell.send(#"{"op":"state","n":\#(number)}"#)
            #expect(
                reader.read {
                    Self.chunks(reader.received).text.components(separatedBy: "event: log").count > number + 1
                })
        }
        let (lines, text) = Self.chunks(reader.received)
        #expect(text.hasPrefix(": cxshell log stream\n\n"), "\(text.prefix(80))")
        #expect(text.components(separatedBy: "event: log\nid: ").count == 4, "\(text)")
        #expect(
            lines.allSatisfy { $0.count == StreamBytes.framingRoom - 2 && $0.allSatisfy(\.isHexDigit) }, "\(lines)")
        #expect(shell.stop() == 0)
    }

    /// An answer longer than a record (a page of 1,000 devices) comes through TLS whole and
    /// in order, as in clear text: frames of a record's size go sealed on their own, after
    /// what was held before them.
    @Test func anAnswerLongerThanARecordComesThroughTLSWhole() throws {
        let shell = try Shell()
        let made = try Shell.curl([
            "--http2-prior-knowledge", "-H", "content-type: application/json", "-d",
            #"{"platform":"android","count":1000,"ready":true}"#, "http://127.0.0.1:\(shell.port)/api/v1/devices",
        ])
        #expect(made.contains(#""d1000""#), "\(made.prefix(200))")
        let page = "127.0.0.1:\(shell.port)/api/v1/devices?limit=1000"
        let clear = try Shell.curl(["--http2-prior-knowledge", "http://" + page])
        let sealed = try Shell.curl(["--http2", "--cacert", shell.ca, "https://" + page])
        #expect(clear.utf8.count > 64 * 1024, "\(clear.prefix(200))")
        #expect(sealed == clear)
        #expect(shell.stop() == 0)
    }

    @Test func refusalsAreApplesAndTheHostNamesTheEnvironment() throws {
        let shell = try Shell()
        let token = try iosDevice(shell, environment: "development")
        func push(_ host: String, _ token: String) throws -> String {
            try shell.curl([
                "--http2", "--cacert", shell.ca, "--resolve", "\(host):\(shell.port):127.0.0.1",
                "-H", "apns-topic: com.example.app", "-H", "authorization: \(Self.providerToken)",
                "-d", #"{"aps":{"alert":"x"}}"#,
                "https://\(host):\(shell.port)/3/device/\(token)",
            ])
        }
        // A development token sent to the production host.
        let production = try push("api.push.apple.com", token)
        #expect(production.hasPrefix("HTTP/2 400") && production.hasSuffix(#"{"reason":"BadDeviceToken"}"#))
        #expect(production.lowercased().contains("content-type: application/json"))
        let development = try push("api.sandbox.push.apple.com", token)
        #expect(development.hasPrefix("HTTP/2 200") && development.lowercased().contains("apns-unique-id: "))
        // A header sent twice.
        let twice = try shell.curl([
            "--http2-prior-knowledge", "-H", "apns-topic: com.example.app", "-H", "apns-topic: com.example.app",
            "-H", "authorization: \(Self.providerToken)",
            "-d", #"{"aps":{}}"#, "http://127.0.0.1:\(shell.port)/3/device/\(token)",
        ])
        #expect(twice.hasPrefix("HTTP/2 400") && twice.hasSuffix(#"{"reason":"DuplicateHeaders"}"#), "\(twice)")
        var reports = shell.linesWritten()
        // A retired token: 410 with its time.
        _ = try shell.send(#"{"op":"uninstall"}"#)
        let retired = try push("api.development.push.apple.com", token)
        #expect(retired.hasPrefix("HTTP/2 410") && retired.contains(#""reason":"Unregistered","timestamp":"#))
        reports += shell.linesWritten()
        // One report line for each request; one delivery, for the one accepted.
        #expect(reports.filter { $0.hasPrefix(#"{"network":"apns""#) }.count == 4, "\(reports)")
        #expect(reports.filter { $0.hasPrefix(#"{"delivery""#) }.count == 1, "\(reports)")
        #expect(shell.stop() == 0)
    }

    /// A backend configured with nothing but a proxy and a CA bundle, as in production.
    @Test func throughTheProxyToTheServiceHostsOnly() throws {
        let shell = try Shell()
        let token = try iosDevice(shell)
        let proxy = "http://127.0.0.1:\(shell.port)"
        let answer = try shell.curl([
            "--proxy", proxy, "--http2", "--cacert", shell.ca, "-H", "apns-topic: com.example.app",
            "-H", "authorization: \(Self.providerToken)",
            "-d", #"{"aps":{"alert":"via the proxy"}}"#, "https://api.push.apple.com/3/device/\(token)",
        ])
        #expect(answer.hasPrefix("HTTP/1.1 200 Connection established"), "\(answer)")
        #expect(answer.contains("HTTP/2 200"))
        #expect(shell.linesWritten().first?.contains(#"\"body\":\"via the proxy\""#) == true)
        let elsewhere = try shell.curl(["--proxy", proxy, "--cacert", shell.ca, "https://example.com/"])
        #expect(elsewhere.hasPrefix("HTTP/1.1 403"))
        #expect(shell.stop() == 0)
    }

    @Test func clearTextHTTP2AndWhatIsNotServed() throws {
        let shell = try Shell()
        let token = try iosDevice(shell)
        let h2c = try shell.curl([
            "--http2-prior-knowledge", "-H", "apns-topic: com.example.app", "-H",
            "authorization: \(Self.providerToken)",
            "-d", #"{"aps":{"alert":"h2c"}}"#,
            "http://127.0.0.1:\(shell.port)/3/device/\(token)",
        ])
        #expect(h2c.hasPrefix("HTTP/2 200"))
        // APNs is HTTP/2 only, in clear text and over TLS (ALPN http/1.1).
        let http1 = try shell.curl(["--http1.1", "-d", "{}", "http://127.0.0.1:\(shell.port)/3/device/\(token)"])
        #expect(http1.hasPrefix("HTTP/1.1 505"))
        let http1TLS = try shell.curl([
            "--http1.1", "--cacert", shell.ca, "--resolve", "api.push.apple.com:\(shell.port):127.0.0.1", "-d", "{}",
            "https://api.push.apple.com:\(shell.port)/3/device/\(token)",
        ])
        #expect(http1TLS.hasPrefix("HTTP/1.1 505"))
        // HTTP/1.1 keeps the connection for the next request.
        let twice = try shell.curl([
            "--http1.1", "-w", "%{http_code} %{num_connects};", "-o", "/dev/null", "http://127.0.0.1:\(shell.port)/a",
            "-o", "/dev/null", "http://127.0.0.1:\(shell.port)/b",
        ])
        #expect(twice.hasSuffix("404 1;404 0;"), "\(twice)")
        let unknown = try shell.curl(["--http2-prior-knowledge", "http://127.0.0.1:\(shell.port)/nothing"])
        #expect(unknown.hasPrefix("HTTP/2 404"))
        // A PubNub path that is not whole is answered 400 with PubNub's error shape.
        let pubnub = try shell.curl(["--http2-prior-knowledge", "http://127.0.0.1:\(shell.port)/v2/push/sub-key/x"])
        #expect(pubnub.hasPrefix("HTTP/2 400"))
        #expect(pubnub.contains(#""error":true,"service":"Push","status":400"#))
        // The line protocol goes on serving.
        #expect(try shell.send(#"{"op":"state"}"#).last?.contains(#""ok":true"#) == true)
        #expect(shell.stop() == 0)
    }

    /// Provider tokens (ES256): missing, malformed, expired, another team's, and once a
    /// key is registered, unknown key ids and bad signatures; a good one is delivered.
    @Test func providerTokensAreCheckedAsAPNsDoes() throws {
        let shell = try Shell()
        let token = try iosDevice(shell)
        let signer = ProviderTokenSigner()
        let now = Date().timeIntervalSince1970
        func push(_ authorization: String?) throws -> String {
            try shell.curl(
                ["--http2-prior-knowledge", "-H", "apns-topic: com.example.app", "-d", #"{"aps":{"alert":"x"}}"#]
                    + (authorization.map { ["-H", "authorization: \($0)"] } ?? [])
                    + ["http://127.0.0.1:\(shell.port)/3/device/\(token)"])
        }
        func reason(_ answer: String) -> String? {
            // Lines end in CRLF, one Character in Swift: the body is what follows the last blank line.
            guard answer.hasPrefix("HTTP/2 403"), let body = answer.range(of: "\r\n\r\n", options: .backwards) else {
                return nil
            }
            return (try? JSON.parse(text: String(answer[body.upperBound...])))?["reason"]?.stringValue
        }
        #expect(reason(try push(nil)) == "MissingProviderToken")
        #expect(reason(try push("bearer not.a.jwt")) == "InvalidProviderToken")
        #expect(reason(try push("basic abc")) == "InvalidProviderToken")
        #expect(reason(try push(signer.authorization(issuedAt: now - 3601))) == "ExpiredProviderToken")
        #expect(reason(try push(signer.authorization(issuedAt: now, team: "OTHERTEAM1"))) == "InvalidProviderToken")
        // Fractional iat, as some clients send, is a number like any other.
        #expect(try push(signer.authorization(issuedAt: now - 0.5, signed: false)).hasPrefix("HTTP/2 200"))
        // With a key registered, signatures count.
        let registered = try shell.send(
            #"{"op":"apns_key","key_id":"ABC123DEFG","team":"TEAM000001","public_key":\#(JSON.string(signer.publicKeyPEM).compactText)}"#
        )
        #expect(registered.last?.contains(#""keys":["ABC123DEFG"]"#) == true, "\(registered)")
        #expect(reason(try push(signer.authorization(issuedAt: now, signed: false))) == "InvalidProviderToken")
        #expect(
            reason(try push(ProviderTokenSigner(keyID: "ZZZ").authorization(issuedAt: now))) == "InvalidProviderToken")
        #expect(reason(try push(ProviderTokenSigner().authorization(issuedAt: now))) == "InvalidProviderToken")
        #expect(try push(signer.authorization(issuedAt: now)).hasPrefix("HTTP/2 200"))
        // iat as a string of seconds, as kalyke (a Python APNs client) sends it, is read as
        // its number; a string that is not one is refused.
        #expect(try push(signer.authorization(issuedAt: now, iatJSON: "\"\(Int(now))\"")).hasPrefix("HTTP/2 200"))
        #expect(reason(try push(signer.authorization(issuedAt: now, iatJSON: #""now""#))) == "InvalidProviderToken")
        #expect(
            reason(try push(signer.authorization(issuedAt: now, iatJSON: "\"\(Int(now) - 3601)\"")))
                == "ExpiredProviderToken")
        let reports = shell.linesWritten().filter { $0.hasPrefix(#"{"network""#) }
        #expect(reports.last?.contains("not checked") == false)
        // A key that is not an EC P-256 public key is refused by name.
        let bad = try shell.send(#"{"op":"apns_key","key_id":"K","team":"T","public_key":"nope"}"#)
        #expect(bad.last?.contains("must be an EC P-256 public key") == true)
        #expect(shell.stop() == 0)
    }

    /// A service account's way in: an RS256 assertion for an access token, then FCM v1
    /// with it, over HTTP/1.1 and HTTP/2, through TLS with the shell's CA.
    @Test func fcmWithAnAccessTokenFromTheOAuthEndpoint() throws {
        let shell = try Shell()
        _ = try shell.send(#"{"op":"device","platform":"android","fcm_project":"demo"}"#)
        _ = try shell.send(#"{"op":"launch"}"#)
        let reply = try #require(try shell.send(#"{"op":"call","plugin":"push","method":"register","input":""}"#).last)
        let output = try #require(try JSON.parse(text: reply)["output"]?.stringValue)
        let token = try #require(try JSON.parse(text: output)["token"]?.stringValue)
        _ = try shell.send(#"{"op":"subscribe","key":"push","plugin":"push","stream":"events","input":""}"#)
        let account = ServiceAccountSigner()
        let now = Date().timeIntervalSince1970
        let tls = [
            "--cacert", shell.ca, "--resolve", "oauth2.googleapis.com:\(shell.port):127.0.0.1",
            "--resolve", "fcm.googleapis.com:\(shell.port):127.0.0.1",
        ]
        func tokenAnswer(_ form: String) throws -> String {
            try shell.curl(tls + ["--http1.1", "-d", form, "https://oauth2.googleapis.com:\(shell.port)/token"])
        }
        func body(_ answer: String) -> JSON? {
            guard let blank = answer.range(of: "\r\n\r\n", options: .backwards) else { return nil }
            return try? JSON.parse(text: String(answer[blank.upperBound...]))
        }
        // Bad grants: another grant type, a lifetime over an hour, an expired assertion.
        #expect(body(try tokenAnswer("grant_type=password"))?["error"] == "unsupported_grant_type")
        #expect(body(try tokenAnswer(account.tokenRequest(issuedAt: now, lifetime: 3601)))?["error"] == "invalid_grant")
        #expect(body(try tokenAnswer(account.tokenRequest(issuedAt: now - 7200)))?["error"] == "invalid_grant")
        // With the account's key registered, only its own signature passes.
        let registered = try shell.send(
            #"{"op":"google_key","client_email":"\#(account.email)","public_key":\#(JSON.string(account.publicKeyPEM).compactText)}"#
        )
        #expect(registered.last?.contains(account.email) == true)
        #expect(body(try tokenAnswer(account.tokenRequest(issuedAt: now, signed: false)))?["error"] == "invalid_grant")
        let granted = try tokenAnswer(account.tokenRequest(issuedAt: now))
        #expect(granted.hasPrefix("HTTP/1.1 200"), "\(granted)")
        #expect(body(granted)?["expires_in"] == 3599 && body(granted)?["token_type"] == "Bearer")
        let accessToken = try #require(body(granted)?["access_token"]?.stringValue)
        func send(_ bearer: String?, project: String = "demo", http2: Bool = true) throws -> String {
            try shell.curl(
                tls + [http2 ? "--http2" : "--http1.1", "-H", "content-type: application/json"]
                    + (bearer.map { ["-H", "authorization: Bearer \($0)"] } ?? [])
                    + [
                        "-d", #"{"message":{"token":"\#(token)","data":{"n":"1"}}}"#,
                        "https://fcm.googleapis.com:\(shell.port)/v1/projects/\(project)/messages:send",
                    ])
        }
        let unauthenticated = try send(nil)
        #expect(
            unauthenticated.hasPrefix("HTTP/2 401") && body(unauthenticated)?["error"]?["status"] == "UNAUTHENTICATED")
        _ = shell.linesWritten()
        let sent = try send(accessToken)
        #expect(sent.hasPrefix("HTTP/2 200"))
        #expect(body(sent)?["name"]?.stringValue?.hasPrefix("projects/demo/messages/0:") == true)
        let lines = shell.linesWritten()
        #expect(
            lines.first
                == #"{"delivery":"push","device":"d1","ok":true,"output":"{\"n\":\"1\",\"mobiler_push\":\"received\"}"}"#
        )
        #expect(lines.last?.hasPrefix(#"{"network":"fcm","status":200,"device":"d1""#) == true)
        // The token belongs to the account's project (demo): another project's send is
        // refused before the message is read, and nothing is delivered.
        let mismatch = try send(accessToken, project: "other", http2: false)
        #expect(mismatch.hasPrefix("HTTP/1.1 403"))
        #expect(body(mismatch)?["error"]?["status"] == "PERMISSION_DENIED")
        #expect(!shell.linesWritten().contains { $0.hasPrefix(#"{"delivery""#) })
        #expect(shell.stop() == 0)
    }

    /// One connection, up to 1,000 concurrent streams, as h2load drives it: every push
    /// answered 200, and every one reported.
    @Test func aThousandConcurrentStreamsOnOneConnection() throws {
        let shell = try Shell()
        let token = try iosDevice(shell)
        // The shell's output (a report line per push) is read as it comes, so that the
        // pipe never fills while h2load waits for answers.
        let reports = Monitor(0)
        let output = shell.output
        let reader = Thread {
            var pending = [UInt8]()
            while let line = try? Shell.readLine(output, &pending) {
                if line.hasPrefix(#"{"network":"apns","status":200"#) { reports.withLock { $0 += 1 } }
            }
        }
        reader.start()
        let body = NSTemporaryDirectory() + "cxshell-h2load-\(UUID().uuidString).json"
        try Data(#"{"aps":{"alert":"load"}}"#.utf8).write(to: URL(fileURLWithPath: body))
        defer { try? FileManager.default.removeItem(atPath: body) }
        let h2load = Process()
        h2load.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        h2load.arguments = [
            "h2load", "-n", "3000", "-c", "1", "-m", "1000", "-d", body, "-H", "apns-topic: com.example.app",
            "-H", "authorization: \(Self.providerToken)", "http://127.0.0.1:\(shell.port)/3/device/\(token)",
        ]
        let pipe = Pipe()
        h2load.standardOutput = pipe
        try h2load.run()
        let summary = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        h2load.waitUntilExit()
        #expect(summary.contains("status codes: 3000 2xx, 0 3xx, 0 4xx, 0 5xx"), "\(summary)")
        #expect(summary.contains("3000 succeeded, 0 failed, 0 errored"))
        #expect(shell.stop() == 0)
        while !reader.isFinished { sched_yield() }
        #expect(reports.withLock { $0 } == 3000)
    }

    /// Sends raw bytes on a new connection (closing its write side after them) and
    /// returns what came back before the shell closed it.
    static func raw(_ bytes: [UInt8], port: Int) -> String {
        guard let socket = connection(port: port) else { return "(no connection)" }
        defer { close(socket) }
        write(bytes, to: socket)
        shutdown(socket, Int32(SHUT_WR))
        var answer = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(socket, &chunk, chunk.count, 0)
            if count <= 0 { break }
            answer += chunk[..<count]
        }
        return String(decoding: answer, as: UTF8.self)
    }

    /// A TCP connection to the shell's port, or nil.
    static func connection(port: Int) -> Int32? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard socket >= 0, connected == 0 else {
            if socket >= 0 { close(socket) }
            return nil
        }
        return socket
    }

    static func write(_ bytes: [UInt8], to socket: Int32) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count <= 0 { break }
            sent += count
        }
    }

    /// One HTTP/1.1 answer's head on a kept-alive connection (a 401 has a short body
    /// that this reads too, up to the bytes it says).
    static func answer(on socket: Int32) -> String {
        var bytes = [UInt8]()
        var byte: UInt8 = 0
        while bytes.suffix(4) != [13, 10, 13, 10], recv(socket, &byte, 1, 0) == 1 { bytes.append(byte) }
        let head = String(decoding: bytes, as: UTF8.self)
        let length =
            head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
        var body = [UInt8](repeating: 0, count: length)
        var read = 0
        while read < length {
            let count = body[read...].withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            read += count
        }
        return head
    }

    /// Malformed and hostile input gets an answer (or a closed connection), never
    /// takes the shell down, and leaves it serving the next client.
    @Test func malformedInputIsAnsweredAndServingGoesOn() throws {
        let shell = try Shell()
        let token = try iosDevice(shell)
        let cases: [(String, [UInt8], String)] = [
            // Not the preface, so HTTP/1.1, where it is no request.
            ("a bad HTTP/2 preface", Array("PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n".utf8), "HTTP/1.1 400"),
            // A TLS server has nothing to say to half a record: the connection closes silent.
            ("a truncated TLS record", [0x16, 0x03, 0x01, 0x02, 0x00, 0x01], ""),
            (
                "a request target over 40 KiB, in many pieces",
                Array(("GET /" + String(repeating: "a", count: 100_000) + " HTTP/1.1\r\nHost: x\r\n\r\n").utf8),
                "HTTP/1.1 414"
            ),
            (
                "white space before a header's colon (RFC 9112)",
                Array(
                    "POST /v1/projects/demo/messages:send HTTP/1.1\r\nHost: fcm.googleapis.com\r\ncontent-length : 2\r\n\r\n{}"
                        .utf8), "HTTP/1.1 400"
            ),
            ("garbage", Array("\u{01}\u{02}\u{03} hello\r\n\r\n".utf8), "HTTP/1.1 400"),
            (
                "a header block over 64 KiB",
                Array(
                    ("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "a", count: 70_000) + "\r\n\r\n").utf8),
                "HTTP/1.1 431"
            ),
            (
                "a body over 1 MiB",
                Array("POST /token HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n".utf8)
                    + [UInt8](repeating: 0x61, count: 1_100_000), "HTTP/1.1 413"
            ),
            ("a CONNECT without a port", Array("CONNECT api.push.apple.com HTTP/1.1\r\n\r\n".utf8), "HTTP/1.1 400"),
            ("a CONNECT elsewhere", Array("CONNECT example.com:443 HTTP/1.1\r\n\r\n".utf8), "HTTP/1.1 403"),
            // An h2c upgrade is answered as HTTP/1.1 (a server may ignore Upgrade).
            (
                "an h2c upgrade",
                Array(
                    "GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n"
                        .utf8), "HTTP/1.1 404"
            ),
        ]
        for (name, bytes, expected) in cases {
            let answer = Self.raw(bytes, port: shell.port)
            // An empty expectation is exact: nothing at all came back.
            #expect(expected.isEmpty ? answer.isEmpty : answer.hasPrefix(expected), "\(name): \(answer.prefix(80))")
            let after = try shell.curl([
                "--http2-prior-knowledge", "-H", "apns-topic: com.example.app", "-H",
                "authorization: \(Self.providerToken)",
                "-d", #"{"aps":{"alert":"still here"}}"#, "http://127.0.0.1:\(shell.port)/3/device/\(token)",
            ])
            #expect(after.hasPrefix("HTTP/2 200"), "after \(name): \(after.prefix(80))")
        }
        // Nothing was delivered for any refused input: one report per curl push only.
        let reports = shell.linesWritten().filter { $0.hasPrefix(#"{"network":"apns","status":200"#) }
        #expect(reports.count == cases.count)
        #expect(shell.stop() == 0)
    }

    /// SNI names the service; a request whose authority names another is misdirected
    /// (421). Over HTTP/2, a header block over 64 KiB is 431 and a body over 1 MiB is 413,
    /// answered as soon as it is known. None of them delivers anything.
    @Test func misdirectedAndOversizedHTTP2RequestsAreRefused() throws {
        let shell = try Shell()
        let token = try iosDevice(shell)
        let apns = ["-H", "apns-topic: com.example.app", "-H", "authorization: \(Self.providerToken)"]
        let misdirected = try shell.curl(
            [
                "--http2", "--cacert", shell.ca, "--resolve", "fcm.googleapis.com:\(shell.port):127.0.0.1",
                "-H", "host: api.push.apple.com", "-d", #"{"aps":{"alert":"x"}}"#,
            ] + apns + ["https://fcm.googleapis.com:\(shell.port)/3/device/\(token)"])
        #expect(misdirected.hasPrefix("HTTP/2 421"), "\(misdirected.prefix(200))")
        let report = shell.linesWritten()
        #expect(report.count == 1 && report[0].contains(#""status":421"#), "\(report)")
        // 1,000 small headers: over 64 KiB by RFC 9113's count (32 bytes more each), under
        // the bound nghttp2 (in curl) puts on a header block it will send.
        let large = (0..<1_000).flatMap { ["-H", "x-\($0): " + String(repeating: "a", count: 30)] }
        let headers = try shell.curl(
            ["--http2-prior-knowledge", "-d", #"{"aps":{"alert":"x"}}"#] + apns + large
                + ["http://127.0.0.1:\(shell.port)/3/device/\(token)"])
        #expect(headers.hasPrefix("HTTP/2 431"), "\(headers.prefix(200))")
        let body = NSTemporaryDirectory() + "cxshell-large-body-\(UUID().uuidString)"
        try Data(repeating: 0x61, count: 2_000_000).write(to: URL(fileURLWithPath: body))
        defer { try? FileManager.default.removeItem(atPath: body) }
        let large413 = try shell.curl(
            ["--http2-prior-knowledge", "--data-binary", "@" + body] + apns
                + ["http://127.0.0.1:\(shell.port)/3/device/\(token)"])
        #expect(large413.hasPrefix("HTTP/2 413"), "\(large413.prefix(200))")
        #expect(try shell.send(#"{"op":"state"}"#).allSatisfy { !$0.hasPrefix(#"{"delivery""#) })
        #expect(shell.stop() == 0)
    }

    /// A service people run: SIGTERM (or SIGINT) ends it with status 0, connections and all.
    /// A port that cannot be had, or an address that is not one, ends `serve` with a
    /// sentence that names it and a failure status, and no `listening` line.
    @Test func aPortThatCannotBeHadIsNamed() throws {
        let taken = try Shell()
        for (listen, named) in [
            ("127.0.0.1:\(taken.port)", "cannot listen on 127.0.0.1:\(taken.port): Address already in use"),
            ("example.org:0", "'example.org' is not an IPv4 or IPv6 address"),
            ("127.0.0.1", "--listen takes ADDRESS:PORT (a port from 0 to 65535), not '127.0.0.1'"),
        ] {
            let process = Process()
            let output = Pipe()
            let errors = Pipe()
            process.executableURL = ServeProcessTests.executable
            process.arguments = ["serve", "--listen", listen, "--ca-dir", taken.directory + "/ca"]
            process.standardInput = Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            process.waitUntilExit()
            let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(process.terminationStatus != 0, "\(listen)")
            #expect(output.fileHandleForReading.readDataToEndOfFile().isEmpty, "\(listen)")
            #expect(said.contains(named), "\(listen): \(said)")
        }
    }

    /// At most 1,024 connections at once: the next client waits in the listen queue,
    /// unanswered, and is served as soon as one of them closes. The interleaving is forced
    /// by round trips, not by waiting: the loop reads every ready connection each turn, so
    /// three round trips on another connection give an accepted client time to be answered.
    @Test func theConnectionBoundMakesTheNextClientWait() throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = min(limit.rlim_max, 4096)
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        try #require(limit.rlim_cur >= 2200, "needs 2,200 descriptors; the hard limit is \(limit.rlim_max)")
        // The test process needs 2,200 descriptors for its own clients; the shell starts
        // with the common default of 1,024, so it must raise its own limit to take 1,024.
        let shell = try Shell(ulimit: "-Sn 1024")
        let request = Array(
            "POST /v1/projects/demo/messages:send HTTP/1.1\r\nHost: fcm.googleapis.com\r\nContent-Length: 2\r\n\r\n{}"
                .utf8)
        var held: [Int32] = []
        defer { for socket in held { close(socket) } }
        // A round trip every 64 connections: each one served means it and those before it
        // were accepted, and keeps the listen queue short (an overflowing queue drops SYNs,
        // which clients retry only after a second).
        for index in 0..<1024 {
            held.append(try #require(Self.connection(port: shell.port)))
            if index % 64 == 63 {
                Self.write(request, to: held[index])
                #expect(Self.answer(on: held[index]).hasPrefix("HTTP/1.1 401"))
            }
        }
        let waiting = try #require(Self.connection(port: shell.port))
        defer { close(waiting) }
        Self.write(request, to: waiting)
        for _ in 0..<3 {
            Self.write(request, to: held[0])
            #expect(Self.answer(on: held[0]).hasPrefix("HTTP/1.1 401"))
        }
        var byte: UInt8 = 0
        #expect(recv(waiting, &byte, 1, Int32(MSG_DONTWAIT)) == -1 && errno == EAGAIN, "answered past the bound")
        close(held.removeLast())
        #expect(Self.answer(on: waiting).hasPrefix("HTTP/1.1 401"))
    }

    @Test func aSignalEndsTheServiceCleanly() throws {
        for signal in [SIGTERM, SIGINT] {
            let shell = try Shell()
            _ = try iosDevice(shell)
            kill(shell.process.processIdentifier, signal)
            shell.process.waitUntilExit()
            #expect(shell.process.terminationReason == .exit && shell.process.terminationStatus == 0)
        }
    }
}

/// A test's end of an HTTP/1.1 connection to the shell that reads a streamed answer: what
/// has arrived (each read passed through `open`, for TLS), read until a condition holds of
/// it. A read stalled for 10 s fails the condition rather than hang the test.
final class StreamReader {
    let socket: Int32
    private let open: (UnsafeBufferPointer<UInt8>) -> [UInt8]
    private(set) var received: [UInt8] = []

    init?(port: Int, open: @escaping (UnsafeBufferPointer<UInt8>) -> [UInt8] = { Array($0) }) {
        guard let socket = FrontDoorTests.connection(port: port) else { return nil }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        self.socket = socket
        self.open = open
    }

    /// Reads until `done` holds of all that came (false: the connection ended or stalled).
    func read(until done: () -> Bool) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while !done() {
            let count = recv(socket, &chunk, chunk.count, 0)
            guard count > 0 else { return false }
            received += chunk[..<count].withUnsafeBufferPointer(open)
        }
        return true
    }

    deinit { close(socket) }
}
