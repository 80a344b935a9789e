import Foundation
import OrderedJSON
import ShellKit
import Testing

/// `reset` (the op, and `POST /api/v1/reset` over it): the world as new but for the parts
/// kept (Docs/Install.md, "Reset"), each part's count in the reply, and a bad `keep`
/// refused with nothing changed.
@Suite struct WorldResetTests {
    /// The reply of one line.
    func reply(_ session: Session, _ line: String) throws -> JSON {
        try JSON.parse(text: try #require(session.handle(line).last))
    }

    /// A world with one of each part: a registered Android device on a topic, an APNs key,
    /// a chaos rule, the clock advanced, and the log holding all of it.
    func filledWorld() throws -> (session: Session, token: String) {
        let session = Session()
        for line in [
            #"{"op":"device","platform":"android"}"#, #"{"op":"launch"}"#,
            #"{"op":"fcm_topic","topic":"news","subscribe":true}"#,
            #"{"op":"apns_key","key_id":"K1","team":"TEAM000001","public_key":\#(JSON.string(ProviderTokenSigner().publicKeyPEM).compactText)}"#,
            #"{"op":"chaos","rule":{"service":"fcm","then":{"answer":"UNAVAILABLE"}}}"#,
            #"{"op":"clock","advance_ms":60000}"#,
        ] {
            #expect(try reply(session, line)["ok"] == true, "\(line)")
        }
        let registered = try reply(session, #"{"op":"call","plugin":"push","method":"register"}"#)
        let token = try #require(
            registered["output"]?.stringValue.flatMap { try? JSON.parse(text: $0) }?["token"]?.stringValue)
        return (session, token)
    }

    @Test func aResetClearsEveryPartAndSaysHowMuchWent() throws {
        let (session, token) = try filledWorld()
        let reset = try reply(session, #"{"op":"reset"}"#)
        #expect(reset["ok"] == true)
        #expect(reset["cleared"]?["devices"] == 1)
        #expect(reset["cleared"]?["credentials"] == 1)
        #expect(reset["cleared"]?["chaos"] == 1)
        #expect(reset["cleared"]?["clock"] == 60000)
        #expect(reset["cleared"]?["log"] == 7)
        #expect(reset["kept"] == .array([]))
        #expect(reset["effect"] == "the world is as new")
        // Devices: none; the old token is unknown to FCM (not merely retired); ids start over.
        #expect(try reply(session, #"{"op":"devices"}"#)["devices"] == .array([]))
        let push = try reply(session, #"{"op":"fcm","body":{"message":{"token":"\#(token)","data":{"a":"1"}}}}"#)
        #expect(push["ok"] == false && push["error"]?["status"] == "NOT_FOUND", "\(push)")
        #expect(try reply(session, #"{"op":"device","platform":"ios"}"#)["device"] == "d1")
        // Chaos: none; the clock: real time again.
        #expect(try reply(session, #"{"op":"chaos"}"#)["rules"] == .array([]))
        #expect(try reply(session, #"{"op":"clock"}"#)["advanced_ms"] == 0)
        // The log: the reset is the first entry left, and seqs went on.
        let entries = session.log.entries(matching: .init(), limit: 10)
        #expect(entries.first?.seq == 8)
        #expect(entries.first?.text.contains(#""op":"reset""#) == true)
    }

    @Test func thePartsKeptStayAsTheyWere() throws {
        let (session, token) = try filledWorld()
        let reset = try reply(session, #"{"op":"reset","keep":["devices","chaos"]}"#)
        #expect(reset["kept"] == ["devices", "chaos"])
        #expect(reset["cleared"]?["devices"] == nil && reset["cleared"]?["chaos"] == nil)
        #expect(reset["cleared"]?["credentials"] == 1)
        #expect(reset["effect"] == "the world is as new, but for its devices, chaos")
        // The device, its token and its topic are there; the chaos rule still meets a push.
        let push = try reply(session, #"{"op":"fcm","body":{"message":{"token":"\#(token)","data":{"a":"1"}}}}"#)
        #expect(push["chaos"] == "c1" && push["error"]?["code"] == 503, "\(push)")
        #expect(try reply(session, #"{"op":"state"}"#)["topics"] == ["news"])
    }

    @Test func aBadKeepIsRefusedAndChangesNothing() throws {
        let (session, _) = try filledWorld()
        for (keep, sentence) in [
            (#""devices""#, #""keep" must be an array of parts: devices, credentials, chaos, appwrite, clock, log"#),
            (#"["devices","tokens"]"#, #""keep" names no part of the world: "tokens"; the parts are"#),
            (#"[1]"#, #""keep" names no part of the world: 1"#),
        ] {
            let refused = try reply(session, #"{"op":"reset","keep":\#(keep)}"#)
            #expect(refused["ok"] == false)
            #expect(refused["error"]?.stringValue?.hasPrefix(sentence) == true, "\(refused)")
        }
        #expect(try reply(session, #"{"op":"devices"}"#)["devices"]?.arrayValue?.count == 1)
        #expect(try reply(session, #"{"op":"chaos"}"#)["rules"]?.arrayValue?.count == 1)
        #expect(try reply(session, #"{"op":"clock"}"#)["advanced_ms"] == 60000)
    }
}
