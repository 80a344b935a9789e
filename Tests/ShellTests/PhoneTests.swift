import Foundation
import OrderedJSON
import ShellKit
import Testing

/// The phone as the OS would behave (`../shared/spec/phone.md`), the rules built so far:
/// each test is named by its rule.
@Suite struct PhoneTests {
    func reply(_ session: Session, _ line: String) throws -> JSON {
        try JSON.parse(text: try #require(session.handle(line).last))
    }

    func token(_ session: Session) throws -> String {
        try #require(try reply(session, #"{"op":"state"}"#)["token"]?.stringValue)
    }

    /// A phone of `platform` whose app registered (permission granted) and then was killed.
    func registeredAndKilled(_ platform: String) throws -> (Session, String) {
        let session = Session()
        for line in [
            #"{"op":"device","platform":"\#(platform)"}"#, #"{"op":"launch"}"#,
            #"{"op":"call","plugin":"push","method":"register"}"#, #"{"op":"kill"}"#,
        ] {
            #expect(try reply(session, line)["ok"] == true, "\(line)")
        }
        return (session, try token(session))
    }

    func apns(_ session: Session, _ aps: String) throws -> JSON {
        try reply(session, #"{"op":"apns","headers":{"apns-topic":"com.example.app"},"body":{"aps":\#(aps)}}"#)
    }

    /// The seed's booking category: a foreground action, an input action, a destructive
    /// one, and a fourth that Android does not show.
    static let booking =
        #"[{"id":"booking","actions":[{"id":"accept","title":"Accept","foreground":true},{"id":"reply","title":"Reply","input":true},{"id":"decline","title":"Decline","destructive":true},{"id":"later","title":"Later"}]}]"#

    func declare(_ session: Session, _ categories: String) throws -> JSON {
        let input = JSON.string(categories).compactText
        return try reply(session, #"{"op":"call","plugin":"push","method":"categories","input":\#(input)}"#)
    }

    func categoryIDs(_ session: Session) throws -> [String] {
        try reply(session, #"{"op":"state"}"#)["categories"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
    }

    @Test func PH_1_categoriesReplaceWhatWasDeclaredAndBadInputChangesNothing() throws {
        for platform in ["ios", "android"] {
            let (session, _) = try registeredAndKilled(platform)
            _ = try reply(session, #"{"op":"launch"}"#)
            #expect(try declare(session, Self.booking)["output"] == #"{"categories":1}"#)
            // They outlive the process (the OS, or the plugin's storage, keeps them).
            _ = try reply(session, #"{"op":"kill"}"#)
            _ = try reply(session, #"{"op":"launch"}"#)
            #expect(try categoryIDs(session) == ["booking"], "\(platform)")
            let refused: [(String, String)] = [
                (#"{"id":"x"}"#, "categories' input must be a JSON array of categories"),
                ("[{", "categories' input is not JSON"),
                (#"[{"actions":[]}]"#, #"category 1 has no "id" (a non-empty string)"#),
                (#"[{"id":"a","actions":[{"title":"T"}]}]"#, #"category 'a': action 1 has no "id""#),
                (
                    #"[{"id":"a","actions":[{"id":"x","title":"1"},{"id":"x","title":"2"}]}]"#,
                    "category 'a' has two actions with the id 'x'"
                ),
                (
                    #"[{"id":"a","actions":[{"id":"1","title":"1"},{"id":"2","title":"2"},{"id":"3","title":"3"},{"id":"4","title":"4"},{"id":"5","title":"5"}]}]"#,
                    "category 'a' has 5 actions; at most 4 (iOS shows four, Android three)"
                ),
                (#"[{"id":"a"},{"id":"a"}]"#, "two categories have the id 'a'"),
                (
                    #"[{"id":"a","actions":[{"id":"x","title":"X","input":"yes"}]}]"#,
                    #"'x''s "input" must be true or false"#
                ),
            ]
            for (input, sentence) in refused {
                let answer = try declare(session, input)
                #expect(answer["ok"] == false, "\(input)")
                #expect(answer["output"]?.stringValue?.contains(sentence) == true, "\(input): \(answer)")
            }
            #expect(try categoryIDs(session) == ["booking"], "bad input changed nothing")
            #expect(try declare(session, #"[{"id":"chat"}]"#)["output"] == #"{"categories":1}"#)
            #expect(try categoryIDs(session) == ["chat"], "replaced")
            // Uninstalling forgets them.
            _ = try reply(session, #"{"op":"uninstall"}"#)
            _ = try reply(session, #"{"op":"install"}"#)
            #expect(try categoryIDs(session) == [])
        }
        let web = Session()
        _ = try reply(web, #"{"op":"device","platform":"web"}"#)
        _ = try reply(web, #"{"op":"launch"}"#)
        #expect(try declare(web, Self.booking)["ok"] == false)
    }

    @Test func PH_2_aDeclaredCategoryGivesTheTrayEntryItsActions() throws {
        let (ios, _) = try registeredAndKilled("ios")
        _ = try reply(ios, #"{"op":"launch"}"#)
        _ = try declare(ios, Self.booking)
        _ = try reply(ios, #"{"op":"kill"}"#)
        let shown = try apns(ios, #"{"alert":"Booking","category":"booking"}"#)
        #expect(
            shown["effect"]?.stringValue?.hasSuffix(
                "with the actions of category 'booking': accept, reply, decline, later (PH-2)") == true, "\(shown)")
        let undeclared = try apns(ios, #"{"alert":"Chat","category":"chat"}"#)
        #expect(
            undeclared["effect"]?.stringValue?.hasSuffix("no actions: the app declared no category 'chat' (PH-2)")
                == true)
        let entries = try #require(try reply(ios, #"{"op":"tray"}"#)["entries"]?.arrayValue)
        #expect(
            entries[0]["actions"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [
                "accept", "reply", "decline", "later",
            ])
        #expect(
            entries[0]["actions"]?.arrayValue?[1]
                == .object(JSONObject([("id", "reply"), ("title", "Reply"), ("input", true)])))
        #expect(entries[1]["actions"] == nil)

        let (android, token) = try registeredAndKilled("android")
        _ = try reply(android, #"{"op":"launch"}"#)
        _ = try declare(android, Self.booking)
        _ = try reply(android, #"{"op":"kill"}"#)
        func fcm(_ message: String) throws -> JSON {
            try reply(android, #"{"op":"fcm","body":{"message":{"token":"\#(token)",\#(message)}}}"#)
        }
        let data = try fcm(#""data":{"b":"7","mobiler_category":"booking"}"#)
        #expect(
            data["effect"]?.stringValue?.hasSuffix(
                "with the actions of category 'booking': accept, reply, decline (PH-2)") == true, "\(data)")
        let drawn = try fcm(#""notification":{"title":"N"},"data":{"mobiler_category":"booking"}"#)
        #expect(
            drawn["effect"]?.stringValue?.hasSuffix(
                "no actions: FCM draws notification messages itself, and they have none (PH-2)") == true, "\(drawn)")
        let tray = try #require(try reply(android, #"{"op":"tray"}"#)["entries"]?.arrayValue)
        #expect(tray[0]["actions"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["accept", "reply", "decline"])
        #expect(tray[1]["actions"] == nil)
    }

    @Test func PH_3_anActionOpensWithItsIDAndTextAndRunsTheAppWhereItSays() throws {
        for platform in ["ios", "android"] {
            let (session, token) = try registeredAndKilled(platform)
            _ = try reply(session, #"{"op":"launch"}"#)
            _ = try declare(session, Self.booking)
            _ = try reply(session, #"{"op":"kill"}"#)
            for n in 1...3 {
                _ =
                    platform == "ios"
                    ? try apns(
                        session, #"{"alert":"Booking \#(n)","category":"booking"},"n":\#(n),"mobiler_action":"forged""#)
                    : try reply(
                        session,
                        #"{"op":"fcm","body":{"message":{"token":"\#(token)","data":{"n":"\#(n)","mobiler_category":"booking","mobiler_input":"forged"}}}}"#
                    )
            }
            // Bad input changes nothing: the entry stays, the app does not start.
            let bad: [(String, String)] = [
                (
                    #""which":"t1","action":"nope""#,
                    "tray entry t1 has no action 'nope'; its actions are accept, reply, decline"
                ),
                (#""which":"t1","action":"reply""#, #"'reply' is an input action: give the user's "text""#),
                (
                    #""which":"t1","action":"decline","text":"x""#,
                    #"'decline' is not an input action, so it takes no "text""#
                ),
                (#""which":"t1","text":"x""#, #""text" goes with an input action; give "action" too"#),
            ]
            for (fields, sentence) in bad {
                let answer = try reply(session, #"{"op":"tap",\#(fields)}"#)
                #expect(answer["error"]?.stringValue?.hasPrefix(sentence) == true, "\(platform) \(fields): \(answer)")
            }
            #expect(try reply(session, #"{"op":"tray"}"#)["entries"]?.arrayValue?.count == 3)
            #expect(try reply(session, #"{"op":"state"}"#)["state"] == "not_running")
            // A background action: the app runs in the background; the event waits (TAP-2).
            let declined = try reply(session, #"{"op":"tap","which":"t1","action":"decline"}"#)
            #expect(declined["effect"]?.stringValue?.contains("the app is in the background") == true, "\(declined)")
            _ = try reply(session, #"{"op":"tap","which":"t2","action":"reply","text":"on my way"}"#)
            #expect(try reply(session, #"{"op":"state"}"#)["state"] == "background")
            #expect(try reply(session, #"{"op":"state"}"#)["buffered"] == 2)
            // A foreground action brings the app forward, as a tap does.
            _ = try reply(session, #"{"op":"tap","which":"t3","action":"accept"}"#)
            #expect(try reply(session, #"{"op":"state"}"#)["state"] == "foreground")
            let flushed = session.handle(#"{"op":"subscribe","key":"push","plugin":"push","stream":"events"}"#)
            let events = flushed.compactMap { line in
                (try? JSON.parse(text: line))?["output"]?.stringValue
            }
            let body = platform == "ios" ? #","body":"Booking N""# : ""
            let n = { (i: Int) in platform == "ios" ? "\(i)" : #""\#(i)""# }
            let category = platform == "ios" ? "" : #","mobiler_category":"booking""#
            func event(_ i: Int, _ rest: String) -> String {
                #"{"n":\#(n(i))\#(category)\#(body.replacingOccurrences(of: "N", with: "\(i)")),\#(rest),"mobiler_push":"opened"}"#
            }
            #expect(
                events == [
                    event(1, #""mobiler_action":"decline""#),
                    event(2, #""mobiler_action":"reply","mobiler_input":"on my way""#),
                    event(3, #""mobiler_action":"accept""#),
                ], "\(platform): \(flushed)")
        }
    }

    @Test func PH_4_dismissingRemovesTheEntryAndDeliversNothing() throws {
        let (session, _) = try registeredAndKilled("ios")
        _ = try apns(session, #"{"alert":"one"}"#)
        _ = try apns(session, #"{"alert":"two"}"#)
        let output = session.handle(#"{"op":"dismiss","which":"t1"}"#)
        #expect(output.count == 1, "no delivery: \(output)")
        let dismissed = try JSON.parse(text: try #require(output.last))
        #expect(dismissed["id"] == "t1" && dismissed["effect"] == "dismissed: the entry left the tray; no event")
        #expect(try reply(session, #"{"op":"tray"}"#)["entries"]?.arrayValue?.map { $0["id"] } == ["t2"])
        // The app never heard of it: launching delivers no opened event.
        #expect(try reply(session, #"{"op":"state"}"#)["buffered"] == 0)
        // Bad input: a missing entry, an empty tray; nothing changes.
        let missing = try reply(session, #"{"op":"dismiss","which":"t9"}"#)
        #expect(missing["error"] == "no tray entry has id 't9'; the tray has t2 (or use newest / oldest)")
        _ = try reply(session, #"{"op":"dismiss","which":"newest"}"#)
        #expect(
            try reply(session, #"{"op":"dismiss","which":"newest"}"#)["error"]
                == "the tray is empty: there is nothing to dismiss")
    }

    @Test func PH_5_theBadgeIsAPSBadgeOnIOSAndTheTrayOrNotificationCountOnAndroid() throws {
        let (ios, _) = try registeredAndKilled("ios")
        _ = try apns(ios, #"{"alert":"x","badge":7}"#)
        #expect(try reply(ios, #"{"op":"state"}"#)["badge"] == 7)
        _ = try apns(ios, #"{"content-available":1,"badge":0}"#)  // any push, any state: 0 clears it
        #expect(try reply(ios, #"{"op":"state"}"#)["badge"] == 0)
        // Not allowed: the badge is not set.
        _ = try reply(ios, #"{"op":"permission","answer":"deny"}"#)
        _ = try apns(ios, #"{"alert":"y","badge":3}"#)
        #expect(try reply(ios, #"{"op":"state"}"#)["badge"] == 0)

        let (android, token) = try registeredAndKilled("android")
        func notify(_ extra: String) throws -> JSON {
            try reply(
                android, #"{"op":"fcm","body":{"message":{"token":"\#(token)","notification":{"title":"t"}\#(extra)}}}"#
            )
        }
        _ = try notify("")
        _ = try notify("")
        #expect(try reply(android, #"{"op":"state"}"#)["badge"] == 2)  // the tray's entries
        _ = try notify(#","android":{"notification":{"notification_count":5}}"#)
        #expect(try reply(android, #"{"op":"state"}"#)["badge"] == 5)
        let bad = try notify(#","android":{"notification":{"notification_count":"many"}}"#)
        #expect(bad["ok"] == false && bad["error"]?["status"] == "INVALID_ARGUMENT", "\(bad)")
    }

    /// An Android phone whose app (with `options`) ran once and was killed; its token.
    func androidApp(_ session: Session, _ options: String = "") throws -> String {
        for line in [
            #"{"op":"device","platform":"android"\#(options)}"#, #"{"op":"launch"}"#,
            #"{"op":"call","plugin":"push","method":"register"}"#, #"{"op":"kill"}"#,
        ] {
            #expect(try reply(session, line)["ok"] == true, "\(line)")
        }
        return try token(session)
    }

    @Test func PH_6_notificationsGoToTheirChannelWithTheirIconAndAChannelTurnedOffShowsNothing() throws {
        let session = Session()
        let token = try androidApp(
            session, #","resources":{"mobiler_push_channel_name":"Bookings","mobiler_push_icon":true}"#)
        #expect(
            try reply(session, #"{"op":"state"}"#)["notification_channels"]
                == .array([.object(JSONObject([("id", "mobiler_push"), ("name", "Bookings"), ("enabled", true)]))]))
        func send(_ message: String) throws -> JSON {
            try reply(session, #"{"op":"fcm","body":{"message":{"token":"\#(token)",\#(message)}}}"#)
        }
        func last() throws -> [String: String] {
            let entry = try #require(try reply(session, #"{"op":"tray","detail":true}"#)["entries"]?.arrayValue?.last)
            return ["channel": entry["channel"]?.stringValue ?? "null", "icon": entry["icon"]?.stringValue ?? "null"]
        }
        _ = try send(#""data":{"body":"plugin"}"#)
        #expect(try last() == ["channel": "mobiler_push", "icon": "mobiler_push_icon"])
        _ = try send(#""notification":{"title":"ours"},"android":{"notification":{"channel_id":"mobiler_push"}}"#)
        #expect(try last() == ["channel": "mobiler_push", "icon": "ic_launcher"])
        _ = try send(
            #""notification":{"title":"x"},"android":{"notification":{"channel_id":"nope","icon":"ic_stat"}}"#)
        #expect(try last() == ["channel": "fcm_fallback_notification_channel", "icon": "ic_stat"])
        #expect(
            try reply(session, #"{"op":"state"}"#)["notification_channels"]?.arrayValue?.map { $0["name"] }
                == ["Bookings", "Miscellaneous"])
        // The user turns the plugin's channel off: nothing it posts shows, and nothing else changes.
        let off = try reply(session, #"{"op":"channel","channel":"mobiler_push","enabled":false}"#)
        #expect(off["channel"]?["enabled"] == false, "\(off)")
        let entries = try reply(session, #"{"op":"tray"}"#)["entries"]
        let blocked = try send(#""data":{"body":"hidden"}"#)
        #expect(
            blocked["effect"]?.stringValue?.hasSuffix(
                "not shown: the user turned off its channel 'mobiler_push' (PH-6); no event until it is tapped (DEL-3)")
                == true,
            "\(blocked)")
        #expect(
            try send(#""notification":{"title":"y"},"android":{"notification":{"channel_id":"mobiler_push"}}"#)[
                "effect"]
                == "displayed by FCM on channel 'mobiler_push', which the user turned off: not shown (PH-6)")
        #expect(try reply(session, #"{"op":"tray"}"#)["entries"] == entries)
        // onMessageReceived and the foreground event are unaffected.
        _ = try reply(session, #"{"op":"launch"}"#)
        _ = try reply(session, #"{"op":"subscribe","key":"push","plugin":"push","stream":"events"}"#)
        let live = session.handle(#"{"op":"fcm","body":{"message":{"token":"\#(token)","data":{"body":"live"}}}}"#)
        #expect(live.contains { $0.contains(#"\"body\":\"live\",\"mobiler_push\":\"received\""#) }, "\(live)")
        // An app's meta-data: its default channel (when created) and default icon.
        let other = Session()
        let second = try androidApp(
            other, #","resources":{"default_notification_channel_id":"mobiler_push","default_notification_icon":true}"#)
        _ = try reply(other, #"{"op":"fcm","body":{"message":{"token":"\#(second)","notification":{"title":"m"}}}}"#)
        let entry = try #require(try reply(other, #"{"op":"tray","detail":true}"#)["entries"]?.arrayValue?.first)
        #expect(entry["channel"] == "mobiler_push" && entry["icon"] == "default_notification_icon", "\(entry)")
        #expect(
            try reply(other, #"{"op":"state"}"#)["notification_channels"]?.arrayValue?.first?["name"] == "Notifications"
        )
        // Bad input changes nothing.
        #expect(
            try reply(session, #"{"op":"channel","channel":"news","enabled":false}"#)["error"]
                == "the app has no notification channel 'news'; it has mobiler_push, fcm_fallback_notification_channel")
        #expect(
            try reply(session, #"{"op":"device","platform":"android","resources":{"app_name":"x"}}"#)["error"]?
                .stringValue?
                .hasPrefix(#""resources" has no 'app_name'"#) == true)
        #expect(
            try reply(session, #"{"op":"device","platform":"ios","resources":{}}"#)["error"]?.stringValue?.hasPrefix(
                #""resources" are an Android app's"#) == true)
        _ = try reply(session, #"{"op":"device","platform":"ios"}"#)
        #expect(
            try reply(session, #"{"op":"channel","channel":"mobiler_push","enabled":false}"#)["error"]
                == "notification channels are Android's; a ios device has none")
    }

    @Test func PH_7_belowAPI26ThereAreNoChannelsAndEveryNotificationShows() throws {
        let session = Session()
        let token = try androidApp(session, #","android_api":25"#)
        #expect(try reply(session, #"{"op":"state"}"#)["notification_channels"] == nil)
        let shown = try reply(
            session,
            #"{"op":"fcm","body":{"message":{"token":"\#(token)","notification":{"title":"t"},"android":{"notification":{"channel_id":"nope"}}}}}"#
        )
        #expect(shown["tray_id"] == "t1", "\(shown)")
        #expect(try reply(session, #"{"op":"tray","detail":true}"#)["entries"]?.arrayValue?.first?["channel"] == .null)
        #expect(
            try reply(session, #"{"op":"channel","channel":"mobiler_push","enabled":false}"#)["error"]
                == "this phone runs API 25; notification channels came with Android 8.0 (API 26)")
    }

    @Test func PH_7_belowAPI33NotificationsAreGrantedAtInstallAndNothingAsks() throws {
        let session = Session()
        let old = try reply(session, #"{"op":"device","platform":"android","android_api":32}"#)
        #expect(old["ok"] == true)
        #expect(try reply(session, #"{"op":"state"}"#)["permission"] == "granted")
        #expect(try reply(session, #"{"op":"state"}"#)["android_api"] == 32)
        // Never launched, never asked: a notification message is shown all the same.
        let token = try token(session)
        let shown = try reply(
            session, #"{"op":"fcm","body":{"message":{"token":"\#(token)","notification":{"title":"hi"}}}}"#)
        #expect(shown["effect"]?.stringValue?.hasPrefix("displayed by FCM") == true, "\(shown)")
        // A reinstall grants again; API 33 and later ask first, as before.
        _ = try reply(session, #"{"op":"uninstall"}"#)
        _ = try reply(session, #"{"op":"install"}"#)
        #expect(try reply(session, #"{"op":"state"}"#)["permission"] == "granted")
        _ = try reply(session, #"{"op":"device","platform":"android"}"#)
        #expect(try reply(session, #"{"op":"state"}"#)["permission"] == "undetermined")
        #expect(try reply(session, #"{"op":"state"}"#)["android_api"] == 34)
        // Bad input changes nothing.
        #expect(
            try reply(session, #"{"op":"device","platform":"ios","android_api":30}"#)["error"]
                == #""android_api" is an Android phone's API level; a ios device has none"#)
        #expect(
            try reply(session, #"{"op":"device","platform":"android","android_api":12}"#)["error"]
                == #""android_api" must be an API level from 21 to 35, not 12"#)
        #expect(try reply(session, #"{"op":"devices"}"#)["devices"]?.arrayValue?.count == 2)
    }

    @Test func PH_8_underFocusOnlyTimeSensitiveAndCriticalAlertsTheAppMaySendAreBanners() throws {
        let session = Session()
        for line in [
            #"{"op":"device","platform":"ios","capabilities":["time-sensitive"]}"#, #"{"op":"launch"}"#,
            #"{"op":"call","plugin":"push","method":"register"}"#, #"{"op":"kill"}"#,
        ] {
            #expect(try reply(session, line)["ok"] == true, "\(line)")
        }
        func send(_ level: String) throws -> String {
            try apns(session, #"{"alert":"\#(level)","interruption-level":"\#(level)"}"#)["effect"]?.stringValue ?? ""
        }
        func presented() throws -> [String] {
            try reply(session, #"{"op":"tray"}"#)["entries"]?.arrayValue?.compactMap { $0["presented"]?.stringValue }
                ?? []
        }
        // No Focus: banners, but passive is always quiet.
        #expect(try send("active").hasSuffix("(DEL-2)"))
        #expect(try send("passive").hasSuffix("its interruption level is passive (PH-8)"))
        let focused = try reply(session, #"{"op":"focus","on":true}"#)
        #expect(
            focused["focus"] == true
                && focused["effect"]?.stringValue?.contains("only time-sensitive alerts of this app") == true)
        #expect(try send("active").hasSuffix("Focus is on and the push is active (PH-8)"))
        #expect(try send("time-sensitive").hasSuffix("presented as a banner through Focus: time-sensitive (PH-8)"))
        // Critical without the entitlement is active, and so quiet under Focus.
        #expect(try send("critical").hasSuffix("Focus is on and the push is active (PH-8)"))
        #expect(try presented() == ["banner", "quiet", "quiet", "banner", "quiet"])
        #expect(try reply(session, #"{"op":"state"}"#)["focus"] == true)
        // With the entitlement a critical alert breaks through; without Time Sensitive it does not.
        for line in [
            #"{"op":"device","platform":"ios","capabilities":["critical-alerts"]}"#, #"{"op":"launch"}"#,
            #"{"op":"call","plugin":"push","method":"register"}"#, #"{"op":"kill"}"#, #"{"op":"focus","on":true}"#,
        ] {
            #expect(try reply(session, line)["ok"] == true, "\(line)")
        }
        #expect(try send("critical").hasSuffix("a critical alert (PH-8)"))
        #expect(try send("time-sensitive").hasSuffix("the app lacks the Time Sensitive capability (PH-8)"))
        // The core's events do not change: in the foreground it is received as ever.
        _ = try reply(session, #"{"op":"launch"}"#)
        _ = try reply(session, #"{"op":"subscribe","key":"push","plugin":"push","stream":"events"}"#)
        let live = session.handle(
            #"{"op":"apns","headers":{"apns-topic":"com.example.app"},"body":{"aps":{"alert":"x","interruption-level":"passive"}}}"#
        )
        #expect(live.contains { $0.contains(#"\"body\":\"x\",\"mobiler_push\":\"received\""#) }, "\(live)")
        // Bad input changes nothing.
        #expect(
            try reply(session, #"{"op":"device","platform":"android","capabilities":["time-sensitive"]}"#)["error"]?
                .stringValue?.hasPrefix(#""capabilities" are an iOS app's"#) == true)
        #expect(
            try reply(session, #"{"op":"device","platform":"ios","capabilities":["loud"]}"#)["error"]
                == #""capabilities" must be an array of "time-sensitive", "critical-alerts", not ["loud"]"#)
        _ = try reply(session, #"{"op":"device","platform":"android"}"#)
        #expect(
            try reply(session, #"{"op":"focus","on":true}"#)["error"]
                == "focus is iOS's Focus; a android device has none here")
    }

    @Test func PH_9_dozeHoldsNormalPriorityUntilAMaintenanceWindowOrItsEnd() throws {
        let (session, token) = try registeredAndKilled("android")
        #expect(try reply(session, #"{"op":"idle","on":true}"#)["idle"] == true)
        func send(_ priority: String, _ n: String) throws -> String {
            try reply(
                session,
                #"{"op":"fcm","body":{"message":{"token":"\#(token)","data":{"n":"\#(n)"},"android":{"priority":"\#(priority)"}}}}"#
            )["effect"]?.stringValue ?? ""
        }
        #expect(try !send("high", "0").hasPrefix("held"))  // high priority: at once
        #expect(try send("normal", "1").hasPrefix("held: d1 is in Doze"))
        #expect(try send("normal", "2").hasPrefix("held"))
        // 14 minutes: no window yet; 15: the first one opens and hands both over, in order.
        #expect(try reply(session, #"{"op":"clock","advance_ms":840000}"#)["effect"] == nil)
        let window = try reply(session, #"{"op":"clock","advance_ms":60000}"#)
        #expect(
            window["effect"]?.stringValue?.hasPrefix("a maintenance window opened: d1 got the 2 messages FCM held")
                == true, "\(window)")
        // The next window is 30 minutes later; waking hands over at once, after a restart too.
        #expect(try send("normal", "3").contains("waits for the next maintenance window"))
        let restarted = Session()
        try restarted.restore(snapshot: session.snapshot())
        #expect(try reply(restarted, #"{"op":"state"}"#)["idle"] == true)
        let woke = try reply(restarted, #"{"op":"idle","on":false}"#)
        #expect(
            woke["effect"]?.stringValue?.hasPrefix("d1 is awake; Doze ended: d1 got the 1 message FCM held") == true,
            "\(woke)")
        #expect(try reply(restarted, #"{"op":"state"}"#)["idle"] == false)
        #expect(
            try reply(session, #"{"op":"device","platform":"ios"}"#)["ok"] == true
                && reply(session, #"{"op":"idle","on":true}"#)["error"]
                    == "idle is Android's Doze; a ios device has none (iOS's is low_power)"
        )
    }

    @Test func PH_10_lowPowerHoldsPriorityFivePushesNewestPerCollapseIDUntilItEnds() throws {
        let (session, _) = try registeredAndKilled("ios")
        #expect(try reply(session, #"{"op":"low_power","on":true}"#)["low_power"] == true)
        #expect(try reply(session, #"{"op":"state"}"#)["low_power"] == true)
        func push(_ priority: Int, _ alert: String, collapse: String? = nil) throws -> String {
            let collapseHeader = collapse.map { #","apns-collapse-id":"\#($0)""# } ?? ""
            return try reply(
                session,
                #"{"op":"apns","headers":{"apns-topic":"com.example.app","apns-priority":"\#(priority)"\#(collapseHeader)},"body":{"aps":{"alert":"\#(alert)"}}}"#
            )["effect"]?.stringValue ?? ""
        }
        #expect(try push(10, "now").hasPrefix("shown in the tray"))
        #expect(try push(5, "score 1-0", collapse: "score").hasPrefix("held: d1 is in Low Power Mode"))
        #expect(try push(5, "later").hasPrefix("held"))
        #expect(
            try push(5, "score 2-0", collapse: "score").contains("replaced the one held with the same apns-collapse-id")
        )
        #expect(try reply(session, #"{"op":"tray"}"#)["entries"]?.arrayValue?.map { $0["body"] } == ["now"])
        // Its state survives a restart of the world.
        let restarted = Session()
        try restarted.restore(snapshot: session.snapshot())
        let off = try reply(restarted, #"{"op":"low_power","on":false}"#)
        #expect(
            off["effect"]?.stringValue?.hasPrefix("d1 is out of Low Power Mode; iOS handed over the 2 pushes it held")
                == true, "\(off)")
        #expect(
            try reply(restarted, #"{"op":"tray"}"#)["entries"]?.arrayValue?.map { $0["body"] } == [
                "now", "later", "score 2-0",
            ])
        // Android has no Low Power Mode of this kind: refused, nothing changes.
        let android = Session()
        _ = try reply(android, #"{"op":"device","platform":"android"}"#)
        #expect(
            try reply(android, #"{"op":"low_power","on":true}"#)["error"]
                == "low_power is iOS's Low Power Mode; a android device has none (Android's is idle, Doze)")
    }

    @Test func PH_11_backgroundPushesWakeTheAppThreeTimesAnHourThenOnlyTheNewestWaits() throws {
        let session = Session()
        for line in [
            #"{"op":"device","platform":"ios"}"#, #"{"op":"launch"}"#, #"{"op":"background"}"#,
        ] {
            _ = try reply(session, line)
        }
        func wake(_ n: Int) throws -> String {
            try reply(
                session,
                #"{"op":"apns","headers":{"apns-topic":"com.example.app","apns-push-type":"background","apns-priority":"5"},"body":{"aps":{"content-available":1},"n":\#(n)}}"#
            )["effect"]?.stringValue ?? ""
        }
        for n in 1...3 { #expect(try wake(n).hasPrefix("delivered to the app in the background"), "\(n)") }
        #expect(try wake(4).hasPrefix("throttled: d1's app was woken 3 times in the last hour"))
        #expect(try wake(5).contains("this one replaces the one it kept"))
        // 59 minutes: still no slot; at the hour, the newest (5) is handed over, and only it.
        #expect(try reply(session, #"{"op":"clock","advance_ms":3540000}"#)["effect"] == nil)
        let freed = try reply(session, #"{"op":"clock","advance_ms":60000}"#)
        #expect(
            freed["effect"]?.stringValue?.hasPrefix(
                "d1: the hour freed a slot, and iOS handed over the throttled background push: delivered to the app in the background"
            ) == true,
            "\(freed)")
        // In the foreground there is no budget; a bad budget option is refused.
        _ = try reply(session, #"{"op":"foreground"}"#)
        for n in 6...10 { #expect(try !wake(n).hasPrefix("throttled")) }
        #expect(
            try reply(session, #"{"op":"device","platform":"ios","background_pushes_per_hour":0}"#)["error"]
                == #""background_pushes_per_hour" must be a whole number from 1 to 100, not 0"#)
    }

    @Test func PH_12_anFCMTokenUnseenFor270DaysExpiresAndTheAppGetsANewOneWhenBack() throws {
        let session = Session()
        for line in [
            #"{"op":"device","platform":"android"}"#, #"{"op":"launch"}"#,
            #"{"op":"call","plugin":"push","method":"register"}"#,
            #"{"op":"subscribe","key":"push","plugin":"push","stream":"events"}"#,
            #"{"op":"network","online":false}"#,
        ] {
            _ = try reply(session, line)
        }
        let old = try token(session)
        let send = #"{"op":"fcm","body":{"message":{"token":"\#(old)","data":{"a":"1"}}}}"#
        _ = try reply(session, #"{"op":"clock","advance_ms":\#(269 * 24 * 3600 * 1000)}"#)
        #expect(try reply(session, send)["effect"]?.stringValue?.hasPrefix("stored") == true)  // day 269: kept
        _ = try reply(session, #"{"op":"clock","advance_ms":\#(24 * 3600 * 1000)}"#)
        let expired = try reply(session, send)  // day 270: expired
        #expect(
            expired["ok"] == false && expired["error"]?["details"]?.arrayValue?.first?["errorCode"] == "UNREGISTERED",
            "\(expired)")
        let back = session.handle(#"{"op":"network","online":true}"#)
        let effect = try JSON.parse(text: try #require(back.last))["effect"]?.stringValue ?? ""
        #expect(effect.contains("its FCM token had expired"), "\(effect)")
        let new = try token(session)
        #expect(new != old)
        // The app heard of its new token (TOK-2): a token_refresh event.
        #expect(back.contains { $0.contains("token_refresh") && $0.contains(new) }, "\(back)")
        #expect(try reply(session, send)["error"]?["details"]?.arrayValue?.first?["errorCode"] == "UNREGISTERED")
        #expect(
            try reply(session, #"{"op":"fcm","body":{"message":{"token":"\#(new)","data":{"a":"2"}}}}"#)["ok"] == true)
    }

    @Test func PH_13_aRestoredPhoneHasTheAppAndPermissionButNewTokens() throws {
        let (session, old) = try registeredAndKilled("ios")
        let restored = try reply(session, #"{"op":"restore","from":"d1"}"#)
        #expect(restored["device"] == "d2" && restored["from"] == "d1", "\(restored)")
        let new = try #require(restored["token"]?.stringValue)
        #expect(new != old)
        let state = try reply(session, #"{"op":"state","device":"d2"}"#)
        #expect(state["permission"] == "granted" && state["state"] == "not_running" && state["installed"] == true)
        // d1 is unchanged, and its token still reaches it.
        #expect(try reply(session, #"{"op":"state","device":"d1"}"#)["token"]?.stringValue == old)
        let push = try reply(
            session,
            #"{"op":"apns","token":"\#(old)","headers":{"apns-topic":"com.example.app"},"body":{"aps":{"alert":"x"}}}"#)
        #expect(push["device"] == "d1", "\(push)")
        let missing = try reply(session, #"{"op":"restore","from":"d9"}"#)
        #expect(missing["error"] == "there is no device 'd9' to restore from; the devices are: d1, d2")
        #expect(try reply(session, #"{"op":"devices"}"#)["devices"]?.arrayValue?.count == 2)
    }

    @Test func PH_14_aReinstallGetsANewTokenAndTheOldOneIsUnregistered() throws {
        /// Uninstalls, installs and registers again: the token before.
        func reinstalled(_ platform: String) throws -> (Session, String) {
            let (session, old) = try registeredAndKilled(platform)
            for line in [
                #"{"op":"uninstall"}"#, #"{"op":"install"}"#, #"{"op":"launch"}"#,
                #"{"op":"call","plugin":"push","method":"register"}"#,
            ] {
                _ = try reply(session, line)
            }
            #expect(try token(session) != old)
            return (session, old)
        }
        let (ios, old) = try reinstalled("ios")
        let stale = try reply(
            ios, #"{"op":"apns","token":"\#(old)","headers":{"apns-topic":"com.example.app"},"body":{"aps":{}}}"#)
        #expect(stale["status"] == 410 && stale["reason"] == "Unregistered" && stale["timestamp"] != nil, "\(stale)")

        let (android, oldFCM) = try reinstalled("android")
        let gone = try reply(android, #"{"op":"fcm","body":{"message":{"token":"\#(oldFCM)","data":{"a":"1"}}}}"#)
        #expect(
            gone["error"]?["code"] == 404
                && gone["error"]?["details"]?.arrayValue?.first?["errorCode"] == "UNREGISTERED")
    }

    @Test func PH_15_anAPNsEntryIsASimctlFile() throws {
        let shell = try FrontDoorTests.Shell()
        let api = InspectorTests()
        let device = try #require(try api.devices(shell, 1).first)
        #expect(try api.push(shell, device.token, "to the simulator").contains("HTTP/2 200"))
        let entries = try api.call(shell, "GET", "/api/v1/log?source=apns").json?["entries"]?.arrayValue ?? []
        let seq = try #require(entries.last?["seq"]?.integerValue)
        let file = try api.call(shell, "GET", "/api/v1/log/\(seq)/simctl")
        #expect(file.status == 200)
        #expect(
            file.json
                == .object(
                    JSONObject([
                        ("aps", .object(JSONObject([("alert", "to the simulator")]))),
                        ("Simulator Target Bundle", "com.example.app"),
                    ])), "\(file.text)")
        // The line protocol's apns op is an APNs request too; anything else is 404.
        _ = try api.call(
            shell, "POST", "/api/v1/requests",
            json:
                #"{"op":"apns","device":"d1","headers":{"apns-topic":"com.example.other"},"body":{"aps":{"badge":1}}}"#)
        let last = try #require(try api.call(shell, "GET", "/api/v1/world").json?["log"]?["next_seq"]?.integerValue) - 1
        #expect(
            try api.call(shell, "GET", "/api/v1/log/\(last)/simctl").json?["Simulator Target Bundle"]
                == "com.example.other")
        let notAPNs = try api.call(shell, "GET", "/api/v1/log/1/simctl")
        #expect(
            notAPNs.status == 404 && notAPNs.json?["error"] == "log entry 1 is not an APNs request (it came by api)")
        #expect(try api.call(shell, "GET", "/api/v1/log/999/simctl").status == 404)
        #expect(shell.stop() == 0)
    }

    func trayIDs(_ session: Session) throws -> [String] {
        try reply(session, #"{"op":"tray"}"#)["entries"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
    }

    @Test func aFullAndroidTrayRefusesANewNotificationButNotAReplacementAndTheAppStillRuns() throws {
        let session = Session()
        let token = try androidApp(session)
        #expect(try reply(session, #"{"op":"state"}"#)["tray_limit"] == 50)
        func notify(_ tag: String = "") throws -> JSON {
            let android = tag.isEmpty ? "" : #","android":{"notification":{"tag":"\#(tag)"}}"#
            return try reply(
                session,
                #"{"op":"fcm","body":{"message":{"token":"\#(token)","notification":{"title":"t"}\#(android)}}}"#)
        }
        #expect(try notify("score")["tray_id"] == "t1")
        for _ in 2...50 { _ = try notify() }
        #expect(try trayIDs(session) == (1...50).map { "t\($0)" })
        let refused = try notify()
        #expect(refused["ok"] == true && refused["tray_id"] == nil)
        #expect(
            refused["effect"]
                == "displayed by FCM: not shown: the app already has 50 notifications in the tray, the most this phone keeps for one app (Android refuses more; device option tray_limit); its tap carries the data keys only, no event until then (DEL-3)"
        )
        // A replacement is not a new notification: it is shown, and becomes the newest.
        let replaced = try notify("score")
        #expect(replaced["tray_id"] == "t1", "\(replaced)")
        #expect(try trayIDs(session) == (2...50).map { "t\($0)" } + ["t1"])
        // A data message still runs the app, in the foreground too; only the post is refused.
        _ = try reply(session, #"{"op":"launch"}"#)
        let data = try reply(session, #"{"op":"fcm","body":{"message":{"token":"\#(token)","data":{"a":"1"}}}}"#)
        #expect(
            data["effect"]?.stringValue?.hasPrefix("onMessageReceived ran with no events subscriber") == true
                && data["effect"]?.stringValue?.hasSuffix(
                    "and not shown: the app already has 50 notifications in the tray, the most this phone keeps for one app (Android refuses more; device option tray_limit)"
                ) == true, "\(data)")
        // Room again once the user clears one.
        _ = try reply(session, #"{"op":"dismiss","which":"oldest"}"#)
        #expect(try notify()["tray_id"] == "t51")
    }

    @Test func aFullIOSTrayLetsTheOldestGoAndTheLimitIsADeviceOption() throws {
        let session = Session()
        for line in [
            #"{"op":"device","platform":"ios","tray_limit":3}"#, #"{"op":"launch"}"#,
            #"{"op":"call","plugin":"push","method":"register"}"#, #"{"op":"kill"}"#,
        ] {
            #expect(try reply(session, line)["ok"] == true, "\(line)")
        }
        #expect(try reply(session, #"{"op":"state"}"#)["tray_limit"] == 3)
        for text in ["one", "two", "three"] { _ = try apns(session, #"{"alert":"\#(text)"}"#) }
        let fourth = try apns(session, #"{"alert":"four"}"#)
        #expect(fourth["tray_id"] == "t4")
        #expect(
            fourth["effect"]
                == "shown in the tray as t4; the oldest entry, t1, left the tray, which keeps 3 for one app (device option tray_limit) (the app is not running); no event until it is tapped (DEL-2)"
        )
        #expect(try trayIDs(session) == ["t2", "t3", "t4"])
        // The oldest left is t2 now: t1 is gone for taps too.
        #expect(try reply(session, #"{"op":"tap","which":"oldest"}"#)["id"] == "t2")
        #expect(
            try reply(session, #"{"op":"tap","which":"t1"}"#)["error"]?.stringValue?.hasPrefix(
                "no tray entry has id 't1'") == true)
        #expect(try trayIDs(session) == ["t3", "t4"])

        // iOS's default, and bad values, which make no device.
        let other = Session()
        _ = try reply(other, #"{"op":"device","platform":"ios"}"#)
        #expect(try reply(other, #"{"op":"state"}"#)["tray_limit"] == 64)
        for bad in ["0", "1001", #""many""#, "2.5"] {
            let refused = try reply(other, #"{"op":"device","platform":"web","tray_limit":\#(bad)}"#)
            #expect(
                refused["error"]?.stringValue == "\"tray_limit\" must be a whole number from 1 to 1000, not \(bad)",
                "\(refused)")
        }
        #expect(try reply(other, #"{"op":"devices"}"#)["devices"]?.arrayValue?.count == 1)
    }
}
