import Foundation
import HTTPMessage
import OrderedJSON
import ShellKit
import Testing

/// A network request's lines as a server writes them (`Session.handle(network:writingLinesTo:)`):
/// appended to what the output held, as bytes, each line ended by a newline, deliveries
/// before the report; the same lines `handle(network:)` gives as text.
@Suite struct NetworkLinesTests {
    let session = Session()

    init() { session.inspector = InspectorSettings() }

    func request(_ host: String, _ path: String, _ headers: [(String, String)] = [], _ body: String) -> HTTPRequest {
        HTTPRequest(
            headers: [(":method", "POST"), (":path", path), (":authority", host)] + headers, body: Array(body.utf8),
            serverName: host, tls: true, http2: true)
    }

    /// The lines `output` holds past `start`, each checked to end with a newline.
    func lines(_ written: ByteOutput, from start: Int) -> [String] {
        let output = written.bytes
        #expect(output.last == 0x0A)
        return output[start...].split(separator: 0x0A, omittingEmptySubsequences: false).dropLast().map {
            String(decoding: $0, as: UTF8.self)
        }
    }

    @Test func linesAreAppendedAsBytesAfterWhatTheOutputHeld() throws {
        var output = ByteOutput()
        output.append(utf8Of: "earlier\n")
        let made = session.handle(
            network: request(
                "127.0.0.1", "/api/v1/devices", [("content-type", "application/json")],
                #"{"platform":"ios","ready":true}"#),
            writingLinesTo: &output)
        #expect(made.status == 201 || made.status == 200, "\(made.status)")
        let token = try #require(try JSON.parse(made.body)["devices"]?.arrayValue?.first?["token"]?.stringValue)
        #expect(output.bytes.starts(with: Array("earlier\n".utf8)))
        let start = output.count
        let push = request(
            "api.push.apple.com", "/3/device/\(token)",
            [
                ("apns-topic", "com.example.app"),
                (
                    "authorization",
                    ProviderTokenSigner().authorization(issuedAt: Date().timeIntervalSince1970, signed: false)
                ),
            ],
            #"{"aps":{"alert":"x"}}"#)
        #expect(session.handle(network: push, writingLinesTo: &output).status == 200)
        let written = lines(output, from: start)
        // The core's delivery, then the report, each a JSON object on a line of its own.
        #expect(written.count >= 2, "\(written)")
        let values = try written.map { try JSON.parse(text: $0) }
        #expect(values.allSatisfy { $0.objectValue != nil }, "\(written)")
        #expect(values.last?["network"] == "apns" && values.last?["status"] == 200, "\(written)")
        #expect(values.dropLast().allSatisfy { $0["network"] == nil }, "\(written)")
    }

    /// APNs reads a device's path from its bytes; every other path goes to the validator
    /// as text. Either way the answer is the one APNs gives for that path.
    @Test func anAPNsPathIsJudgedAsTheValidatorJudgesIt() throws {
        var output = ByteOutput()
        let made = session.handle(
            network: request(
                "127.0.0.1", "/api/v1/devices", [("content-type", "application/json")],
                #"{"platform":"ios","ready":true}"#),
            writingLinesTo: &output)
        let token = try #require(try JSON.parse(made.body)["devices"]?.arrayValue?.first?["token"]?.stringValue)
        let answers: [(path: String, status: Int, reason: String?)] = [
            ("/3/device/\(token)", 200, nil), ("/3/device/\(token.uppercased())", 200, nil),
            ("/3/devices/\(token)", 404, "BadPath"), ("/3/Device/\(token)", 404, "BadPath"),
            ("/3/device/", 400, "MissingDeviceToken"), ("/3/device/zz", 400, "BadDeviceToken"),
            ("/3/device/abc", 400, "BadDeviceToken"), ("/3/device/ab", 400, "BadDeviceToken"),
            ("/3/device/\(token)?x=1", 400, "BadDeviceToken"),
        ]
        for (path, status, reason) in answers {
            let push = request(
                "api.push.apple.com", path,
                [
                    ("apns-topic", "com.example.app"),
                    (
                        "authorization",
                        ProviderTokenSigner().authorization(issuedAt: Date().timeIntervalSince1970, signed: false)
                    ),
                ],
                #"{"aps":{"alert":"x"}}"#)
            let response = session.handle(network: push, writingLinesTo: &output)
            #expect(response.status == status, "\(path)")
            let answered = response.body.isEmpty ? nil : try JSON.parse(response.body)["reason"]?.stringValue
            #expect(answered == reason, "\(path)")
        }
    }

    @Test func theBytesAreTheLinesHandleGivesAsText() {
        // An apns-id of the sender's own: the refusal's report is the same twice.
        let refused = request(
            "api.push.apple.com", "/3/device/" + String(repeating: "ab", count: 32),
            [("apns-topic", "com.example.app"), ("apns-id", "123e4567-e89b-12d3-a456-426614174000")],
            #"{"aps":{"alert":"x"}}"#)
        let asText = session.handle(network: refused)
        var output = ByteOutput()
        let response = session.handle(network: refused, writingLinesTo: &output)
        #expect(asText.response.status == 400 && response.status == 400)
        #expect(lines(output, from: 0) == asText.lines)
        #expect(asText.lines.count == 1 && asText.lines[0].contains(#""reason":"BadDeviceToken""#), "\(asText.lines)")
    }
}
