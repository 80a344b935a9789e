import OrderedJSON
import ShellKit
import Testing

/// Offline phones and the world's clock (chaos.md): what APNs and FCM keep for a device in
/// flight mode, what reaches it when it comes back, and time that passes in one line.
@Suite struct OfflinePhoneTests {
    final class World {
        var now: Int64 = 1_800_000_000_000
        lazy var session = Session(clock: { [unowned self] in self.now })

        /// The output lines of one request.
        func lines(_ line: String) -> [String] { session.handle(line) }

        func reply(_ line: String) throws -> JSONObject {
            let last = try #require(lines(line).last)
            return try #require(try JSON.parse(text: last).objectValue)
        }

        /// A device whose app registered, subscribed to push events and went to the background.
        func readyDevice(_ platform: String) throws {
            _ = try reply(#"{"op":"device","platform":"\#(platform)"}"#)
            _ = try reply(#"{"op":"launch"}"#)
            _ = try reply(#"{"op":"call","plugin":"push","method":"register","input":""}"#)
            _ = try reply(#"{"op":"subscribe","key":"k","plugin":"push","stream":"events","input":""}"#)
            _ = try reply(#"{"op":"background"}"#)
        }

        func apns(_ alert: String, expiration: String? = nil) throws -> JSONObject {
            let header = expiration.map { #","apns-expiration":"\#($0)""# } ?? ""
            return try reply(
                #"{"op":"apns","headers":{"apns-topic":"com.example.app"\#(header)},"body":{"aps":{"alert":"\#(alert)"}}}"#
            )
        }

        func fcm(_ body: String, collapseKey: String? = nil, ttl: String? = nil) throws -> JSONObject {
            var android: [String] = []
            if let collapseKey { android.append(#""collapse_key":"\#(collapseKey)""#) }
            if let ttl { android.append(#""ttl":"\#(ttl)""#) }
            let token = try #require(try reply(#"{"op":"state"}"#)["token"]?.stringValue)
            return try reply(
                #"{"op":"fcm","body":{"message":{"token":"\#(token)","notification":{"body":"\#(body)"},"android":{\#(android.joined(separator: ","))}}}}"#
            )
        }

        func trayBodies() throws -> [String] {
            let entries = try #require(try reply(#"{"op":"tray"}"#)["entries"]?.arrayValue)
            return entries.compactMap { $0["body"]?.stringValue }
        }

        func effect(_ reply: JSONObject) -> String { reply["effect"]?.stringValue ?? "" }
    }

    @Test func apnsKeepsOnlyTheNewestNotificationAndDeliversItOnReconnect() throws {
        let world = World()
        try world.readyDevice("ios")
        let off = try world.reply(#"{"op":"network","online":false}"#)
        #expect(off["online"] == false)
        let first = try world.apns("one")
        #expect(world.effect(first).hasPrefix("stored: d1 is offline"))
        // Nothing reached the device: no delivery line, nothing in the tray.
        #expect(
            world.lines(#"{"op":"apns","headers":{"apns-topic":"com.example.app"},"body":{"aps":{"alert":"two"}}}"#)
                .count == 1)
        let once = try world.apns("never stored", expiration: "0")
        #expect(world.effect(once).hasPrefix("not delivered: d1 is offline, and apns-expiration 0"))
        #expect(try world.trayBodies().isEmpty)
        let back = try world.reply(#"{"op":"network","online":true}"#)
        #expect(world.effect(back).contains("APNs delivered the stored notification: shown in the tray"))
        #expect(try world.trayBodies() == ["two"])  // "one" was replaced; the expiration-0 one was never kept
    }

    @Test func apnsLetsAStoredNotificationExpireOnTheWorldsClock() throws {
        let world = World()
        try world.readyDevice("ios")
        _ = try world.reply(#"{"op":"network","online":false}"#)
        let expiration = world.now / 1000 + 60
        #expect(world.effect(try world.apns("soon stale", expiration: String(expiration))).hasPrefix("stored"))
        _ = try world.reply(#"{"op":"clock","advance_ms":61000}"#)
        let back = try world.reply(#"{"op":"network","online":true}"#)
        #expect(world.effect(back).contains("APNs: the stored notification expired"))
        #expect(try world.trayBodies().isEmpty)
    }

    @Test func fcmKeepsMessagesWithinTheirTTLAndCollapsesByKey() throws {
        let world = World()
        try world.readyDevice("android")
        _ = try world.reply(#"{"op":"network","online":false}"#)
        #expect(world.effect(try world.fcm("now or never", ttl: "0s")).hasPrefix("not delivered"))
        #expect(world.effect(try world.fcm("short", ttl: "30s")).hasPrefix("stored"))
        #expect(world.effect(try world.fcm("long")).hasPrefix("stored"))
        for key in ["a", "b", "c", "d"] { _ = try world.fcm("\(key)1", collapseKey: key) }
        #expect(world.effect(try world.fcm("b2", collapseKey: "b")).hasPrefix("replaced"))
        let fifth = try world.fcm("e1", collapseKey: "e")
        #expect(world.effect(fifth).contains("dropped the message of the oldest key, 'a'"))
        _ = try world.reply(#"{"op":"clock","advance_ms":31000}"#)
        let back = try world.reply(#"{"op":"network","online":true}"#)
        #expect(world.effect(back).contains("FCM delivered 5 stored messages; 1 passed their ttl"))
        // In the order they were sent: "short" expired, "a1" dropped, "b1" replaced by "b2".
        #expect(try world.trayBodies() == ["long", "c1", "d1", "b2", "e1"])
    }

    @Test func fcmDiscardsEverythingPastOneHundredAndTheAppHearsOnDeletedMessages() throws {
        let world = World()
        try world.readyDevice("android")
        _ = try world.reply(#"{"op":"network","online":false}"#)
        for index in 1...100 { #expect(world.effect(try world.fcm("m\(index)")).hasPrefix("stored")) }
        #expect(world.effect(try world.fcm("m101")).hasPrefix("deleted: d1 is offline and FCM already kept 100"))
        #expect(world.effect(try world.fcm("after")).hasPrefix("stored"))
        let back = try world.reply(#"{"op":"network","online":true}"#)
        #expect(world.effect(back).contains("FCM delivered 1 stored message"))
        #expect(world.effect(back).contains("discarded the 101 non-collapsible messages"))
        #expect(try world.trayBodies() == ["after"])
    }

    @Test func theClockAdvancesOnlyForwardAndEveryTimeRuleReadsIt() throws {
        let world = World()
        let start = try world.reply(#"{"op":"clock"}"#)
        #expect(start["now_ms"] == .integer(world.now) && start["advanced_ms"] == 0)
        let day = try world.reply(#"{"op":"clock","advance_ms":86400000}"#)
        #expect(day["now_ms"] == .integer(world.now + 86_400_000))
        world.now -= 10_000  // real time steps back (an NTP correction): the world's clock does not
        #expect(try world.reply(#"{"op":"clock"}"#)["now_ms"] == day["now_ms"])
        for bad in [#""advance_ms":-1"#, #""advance_ms":"5""#, #""advance_ms":1.5"#] {
            let refused = try world.reply(#"{"op":"clock",\#(bad)}"#)
            #expect(refused["ok"] == false && world.effect(refused).isEmpty)
            let error = refused["error"]?.stringValue ?? ""
            #expect(error.contains("advance_ms"))
        }
        // A retired token's 410 carries the world's time, advanced.
        world.now += 10_000
        try world.readyDevice("ios")
        let token = try #require(try world.reply(#"{"op":"state"}"#)["token"]?.stringValue)
        _ = try world.reply(#"{"op":"clock","advance_ms":5000}"#)
        _ = try world.reply(#"{"op":"uninstall"}"#)
        let gone = try world.reply(
            #"{"op":"apns","token":"\#(token)","headers":{"apns-topic":"com.example.app"},"body":{"aps":{"alert":"x"}}}"#
        )
        #expect(gone["status"] == 410 && gone["timestamp"] == .integer(world.now + 86_400_000 + 5000))
    }

    @Test func networkNeedsABooleanAndAnExistingDevice() throws {
        let world = World()
        let none = try world.reply(#"{"op":"network","online":false}"#)
        #expect(none["ok"] == false && (none["error"]?.stringValue ?? "").contains("there is no device yet"))
        _ = try world.reply(#"{"op":"device","platform":"ios"}"#)
        let bad = try world.reply(#"{"op":"network","online":"no"}"#)
        #expect(bad["ok"] == false && bad["error"] == "network needs \"online\": true or false")
        #expect(world.effect(try world.reply(#"{"op":"network","online":true}"#)) == "d1 was already online")
    }
}
