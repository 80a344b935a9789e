import Foundation
import OrderedJSON
import Testing

/// PubNub's Mobile Push Gateway through a real `cxshell serve --listen` (PN-1 … PN-5),
/// with curl as the backend and the app's SDK: registrations per sub key, publishing
/// by GET and POST, and the fan-out through APNs's and FCM's own rules.
@Suite(.serialized) struct PubNubGatewayTests {
    typealias Shell = FrontDoorTests.Shell

    /// A GET or POST to the front door in clear HTTP/1.1: status and body.
    func call(_ shell: Shell, _ path: String, post body: String? = nil) throws -> (Int, String) {
        var arguments = ["-w", "\n%{http_code}"]
        if let body { arguments += ["-X", "POST", "--data-binary", body] }
        let answer = try shell.curl(
            ["--http1.1", "-s", "-o", "-"] + arguments + ["http://127.0.0.1:\(shell.port)\(path)"])
        // curl -i is on: drop the header block.
        let afterHeaders = answer.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
        let lines = afterHeaders.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    /// A running, subscribed app on a new device; its push token.
    func app(_ shell: Shell, _ platform: String, environment: String = "production") throws -> String {
        _ = try shell.send(#"{"op":"device","platform":"\#(platform)","apns_environment":"\#(environment)"}"#)
        _ = try shell.send(#"{"op":"launch"}"#)
        _ = try shell.send(#"{"op":"subscribe","key":"push","plugin":"push","stream":"events"}"#)
        let reply = try JSON.parse(
            text: try #require(try shell.send(#"{"op":"call","plugin":"push","method":"register"}"#).last))
        let output = try #require(reply["output"]?.stringValue)
        return try #require(try JSON.parse(text: output)["token"]?.stringValue)
    }

    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    @Test func PN1_registrationsAddRemoveListAndRemoveAllPerSubKey() throws {
        let shell = try Shell()
        let base = "/v1/push/sub-key/sub-a/devices/tok-1"
        #expect(try call(shell, base + "?add=a,b,c&type=gcm") == (200, #"[1,"Modified Channels"]"#))
        #expect(try call(shell, base + "?type=gcm") == (200, #"["a","b","c"]"#))
        #expect(try call(shell, base + "?remove=b&type=gcm") == (200, #"[1,"Modified Channels"]"#))
        #expect(try call(shell, base + "?type=gcm") == (200, #"["a","c"]"#))
        // Per sub key, and per type.
        #expect(try call(shell, "/v1/push/sub-key/sub-b/devices/tok-1?type=gcm") == (200, "[]"))
        #expect(try call(shell, base + "?type=fcm") == (200, "[]"))
        #expect(try call(shell, base + "/remove?type=gcm") == (200, #"[1,"Modified Channels"]"#))
        #expect(try call(shell, base + "?type=gcm") == (200, "[]"))
        // APNs over HTTP/2: topic and environment are part of the registration.
        let v2 = "/v2/push/sub-key/sub-a/devices-apns2/ABCD"
        #expect(try call(shell, v2 + "?add=x&environment=production&topic=com.example.app").0 == 200)
        #expect(try call(shell, v2 + "?environment=production&topic=com.example.app") == (200, #"["x"]"#))
        #expect(try call(shell, v2 + "?environment=development&topic=com.example.app") == (200, "[]"))
        // Each missing or unknown argument is named.
        let missingType = try call(shell, base + "?add=a")
        #expect(missingType.0 == 400 && missingType.1.contains("Invalid type argument"), "\(missingType)")
        #expect(try call(shell, base + "?add=a&type=mpns").1.contains("Invalid type argument"))
        let environment = try call(shell, v2 + "?add=a&environment=staging&topic=t")
        #expect(environment.0 == 400 && environment.1.contains("environment"))
        let topic = try call(shell, v2 + "?add=a&environment=production")
        #expect(topic.0 == 400 && topic.1.contains("topic"))
        #expect(try shell.send(#"{"op":"devices"}"#).last?.contains(#""ok":true"#) == true)
        #expect(shell.stop() == 0)
    }

    @Test func PN2_publishingByGETAndPOSTAnswersSentWithATimetoken() throws {
        let shell = try Shell()
        let get = try call(shell, "/publish/pub/sub/0/ch/0/" + Self.encoded(#"{"text":"hi"}"#) + "?uuid=u&pnsdk=x")
        #expect(get.0 == 200)
        let answer = try #require(try JSON.parse(text: get.1).arrayValue)
        #expect(answer.count == 3 && answer[0] == 1 && answer[1] == "Sent")
        let timetoken = try #require(answer[2].stringValue)
        #expect(timetoken.count == 17 && timetoken.allSatisfy(\.isNumber))
        let post = try call(shell, "/publish/pub/sub/0/ch/0", post: #"{"text":"hi"}"#)
        #expect(post.0 == 200 && post.1.hasPrefix(#"[1,"Sent",""#))
        let later = try #require(try JSON.parse(text: post.1).arrayValue?.last?.stringValue)
        #expect(later > timetoken)
        // A message that is not JSON.
        let bad = try call(shell, "/publish/pub/sub/0/ch/0/" + Self.encoded("{nope"))
        #expect(bad.0 == 400 && bad.1.hasPrefix(#"[0,"Invalid JSON","#))
        // Without pn_apns / pn_gcm / pn_fcm: no push, as its report says.
        let report = shell.linesWritten().first { $0.contains(#""network":"pubnub""#) } ?? ""
        #expect(report.contains("realtime message only"), "\(report)")
        #expect(shell.stop() == 0)
    }

    @Test func PN3_PN5_theFanOutFollowsAPNsAndFCMRulesAndIsReported() throws {
        let shell = try Shell()
        let iosToken = try app(shell, "ios")
        let androidToken = try app(shell, "android")
        let retired = try app(shell, "ios")
        _ = try shell.send(#"{"op":"uninstall","device":"d3"}"#)
        #expect(
            try call(
                shell,
                "/v2/push/sub-key/s/devices-apns2/\(iosToken)?add=news&environment=production&topic=com.example.app"
            ).0 == 200)
        #expect(try call(shell, "/v1/push/sub-key/s/devices/\(androidToken)?add=news&type=fcm").0 == 200)
        #expect(
            try call(
                shell,
                "/v2/push/sub-key/s/devices-apns2/\(retired)?add=news&environment=production&topic=com.example.app"
            ).0 == 200)
        _ = shell.linesWritten()
        let message = """
            {"text":"realtime only","pn_apns":{"aps":{"alert":{"title":"T","body":"B"}},"k":"v","pn_debug":true,\
            "pn_push":[{"push_type":"alert","targets":[{"environment":"production","topic":"com.example.app"}],"version":"v2"}]},\
            "pn_fcm":{"notification":{"title":"T","body":"B"},"data":{"k":"v"}}}
            """
        #expect(try call(shell, "/publish/p/s/0/news/0", post: message).0 == 200)
        let lines = shell.linesWritten()
        #expect(
            lines.filter { $0.hasPrefix(#"{"delivery""#) } == [
                #"{"delivery":"push","device":"d1","ok":true,"output":"{\"k\":\"v\",\"title\":\"T\",\"body\":\"B\",\"mobiler_push\":\"received\"}"}"#,
                #"{"delivery":"push","device":"d2","ok":true,"output":"{\"k\":\"v\",\"title\":\"T\",\"body\":\"B\",\"mobiler_push\":\"received\"}"}"#,
            ])
        let report = try JSON.parse(text: try #require(lines.last))
        let devices = try #require(report["devices"]?.arrayValue)
        #expect(devices.map { $0["device"] } == ["d1", "d2", "d3"])
        #expect(devices[0]["result"]?.stringValue?.hasPrefix("delivered through APNs") == true)
        #expect(devices[1]["result"]?.stringValue?.hasPrefix("delivered through FCM") == true)
        #expect(devices[2]["result"]?.stringValue == "rejected by APNs: 410 Unregistered")
        #expect(report["effect"] == "pushed to 3 registered devices: 2 delivered, 0 skipped, 1 rejected")
        // FCM's rule that data values are strings holds for the gateway too.
        _ = try call(shell, "/publish/p/s/0/news/0", post: #"{"pn_gcm":{"data":{"n":1}}}"#)
        let fcmReport = try JSON.parse(text: try #require(shell.linesWritten().last))
        let fcmResults = (fcmReport["devices"]?.arrayValue ?? []).compactMap { $0["result"]?.stringValue }
        #expect(fcmResults.count == 3, "\(fcmReport)")
        #expect(fcmResults.dropFirst().first?.hasPrefix("rejected by FCM: 400") == true, "\(fcmResults)")
        #expect(fcmResults.first?.hasPrefix("skipped: the message has no pn_apns") == true)
        #expect(shell.stop() == 0)
    }

    @Test func PN4_exceptionsExclusionsAndTargetsSkipDevices() throws {
        let shell = try Shell()
        let iosToken = try app(shell, "ios")
        let androidToken = try app(shell, "android")
        _ = try call(
            shell, "/v2/push/sub-key/s/devices-apns2/\(iosToken)?add=c&environment=production&topic=com.example.app")
        _ = try call(shell, "/v1/push/sub-key/s/devices/\(androidToken)?add=c&type=gcm")
        _ = shell.linesWritten()
        func results(_ message: String) throws -> [String] {
            _ = try call(shell, "/publish/p/s/0/c/0", post: message)
            let lines = shell.linesWritten()
            #expect(!lines.contains { $0.hasPrefix(#"{"delivery""#) })
            let report = try JSON.parse(text: try #require(lines.last))
            return (report["devices"]?.arrayValue ?? []).compactMap { $0["result"]?.stringValue }
        }
        // An APNs token is hex: named in either case, it is the same token.
        let excepted = try results(
            #"{"pn_apns":{"aps":{"alert":"x"},"pn_exceptions":["\#(iosToken.uppercased())"]},"pn_gcm":{"data":{"a":"b"},"pn_exceptions":["\#(androidToken)"]}}"#
        )
        #expect(excepted.count == 2 && excepted.allSatisfy { $0.contains("pn_exceptions (PN-4)") }, "\(excepted)")
        let excluded = try results(
            #"{"pn_apns":{"aps":{"alert":"x"},"pn_push":[{"targets":[{"environment":"production","topic":"com.example.app","excluded_devices":["\#(iosToken.uppercased())"]}]}]}}"#
        )
        #expect(excluded.first?.contains("excluded_devices (PN-4)") == true, "\(excluded)")
        let otherTopic = try results(
            #"{"pn_apns":{"aps":{"alert":"x"},"pn_push":[{"targets":[{"environment":"production","topic":"com.other"}]}]}}"#
        )
        #expect(otherTopic.first?.contains("no pn_push target") == true, "\(otherTopic)")
        #expect(shell.stop() == 0)
    }

    /// Hostile paths: bad keys, bad encodings, half paths. Each gets a 400 that names
    /// the problem; the registrations are untouched and the shell goes on serving.
    @Test func badKeysAndEncodingsAreNamedAndNothingIsLost() throws {
        let shell = try Shell()
        #expect(try call(shell, "/v1/push/sub-key/s/devices/tok?add=keep&type=gcm").0 == 200)
        let cases: [(String, String)] = [
            ("/v1/push/sub-key//devices/tok?add=a&type=gcm", "Subscribe Key"),
            ("/v1/push/sub-key/s/devices/%ZZ?add=a&type=gcm", "percent-encoding"),
            // A sign is not a hex digit, though Int parsing takes one.
            ("/v1/push/sub-key/s/devices/%-0?add=a&type=gcm", "percent-encoding"),
            ("/v1/push/sub-key/s/devices/%+1?add=a&type=gcm", "percent-encoding"),
            ("/v1/push/sub-key/s/devices/%C3%28?add=a&type=gcm", "not UTF-8"),
            ("/v1/push/sub-key/s/devices?type=gcm", "the path must be"),
            ("/v2/push/sub-key/s/devices-apns2/tok/extra/more", "the path must be"),
            ("/publish/p/s/0/ch/0/%ZZ", "percent-encoding"),
            ("/publish/p/s/1/ch/0/%7B%7D", "the path must be"),
            ("/publish//s/0/ch/0/%7B%7D", "the path must be"),
            ("/publish/p/s/0/ch/0", "carries the message"),
        ]
        for (path, words) in cases {
            let (status, body) = try call(shell, path)
            #expect(status == 400 && body.contains(words), "\(path): \(status) \(body)")
        }
        #expect(try call(shell, "/publish/p/s/0/ch/0/x", post: "{}").1.contains("no message in its path"))
        #expect(try call(shell, "/v1/push/sub-key/s/devices/tok?type=gcm") == (200, #"["keep"]"#))
        #expect(try shell.send(#"{"op":"devices"}"#).last?.contains(#""ok":true"#) == true)
        #expect(shell.stop() == 0)
    }
}
