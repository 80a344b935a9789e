import Foundation
import OrderedJSON
import Testing

/// XMTP's `http` channel through a real `cxshell serve --listen` (XM-2 … XM-6): the
/// backend is curl, and every signature is made by `openssl dgst -mac HMAC`,
/// independently of the code under test.
@Suite(.serialized) struct WebhookChannelTests {
    typealias Shell = FrontDoorTests.Shell

    /// 32 key bytes, and the same in standard base64 (the channel's `signing_key`).
    static let keyHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
    static let keyBase64 = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
    /// A group topic (0x00 + 16 bytes) and a welcome topic (0x01 + 32 bytes), base64.
    static let groupTopic = Data([0] + [UInt8](repeating: 7, count: 16)).base64EncodedString()
    static let welcomeTopic = Data([1] + [UInt8](repeating: 9, count: 32)).base64EncodedString()

    /// `v1,<base64 of HMAC-SHA256>` computed by the openssl command.
    static func opensslSignature(id: String, timestamp: String, body: String, keyHex: String = keyHex) throws -> String
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl", "dgst", "-sha256", "-mac", "HMAC", "-macopt", "hexkey:\(keyHex)", "-binary"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data("\(id).\(timestamp).\(body)".utf8))
        try input.fileHandleForWriting.close()
        let digest = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return "v1," + digest.base64EncodedString()
    }

    /// A running app registered on the http channel; its webhook URL.
    func registeredApp(_ shell: Shell, launch: Bool = true) throws -> String {
        _ = try shell.send(#"{"op":"device","platform":"android"}"#)
        _ = try shell.send(#"{"op":"launch"}"#)
        _ = try shell.send(#"{"op":"subscribe","key":"push","plugin":"push","stream":"events"}"#)
        let input = #"{\"channel\":\"http\",\"signing_key\":\"\#(Self.keyBase64)\"}"#
        let reply = try JSON.parse(
            text: try #require(
                try shell.send(#"{"op":"call","plugin":"push","method":"register","input":"\#(input)"}"#).last))
        #expect(reply["ok"] == true, "\(reply)")
        let output = try JSON.parse(text: try #require(reply["output"]?.stringValue))
        #expect(output["platform"] == "http")
        return try #require(output["token"]?.stringValue)
    }

    /// Posts `body` to the webhook URL over clear HTTP/1.1 with the given headers;
    /// the status code.
    func post(_ shell: Shell, _ url: String, body: String, headers: [String: String]) throws -> Int {
        let start = try #require(url.range(of: "/webhooks/")).lowerBound
        let path = String(url[start...])
        var arguments = ["-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "--data-binary", body]
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { arguments += ["-H", "\(name): \(value)"] }
        let answer = try shell.curl(arguments + ["http://127.0.0.1:\(shell.port)\(path)"])
        return Int(answer.suffix(3)) ?? 0
    }

    func signedHeaders(id: String, body: String, at time: Int = Int(Date().timeIntervalSince1970)) throws -> [String:
        String]
    {
        let timestamp = String(time)
        return [
            "webhook-id": id, "webhook-timestamp": timestamp,
            "webhook-signature": try Self.opensslSignature(id: id, timestamp: timestamp, body: body),
        ]
    }

    static func hint(_ recipient: String, topic: String = groupTopic, sequence: String = "18446744073709551615")
        -> String
    {
        #"{"topic":"\#(topic)","sequence_id":"\#(sequence)","recipient_id":"\#(recipient)"}"#
    }

    @Test func XM2_theURLNamesTheFrontDoorAndAFixedRecipient() throws {
        let shell = try Shell()
        let url = try registeredApp(shell)
        let recipient = String(url.split(separator: "/").last ?? "")
        #expect(url == "https://127.0.0.1:\(shell.port)/webhooks/\(recipient)")
        #expect(recipient.count == 32 && recipient.allSatisfy(\.isHexDigit))
        // The same install keeps its recipient across kill and launch.
        _ = try shell.send(#"{"op":"kill"}"#)
        _ = try shell.send(#"{"op":"launch"}"#)
        let input = #"{\"channel\":\"http\",\"signing_key\":\"whsec_\#(Self.keyBase64)\"}"#
        let again = try JSON.parse(
            text: try #require(
                try shell.send(#"{"op":"call","plugin":"push","method":"register","input":"\#(input)"}"#).last))
        #expect(again["output"]?.stringValue?.contains(recipient) == true, "\(again)")
        // A key that is too short is refused with a sentence.
        let short = #"{\"channel\":\"http\",\"signing_key\":\"AAEC\"}"#
        let refused = try JSON.parse(
            text: try #require(
                try shell.send(#"{"op":"call","plugin":"push","method":"register","input":"\#(short)"}"#).last))
        #expect(refused["ok"] == false)
        #expect(refused["output"]?.stringValue?.contains("16 to 64 bytes") == true, "\(refused)")
        #expect(shell.stop() == 0)
    }

    @Test func XM3_XM6_aSignedHintIsDeliveredAndAnythingElseIs401() throws {
        let shell = try Shell()
        let url = try registeredApp(shell)
        let recipient = String(url.split(separator: "/").last ?? "")
        let body = Self.hint(recipient)
        // Several signatures in one header: one matching v1 entry suffices.
        var headers = try signedHeaders(id: "msg_1", body: body)
        headers["webhook-signature"] = "v1,AAAA v1a,xyz " + headers["webhook-signature"]!
        #expect(try post(shell, url, body: body, headers: headers) == 204)
        let lines = shell.linesWritten()
        #expect(
            lines.first
                == #"{"delivery":"push","device":"d1","ok":true,"output":"{\"topic\":\"\#(Self.groupTopic)\",\"sequence_id\":\"18446744073709551615\",\"recipient_id\":\"\#(recipient)\",\"mobiler_push\":\"received\"}"}"#
        )
        #expect(lines.last?.contains(#""status":204"#) == true)

        // One changed body byte, a wrong key, a missing header, a stale timestamp: 401.
        let tampered = body.replacingOccurrences(of: "18446744073709551615", with: "18446744073709551614")
        #expect(try post(shell, url, body: tampered, headers: try signedHeaders(id: "msg_2", body: body)) == 401)
        var wrongKey = try signedHeaders(id: "msg_3", body: body)
        wrongKey["webhook-signature"] = try Self.opensslSignature(
            id: "msg_3", timestamp: wrongKey["webhook-timestamp"]!, body: body, keyHex: String(Self.keyHex.reversed()))
        #expect(try post(shell, url, body: body, headers: wrongKey) == 401)
        var missing = try signedHeaders(id: "msg_4", body: body)
        missing["webhook-timestamp"] = nil
        #expect(try post(shell, url, body: body, headers: missing) == 401)
        let now = Int(Date().timeIntervalSince1970)
        #expect(
            try post(shell, url, body: body, headers: try signedHeaders(id: "msg_5", body: body, at: now - 330)) == 401)
        #expect(
            try post(shell, url, body: body, headers: try signedHeaders(id: "msg_6", body: body, at: now + 330)) == 401)
        #expect(
            try post(shell, url, body: body, headers: try signedHeaders(id: "msg_7", body: body, at: now - 270)) == 204)
        // A forged body that is not even JSON is refused for its signature, unparsed.
        let forged = shell.linesWritten()
        #expect(
            try post(
                shell, url, body: "{{{",
                headers: ["webhook-id": "x", "webhook-timestamp": "\(now)", "webhook-signature": "v1,AAAA"]) == 401)
        #expect(forged.filter { $0.hasPrefix(#"{"delivery""#) }.count == 1)
        #expect(shell.linesWritten().last?.contains("no v1 signature") == true)
        #expect(shell.stop() == 0)
    }

    @Test func XM4_aReplayedIDIs409() throws {
        let shell = try Shell()
        let url = try registeredApp(shell)
        let body = Self.hint(String(url.split(separator: "/").last ?? ""))
        let headers = try signedHeaders(id: "msg_replayed", body: body)
        #expect(try post(shell, url, body: body, headers: headers) == 204)
        #expect(try post(shell, url, body: body, headers: headers) == 409)
        #expect(shell.linesWritten().filter { $0.hasPrefix(#"{"delivery""#) }.count == 1)
        #expect(shell.stop() == 0)
    }

    @Test func XM5_theBodyIsCheckedStrictlyAfterItsSignature() throws {
        let shell = try Shell()
        let url = try registeredApp(shell)
        let recipient = String(url.split(separator: "/").last ?? "")
        let bad = [
            #"{"topic":"\#(Self.groupTopic)","sequence_id":"1"}"#,
            #"{"topic":"\#(Self.groupTopic)","sequence_id":"1","recipient_id":"\#(recipient)","x":1}"#,
            Self.hint(recipient, topic: Data([2] + [UInt8](repeating: 0, count: 16)).base64EncodedString()),
            Self.hint(recipient, topic: Data([0] + [UInt8](repeating: 0, count: 15)).base64EncodedString()),
            Self.hint(recipient, sequence: "0"),
            Self.hint(recipient, sequence: "18446744073709551616"),
            Self.hint(recipient, sequence: "012"),
            #"{"topic":"\#(Self.groupTopic)","sequence_id":12,"recipient_id":"\#(recipient)"}"#,
            // Another recipient: its first two digits changed (a random one may begin "00").
            Self.hint((recipient.hasPrefix("00") ? "11" : "00") + recipient.dropFirst(2)),
            "[]",
        ]
        for (index, body) in bad.enumerated() {
            #expect(
                try post(shell, url, body: body, headers: try signedHeaders(id: "bad_\(index)", body: body)) == 400,
                "\(body)")
        }
        let welcome = Self.hint(recipient, topic: Self.welcomeTopic, sequence: "1")
        #expect(try post(shell, url, body: welcome, headers: try signedHeaders(id: "good", body: welcome)) == 204)
        #expect(shell.linesWritten().filter { $0.hasPrefix(#"{"delivery""#) }.count == 1)
        #expect(shell.stop() == 0)
    }

    @Test func XM6_notRunningIs503AndTheSenderMayRetryTheSameID() throws {
        let shell = try Shell()
        let url = try registeredApp(shell)
        let body = Self.hint(String(url.split(separator: "/").last ?? ""))
        let headers = try signedHeaders(id: "msg_later", body: body)
        _ = try shell.send(#"{"op":"kill"}"#)
        #expect(try post(shell, url, body: body, headers: headers) == 503)
        _ = try shell.send(#"{"op":"launch"}"#)
        _ = try shell.send(#"{"op":"subscribe","key":"push","plugin":"push","stream":"events"}"#)
        // In the background the process runs: the hint is delivered, never shown.
        _ = try shell.send(#"{"op":"background"}"#)
        #expect(try post(shell, url, body: body, headers: headers) == 204)
        #expect(shell.linesWritten().filter { $0.hasPrefix(#"{"delivery""#) }.count == 1)
        let tray = try #require(try shell.send(#"{"op":"tray"}"#).last)
        #expect(tray.contains(#""entries":[]"#))
        // Uninstalled: the URL is gone.
        _ = try shell.send(#"{"op":"uninstall"}"#)
        let gone = try signedHeaders(id: "msg_gone", body: body)
        #expect(try post(shell, url, body: body, headers: gone) == 410)
        #expect(shell.stop() == 0)
    }
}
