import CXHost
import OrderedJSON
import PushPlugin
import Testing

let alert = #"{"aps":{"alert":{"title":"New booking","body":"hi"},"sound":"default"},"booking_id":"01J"}"#

@Suite struct EventTests {
    @Test func EV_1_EV_2_aNotificationEventIsThePayloadWithMobilerPushLast() throws {
        let app = try App()
        try app.subscribe()
        _ = app.ios.willPresent(notification("n1", alert))
        #expect(app.events() == [#"{"booking_id":"01J","title":"New booking","body":"hi","mobiler_push":"received"}"#])
    }

    @Test func EV_3_aRotationIsTokenRefreshWithoutMobilerPush() throws {
        let app = try App(platform: .android)
        _ = try app.register()
        try app.subscribe()
        app.android.onNewToken("rotated")
        #expect(app.events() == [#"{"type":"token_refresh","token":"rotated"}"#])
    }

    @Test func EV_4_nothingArrivesAfterUnsubscribe() throws {
        let app = try App()
        try app.subscribe()
        app.host.unsubscribe(key: "push")
        _ = app.ios.willPresent(notification("n1", alert))
        app.ios.didReceive(response: notification("n2", alert), actionIdentifier: IOSPushBridge.defaultActionIdentifier)
        #expect(app.events().isEmpty)
        // The tap went to the buffer instead (TAP-2) and waits for the next subscriber.
        #expect(app.plugin.diagnostics.buffered == 1)
    }

    @Test func EV_5_subscribingAgainWithTheKeyReplacesTheSubscription() throws {
        let app = try App()
        try app.subscribe()
        try app.subscribe()
        // The plugin let the first subscription go (a plugin that ignored stopStream
        // would still hold it, and emit into it).
        #expect(app.plugin.diagnostics.liveSubscribers == 1)
        _ = app.ios.willPresent(notification("n1", alert))
        #expect(app.events().count == 1)
    }

    @Test func EV_6_everyLiveEventGoesToEachKeyAndTheBufferToTheFirstOnly() throws {
        let app = try App()
        app.ios.didReceive(
            response: notification("tap", alert), actionIdentifier: IOSPushBridge.defaultActionIdentifier)
        try app.subscribe("first")
        try app.subscribe("second")
        _ = app.ios.willPresent(notification("live", #"{"n":1,"aps":{"alert":"x"}}"#))
        #expect(app.events("first").map { $0.contains("opened") } == [true, false])
        #expect(app.events("second") == [#"{"n":1,"body":"x","mobiler_push":"received"}"#])
        let order = app.deliveries.compactMap { if case .item(let key, _) = $0 { key } else { nil } }
        #expect(order == ["first", "first", "second"])
    }

    @Test func EV_7_webAcceptsTheSubscriptionAndNeverEmits() throws {
        let app = try App(platform: .web)
        try app.subscribe()
        _ = try app.register()
        // Whatever a (misbehaving) shell forwards, the web plugin emits nothing.
        _ = app.ios.willPresent(notification("n1", alert))
        tap(app, "n2", alert)
        app.ios.didRegisterForRemoteNotifications(deviceToken: [0x01])
        app.android.onMessageReceived(RemoteMessage(messageID: "m", data: stringMap(#"{"k":"v"}"#)))
        #expect(app.events().isEmpty)
        #expect(app.plugin.diagnostics.buffered == 0)
        #expect(app.deliveries.allSatisfy { if case .end = $0 { false } else { true } })
    }

    @Test func DEL_1_aForegroundAlertIsReceivedOnceEvenWhenIOSReportsItTwice() throws {
        let app = try App()
        try app.subscribe()
        let push = #"{"aps":{"alert":"hi","content-available":1},"k":"v"}"#
        let options = app.ios.willPresent(notification("n", push))
        app.ios.didReceiveRemoteNotification(userInfo: object(push))
        #expect(options.contains(.banner))
        #expect(app.events() == [#"{"k":"v","body":"hi","mobiler_push":"received"}"#])
    }

    @Test func DEL_1_aBackgroundPushInTheForegroundIsReceived() throws {
        let app = try App()
        try app.subscribe()
        app.ios.didReceiveRemoteNotification(userInfo: object(#"{"aps":{"content-available":1},"sync":"inbox"}"#))
        #expect(app.events() == [#"{"sync":"inbox","mobiler_push":"received"}"#])
    }

    @Test func DEL_1_receivedWithNoSubscriberIsDroppedNeverBuffered() throws {
        let app = try App()
        _ = app.ios.willPresent(notification("n", alert))
        #expect(app.plugin.diagnostics.buffered == 0)
        try app.subscribe()
        #expect(app.events().isEmpty)
    }

    @Test func DEL_2_aBackgroundPushInTheBackgroundIsNotAnEvent() throws {
        let app = try App()
        try app.subscribe()
        app.system.settings.withLock { $0.foreground = false }
        app.ios.didReceiveRemoteNotification(userInfo: object(#"{"aps":{"content-available":1}}"#))
        #expect(app.events().isEmpty)
    }

    @Test func DEL_1_androidForegroundMessageIsReceivedAndPosted() throws {
        let app = try App(platform: .android)
        try app.subscribe()
        let message = RemoteMessage(
            messageID: "m1", data: stringMap(#"{"type":"new_booking","title":"T"}"#),
            notification: .init(title: "Other", body: "B", tag: "bookings"))
        app.android.onMessageReceived(message)
        #expect(app.events() == [#"{"type":"new_booking","title":"T","body":"B","mobiler_push":"received"}"#])
        let posted = try #require(app.system.settings.withLock { $0.posted.first })
        #expect(posted.title == "Other" && posted.body == "B" && posted.tag == "bookings")
    }

    @Test func DEL_3_aBackgroundDataMessageIsPostedWithItsOwnPayloadAndNoEvent() throws {
        let app = try App(platform: .android)
        try app.subscribe()
        app.system.settings.withLock { $0.foreground = false }
        app.android.onMessageReceived(
            RemoteMessage(messageID: "m1", data: stringMap(#"{"type":"a","title":"Hello","body":"there"}"#)))
        #expect(app.events().isEmpty)
        let posted = try #require(app.system.settings.withLock { $0.posted.first })
        #expect(posted.title == "Hello" && posted.body == "there")
        app.android.onNewIntent(AndroidIntent(action: posted.intentAction, extras: posted.intentExtras))
        #expect(app.events() == [#"{"type":"a","title":"Hello","body":"there","mobiler_push":"opened"}"#])
    }

    /// A posted notification's tap is known by its message's id, not by its payload: two
    /// messages with the same data are two notifications, each opened once.
    @Test func DEL_3_twoMessagesWithTheSameDataAreEachOpenedOnce() throws {
        let app = try App(platform: .android)
        try app.subscribe()
        app.system.settings.withLock { $0.foreground = false }
        for id in ["m1", "m2"] {
            app.android.onMessageReceived(RemoteMessage(messageID: id, data: stringMap(#"{"type":"ping"}"#)))
        }
        let posted = app.system.settings.withLock { $0.posted }
        #expect(posted.map { $0.intentExtras[AndroidPushBridge.idExtra]?.stringValue } == ["m1", "m2"])
        for notification in posted + posted {
            app.android.onNewIntent(AndroidIntent(action: notification.intentAction, extras: notification.intentExtras))
        }
        #expect(app.events() == Array(repeating: #"{"type":"ping","mobiler_push":"opened"}"#, count: 2))
    }

    @Test func DEL_3_aTapOnAnFCMDisplayedNotificationCarriesTheDataKeysOnly() throws {
        let app = try App(platform: .android)
        try app.subscribe()
        let extras = object(
            #"{"type":"booking","id":"7","from":"1234","google.message_id":"0:1","google.sent_time":"1","collapse_key":"com.example.app","gcm.n.title":"T"}"#
        )
        app.android.onNewIntent(AndroidIntent(extras: extras))
        #expect(app.events() == [#"{"type":"booking","id":"7","mobiler_push":"opened"}"#])
    }

    @Test func DEL_6_androidStillReceivesInTheForegroundWhenNotificationsAreDenied() throws {
        let app = try App(platform: .android)
        app.system.settings.withLock { $0.authorization = .denied }
        try app.subscribe()
        app.android.onMessageReceived(RemoteMessage(messageID: "m", data: stringMap(#"{"a":"1"}"#)))
        #expect(app.events() == [#"{"a":"1","mobiler_push":"received"}"#])
    }
}
