import Foundation
import OrderedJSON
import ShellKit
import Testing

/// The world kept across restarts (Docs/Install.md, "Kept across restarts"): a state
/// document read back gives the same devices, tokens (retired ones too), trays by the
/// OS's rule, credentials, chaos rules and clock; a damaged or newer one is refused and
/// changes nothing; `serve --state` saves at a clean stop and loads at start.
@Suite struct WorldStateTests {
    func reply(_ session: Session, _ line: String) throws -> JSON {
        try JSON.parse(text: try #require(session.handle(line).last))
    }

    func token(_ registered: JSON) throws -> String {
        try #require(registered["output"]?.stringValue.flatMap { try? JSON.parse(text: $0) }?["token"]?.stringValue)
    }

    /// Two phones with something in each tray, a rotated token, a topic, a key, a rule, time.
    func filledWorld() throws -> (session: Session, ios: String, retired: String, android: String) {
        let session = Session()
        _ = try reply(session, #"{"op":"device","platform":"ios","tray_limit":5}"#)
        _ = try reply(session, #"{"op":"launch"}"#)
        let retired = try token(try reply(session, #"{"op":"call","plugin":"push","method":"register"}"#))
        let ios = try #require(try reply(session, #"{"op":"rotate_token"}"#)["token"]?.stringValue)
        let categories = JSON.string(#"[{"id":"booking","actions":[{"id":"reply","title":"Reply","input":true}]}]"#)
        _ = try reply(
            session, #"{"op":"call","plugin":"push","method":"categories","input":\#(categories.compactText)}"#)
        _ = try reply(session, #"{"op":"kill"}"#)
        #expect(
            try reply(
                session,
                #"{"op":"apns","headers":{"apns-topic":"com.example.app"},"body":{"aps":{"alert":"kept","category":"booking"}}}"#
            )["tray_id"] == "t1")
        _ = try reply(session, #"{"op":"device","platform":"android","fcm_project":"demo"}"#)
        _ = try reply(session, #"{"op":"launch"}"#)
        let android = try token(try reply(session, #"{"op":"call","plugin":"push","method":"register"}"#))
        _ = try reply(session, #"{"op":"fcm_topic","topic":"news","subscribe":true}"#)
        _ = try reply(session, #"{"op":"kill"}"#)
        _ = try reply(
            session,
            #"{"op":"fcm","body":{"message":{"token":"\#(android)","notification":{"title":"gone after a reboot"}}}}"#)
        let key = JSON.string(ProviderTokenSigner(keyID: "K1").publicKeyPEM).compactText
        for line in [
            #"{"op":"apns_key","key_id":"K1","team":"TEAM000001","public_key":\#(key)}"#,
            #"{"op":"chaos","rule":{"service":"fcm","count":3,"then":{"answer":"UNAVAILABLE"}}}"#,
            #"{"op":"clock","advance_ms":90000}"#,
        ] {
            #expect(try reply(session, line)["ok"] == true, "\(line)")
        }
        return (session, ios, retired, android)
    }

    @Test func aSnapshotReadBackIsTheSameWorldAfterAReboot() throws {
        let (old, ios, retired, android) = try filledWorld()
        let saved = old.snapshot()
        let new = Session()
        try new.restore(snapshot: saved)
        // The same document, but for the time it was written.
        func withoutTime(_ bytes: [UInt8]) throws -> JSON {
            var object = try #require(try JSON.parse(bytes).objectValue)
            object["saved_at"] = nil
            return .object(object)
        }
        let (before, after) = (try withoutTime(saved), try withoutTime(new.snapshot()))
        for key in before.objectValue?.orderedKeys ?? [] where before[key] != after[key] {
            Issue.record("\(key): \(before[key]?.compactText ?? "")\n  read back: \(after[key]?.compactText ?? "")")
        }
        // Tokens route to the same devices; the rotated one is still retired (410).
        let devices = try reply(new, #"{"op":"devices"}"#)["devices"]?.arrayValue ?? []
        #expect(devices.map { $0["device"] } == ["d1", "d2"])
        #expect(devices.map { $0["token"] } == [.string(ios), .string(android)])
        let stale = try reply(
            new, #"{"op":"apns","token":"\#(retired)","headers":{"apns-topic":"com.example.app"},"body":{"aps":{}}}"#)
        #expect(stale["status"] == 410 && stale["reason"] == "Unregistered", "\(stale)")
        // iOS keeps its tray across the reboot, Android clears it; apps are not running.
        #expect(try reply(new, #"{"op":"tray","device":"d1"}"#)["entries"]?.arrayValue?.map { $0["body"] } == ["kept"])
        #expect(try reply(new, #"{"op":"tray","device":"d2"}"#)["entries"] == .array([]))
        #expect(try reply(new, #"{"op":"state","device":"d1"}"#)["tray_limit"] == 5)
        // The app's categories, and the kept entry's action buttons (PH-1, PH-2).
        #expect(try reply(new, #"{"op":"state","device":"d1"}"#)["categories"]?.arrayValue?.count == 1)
        #expect(
            try reply(new, #"{"op":"tap","device":"d1","which":"t1","action":"reply","text":"ok"}"#)["action"]
                == "reply")
        #expect(try reply(new, #"{"op":"state","device":"d2"}"#)["state"] == "not_running")
        // The topic's subscriber, the rule with what remains of it, the clock.
        let topic = try reply(new, #"{"op":"fcm","body":{"message":{"topic":"news","data":{"a":"1"}}}}"#)
        #expect(topic["chaos"] == "c1", "\(topic)")
        #expect(try reply(new, #"{"op":"chaos"}"#)["rules"]?.arrayValue?.first?["remaining"] == 2)
        #expect(try reply(new, #"{"op":"clock"}"#)["advanced_ms"] == 90000)
        // The APNs key: an unsigned provider token is now refused over the network.
        #expect(try JSON.parse(new.snapshot())["credentials"]?["apns_keys"]?.arrayValue?.count == 1)
        // Ids go on from the last one.
        #expect(try reply(new, #"{"op":"device","platform":"web"}"#)["device"] == "d3")
    }

    @Test func anOfflinePhoneStaysOfflineAndGetsWhatTheServicesKeptWhenItIsBack() throws {
        let old = Session()
        _ = try reply(old, #"{"op":"device","platform":"ios"}"#)
        _ = try reply(old, #"{"op":"device","platform":"android"}"#)
        let android = try #require(try reply(old, #"{"op":"state"}"#)["token"]?.stringValue)
        // The Android app has notifications allowed and is not in the foreground, so FCM
        // draws what it kept and the badge follows the message's count.
        for line in [
            #"{"op":"permission","device":"d2","answer":"grant"}"#, #"{"op":"launch","device":"d2"}"#,
            #"{"op":"call","device":"d2","plugin":"push","method":"register"}"#, #"{"op":"background","device":"d2"}"#,
        ] {
            #expect(try reply(old, line)["ok"] == true, "\(line)")
        }
        for device in ["d1", "d2"] { _ = try reply(old, #"{"op":"network","device":"\#(device)","online":false}"#) }
        let stored = try reply(
            old,
            #"{"op":"apns","device":"d1","headers":{"apns-topic":"com.example.app"},"body":{"aps":{"alert":"while away"}}}"#
        )
        #expect(stored["effect"]?.stringValue?.hasPrefix("stored: d1 is offline") == true, "\(stored)")
        for score in ["1-0", "2-0"] {
            _ = try reply(
                old,
                #"{"op":"fcm","body":{"message":{"token":"\#(android)","notification":{"title":"\#(score)"},"android":{"collapse_key":"score","ttl":"3600s","notification":{"notification_count":7}}}}}"#
            )
        }
        let new = Session()
        try new.restore(snapshot: old.snapshot())
        let apns = try reply(new, #"{"op":"network","device":"d1","online":true}"#)
        // "back online": it was still offline after the restart.
        #expect(
            apns["effect"]?.stringValue?.hasPrefix("d1 is back online; APNs delivered the stored notification") == true,
            "\(apns)")
        let fcm = try reply(new, #"{"op":"network","device":"d2","online":true}"#)
        #expect(fcm["effect"]?.stringValue?.hasPrefix("d2 is back online; FCM delivered 1") == true, "\(fcm)")
        // The message kept its display options across the restart: the badge is the count it set.
        let state = try reply(new, #"{"op":"state","device":"d2"}"#)
        #expect(state["badge"] == 7, "\(fcm) \(state)")
    }

    @Test(arguments: [
        ("not json", "it is not JSON"),
        (#"[1]"#, "a state document is a JSON object"),
        (#"{"devices":{}}"#, #"this is not a cxshell state document (it has no "cxshell_state" format number)"#),
        (#"{"cxshell_state":2}"#, "the state document is format 2, from a newer cxshell; this one reads format 1"),
        (
            #"{"cxshell_state":1,"devices":{"list":[{"id":"d1","platform":"pager","bundle":"b","installed":true}]}}"#,
            "the state document's devices.list[0].platform must be one of the known names"
        ),
        (
            #"{"cxshell_state":1,"devices":{"list":[{"id":"d1","platform":"ios","bundle":"b","installed":true,"tray_limit":0}]}}"#,
            "the state document's devices.list[0].tray_limit must be a whole number from 1 to 1000"
        ),
        (
            #"{"cxshell_state":1,"credentials":{"apns_keys":[{"key_id":"K","team":"T","public_key":"no"}]}}"#,
            "the state document's credentials.apns_keys[0].public_key must be an EC P-256 public key in PEM"
        ),
        (
            #"{"cxshell_state":1,"chaos":{"rules":[{"id":"c1","service":"nope"}]}}"#,
            "the state document's saved chaos rule c1: \"service\" must be one of"
        ),
    ])
    func aDamagedOrNewerDocumentIsRefusedAndChangesNothing(document: String, sentence: String) throws {
        let (session, _, _, _) = try filledWorld()
        let before = try JSON.parse(session.snapshot())["devices"]
        #expect(throws: Session.SnapshotRefusal.self) { try session.restore(snapshot: Array(document.utf8)) }
        do {
            try session.restore(snapshot: Array(document.utf8))
        } catch {
            #expect(error.description.hasPrefix(sentence), "\(error)")
        }
        #expect(try JSON.parse(session.snapshot())["devices"] == before)
        #expect(try reply(session, #"{"op":"chaos"}"#)["rules"]?.arrayValue?.count == 1)
    }

    @Test func serveKeepsTheWorldInItsStateFileAcrossARestart() throws {
        let directory = NSTemporaryDirectory() + "cxshell-state-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/world.json"
        let api = InspectorTests()
        let first = try FrontDoorTests.Shell(environment: ["CXSHELL_STATE": file])
        let made = try api.devices(first, 2)
        let pubnub = PubNubGatewayTests()
        let registration = "/v2/push/sub-key/s/devices-apns2/\(made[0].token)"
        #expect(
            try pubnub.call(first, registration + "?add=news,sport&environment=production&topic=com.example.app").0
                == 200)
        #expect(first.stop() == 0)  // the end of input: a clean stop saves
        let second = try FrontDoorTests.Shell(arguments: ["--state", file])
        let listed = try api.call(second, "GET", "/api/v1/devices").json?["devices"]?.arrayValue ?? []
        #expect(listed.map { $0["token"]?.stringValue ?? "" } == made.map(\.token))
        #expect(try api.push(second, made[0].token).contains("HTTP/2 200"))
        // PubNub's registrations came back: the device's channels, in order.
        let channels = try pubnub.call(second, registration + "?environment=production&topic=com.example.app")
        #expect(channels.0 == 200 && channels.1 == #"["news","sport"]"#, "\(channels)")
        // The API reads and replaces the same document.
        let document = try api.call(second, "GET", "/api/v1/snapshot")
        #expect(document.status == 200 && document.json?["cxshell_state"] == 1)
        #expect(try api.call(second, "POST", "/api/v1/snapshot", json: #"{"cxshell_state":9}"#).status == 400)
        let emptied = try api.call(second, "POST", "/api/v1/snapshot", json: #"{"cxshell_state":1}"#)
        #expect(emptied.status == 200 && emptied.json?["restored"]?["devices"] == 0, "\(emptied.text)")
        #expect(try api.call(second, "POST", "/api/v1/snapshot", json: document.text).status == 200)
        #expect(try api.call(second, "GET", "/api/v1/devices").json?["devices"]?.arrayValue?.count == 2)
        #expect(second.stop() == 0)
        // A damaged file stops the start and is left as it was.
        try Data("{\"cxshell_state\":1,\"devices\":".utf8).write(to: URL(fileURLWithPath: file))
        let (status, _, errors) = try ServeConfigurationTests.run(["serve", "--state", file])
        #expect(status == 2)
        #expect(errors.contains("the state file \(file) was not loaded (it is not JSON"), "\(errors)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "{\"cxshell_state\":1,\"devices\":")
        // A path that cannot be written is refused at start, not at the stop.
        let unwritable = try ServeConfigurationTests.run(["serve", "--state", directory + "/no/such/dir/world.json"])
        #expect(unwritable.status == 2)
        #expect(unwritable.errors.contains("cannot be written: No such file or directory"), "\(unwritable.errors)")
    }
}
