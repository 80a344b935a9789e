import OrderedJSON
import ShellKit
import Testing

/// The token-lifecycle table (Docs/Shell.md), row by row, through the line protocol:
/// each token state answers APNs and FCM as the real services do.
@Suite struct WorldTests {
    final class World {
        var now: Int64 = 1_700_000_000_000
        lazy var session = Session(clock: { [unowned self] in self.now })

        func reply(_ line: String) throws -> JSONObject {
            let text = try #require(session.handle(line).last)
            return try #require(try JSON.parse(text: text).objectValue)
        }

        func token(of device: String) throws -> String {
            try #require(try reply(#"{"op":"state","device":"\#(device)"}"#)["token"]?.stringValue)
        }

        func apns(_ token: String, topic: String = "com.example.app", environment: String = "production") throws
            -> JSONObject
        {
            try reply(
                #"{"op":"apns","token":"\#(token)","environment":"\#(environment)","headers":{"apns-topic":"\#(topic)"},"body":{"aps":{"alert":"x"}}}"#
            )
        }

        func fcm(_ token: String, project: String? = nil) throws -> JSONObject {
            let path = project.map { #""project":"\#($0)","# } ?? ""
            return try reply(#"{"op":"fcm",\#(path)"body":{"message":{"token":"\#(token)","data":{"k":"v"}}}}"#)
        }
    }

    func expectAPNs(_ reply: JSONObject, _ status: Int64, _ reason: String, timestamp: Int64? = nil) {
        #expect(reply["ok"] == false && reply["status"] == .integer(status) && reply["reason"] == .string(reason))
        #expect(reply["timestamp"] == timestamp.map(JSON.integer))
    }

    func expectFCM(_ reply: JSONObject, _ code: Int64, _ status: String, _ errorCode: String) {
        let error = reply["error"]
        #expect(error?["code"] == .integer(code) && error?["status"] == .string(status))
        #expect(error?["details"]?.arrayValue?.first?["errorCode"] == .string(errorCode))
    }

    @Test func apnsAnswersEveryTokenState() throws {
        let world = World()
        _ = try world.reply(#"{"op":"device","platform":"ios"}"#)
        _ = try world.reply(#"{"op":"device","platform":"ios","apns_environment":"development"}"#)
        _ = try world.reply(#"{"op":"device","platform":"ios","bundle":"com.example.other"}"#)
        let active = try world.token(of: "d1")
        #expect(try world.apns(active)["ok"] == true)
        expectAPNs(try world.apns(String(repeating: "0f", count: 32)), 400, "BadDeviceToken")  // never issued
        let development = try world.token(of: "d2")
        expectAPNs(try world.apns(development), 400, "BadDeviceToken")  // other environment
        #expect(try world.apns(development, environment: "development")["ok"] == true)
        expectAPNs(try world.apns(active, environment: "development"), 400, "BadDeviceToken")
        expectAPNs(try world.apns(try world.token(of: "d3")), 400, "DeviceTokenNotForTopic")  // another app's
        world.now += 1000
        _ = try world.reply(#"{"op":"rotate_token","device":"d1"}"#)
        expectAPNs(try world.apns(active), 410, "Unregistered", timestamp: world.now)  // replaced by a rotation
        let rotated = try world.token(of: "d1")
        world.now += 1000
        _ = try world.reply(#"{"op":"uninstall","device":"d1"}"#)
        expectAPNs(try world.apns(rotated), 410, "Unregistered", timestamp: world.now)  // retired by uninstall
        expectAPNs(try world.apns(active), 410, "Unregistered", timestamp: world.now - 1000)  // keeps its own time
    }

    @Test func fcmAnswersEveryTokenState() throws {
        let world = World()
        _ = try world.reply(#"{"op":"device","platform":"android","fcm_project":"alpha"}"#)
        let active = try world.token(of: "d1")
        let accepted = try world.fcm(active)
        #expect(
            accepted["ok"] == true && accepted["name"]?.stringValue?.hasPrefix("projects/alpha/messages/0:") == true)
        #expect(try world.fcm(active, project: "alpha")["ok"] == true)
        expectFCM(try world.fcm(active, project: "beta"), 403, "PERMISSION_DENIED", "SENDER_ID_MISMATCH")
        expectFCM(try world.fcm("never:APA91bissued"), 404, "NOT_FOUND", "UNREGISTERED")
        _ = try world.reply(#"{"op":"rotate_token"}"#)
        expectFCM(try world.fcm(active), 404, "NOT_FOUND", "UNREGISTERED")  // replaced by a rotation
        let rotated = try world.token(of: "d1")
        #expect(try world.fcm(rotated)["ok"] == true)
        _ = try world.reply(#"{"op":"uninstall"}"#)
        expectFCM(try world.fcm(rotated), 404, "NOT_FOUND", "UNREGISTERED")  // retired by uninstall
    }

    /// Routing is a table lookup: a push to the last of many devices finds it without
    /// touching the others (their state and deliveries are unchanged).
    @Test func aPushFindsItsDeviceAmongManyByToken() throws {
        let world = World()
        for index in 1...200 {
            _ = try world.reply(#"{"op":"device","platform":"\#(index % 2 == 0 ? "android" : "ios")"}"#)
        }
        _ = try world.reply(#"{"op":"launch","device":"d199"}"#)
        _ = try world.reply(#"{"op":"call","device":"d199","plugin":"push","method":"register","input":""}"#)
        _ = try world.reply(
            #"{"op":"subscribe","device":"d199","key":"k","plugin":"push","stream":"events","input":""}"#)
        let output = world.session.handle(
            #"{"op":"apns","token":"\#(try world.token(of: "d199"))","headers":{"apns-topic":"com.example.app"},"body":{"aps":{"alert":"hi"}}}"#
        )
        #expect(
            output.first
                == #"{"delivery":"k","device":"d199","ok":true,"output":"{\"body\":\"hi\",\"mobiler_push\":\"received\"}"}"#
        )
        #expect(output.count == 2)
    }
}
