import OrderedJSON
import PushPlugin
import Testing

@testable import CXHost

func tap(_ app: App, _ id: String, _ userInfo: String) {
    app.ios.didReceive(response: notification(id, userInfo), actionIdentifier: IOSPushBridge.defaultActionIdentifier)
}

@Suite struct TapTests {
    @Test func TAP_1_aTapDeliversThatEntrysOwnPayload() throws {
        let app = try App()
        try app.subscribe()
        tap(app, "older", #"{"n":"older","aps":{"alert":"1"}}"#)
        #expect(app.events() == [#"{"n":"older","body":"1","mobiler_push":"opened"}"#])
    }

    @Test func TAP_1_onlyTheDefaultActionIsATap() throws {
        let app = try App()
        try app.subscribe()
        app.ios.didReceive(
            response: notification("n", alert), actionIdentifier: "com.apple.UNNotificationDismissActionIdentifier")
        #expect(app.events().isEmpty)
    }

    @Test func TAP_1_aLaunchTapReportedTwiceIsDeliveredOnce() throws {
        let app = try App()
        app.ios.didFinishLaunching(remoteNotification: notification("n1", alert))
        tap(app, "n1", alert)
        try app.subscribe()
        #expect(app.events().count == 1)
    }

    @Test func TAP_1_androidLaunchIntentRedeliveredOnRecreateIsDeliveredOnce() throws {
        let app = try App(platform: .android)
        let intent = AndroidIntent(extras: object(#"{"a":"1","google.message_id":"0:9"}"#))
        app.android.onCreate(intent: intent)
        app.android.onCreate(intent: intent)  // the activity was recreated with the same intent
        try app.subscribe()
        #expect(app.events() == [#"{"a":"1","mobiler_push":"opened"}"#])
    }

    @Test func TAP_2_TAP_4_aTapWithNoSubscriberWaitsAndIsFlushedBeforeLiveEvents() throws {
        let app = try App()
        tap(app, "a", #"{"n":1}"#)
        tap(app, "b", #"{"n":2}"#)
        try app.host.subscribe(key: "push", plugin: "push", stream: "events")
        _ = app.ios.willPresent(notification("c", #"{"n":3,"aps":{"alert":"x"}}"#))
        #expect(
            app.events() == [
                #"{"n":1,"mobiler_push":"opened"}"#, #"{"n":2,"mobiler_push":"opened"}"#,
                #"{"n":3,"body":"x","mobiler_push":"received"}"#,
            ])
    }

    @Test(arguments: [33, 40, 100])
    func TAP_3_dropsOldestPastThirtyTwo(taps: Int) throws {
        let app = try App()
        for index in 1...taps { tap(app, "t\(index)", #"{"n":\#(index)}"#) }
        #expect(app.plugin.diagnostics == PushDiagnostics(buffered: 32, droppedTaps: taps - 32, liveSubscribers: 0))
        try app.subscribe()
        let expected = ((taps - 31)...taps).map { #"{"n":\#($0),"mobiler_push":"opened"}"# }
        #expect(app.events() == expected)
        #expect(app.plugin.diagnostics.buffered == 0)
    }

    @Test func TAP_4_aLiveTapThenUnsubscribeAndResubscribeIsDeliveredOnce() throws {
        let app = try App()
        try app.subscribe()
        tap(app, "t", #"{"n":1}"#)
        try app.host.waitUntilIdle()  // as a shell does between steps
        app.host.unsubscribe(key: "push")
        try app.subscribe()
        #expect(app.events() == [#"{"n":1,"mobiler_push":"opened"}"#])
    }

    @Test func TAP_4_aBufferedTapFlushedThenResubscribedIsDeliveredOnce() throws {
        let app = try App()
        tap(app, "t", #"{"n":1}"#)
        try app.subscribe()
        app.host.unsubscribe(key: "push")
        try app.subscribe()
        #expect(app.events() == [#"{"n":1,"mobiler_push":"opened"}"#])
    }

    @Test func TAP_5_openingFromTheLauncherIsNoEvent() throws {
        let ios = try App()
        ios.ios.didFinishLaunching(remoteNotification: nil)
        try ios.subscribe()
        let android = try App(platform: .android)
        android.android.onCreate(intent: nil)
        android.android.onCreate(intent: AndroidIntent(extras: object(#"{"profile":"x"}"#)))
        try android.subscribe()
        #expect(ios.events().isEmpty && android.events().isEmpty)
    }

    @Test func TAP_6_killingTheAppDiscardsTheBuffer() throws {
        let app = try App()
        tap(app, "t", #"{"n":1}"#)
        let next = try app.relaunch()
        try next.subscribe()
        #expect(next.events().isEmpty)
    }

    @Test func TOK_1_liveSubscribersGetTheRotation() throws {
        let app = try App(platform: .android)
        _ = try app.register()
        try app.subscribe("a")
        try app.subscribe("b")
        app.android.onNewToken("new")
        #expect(app.events("a") == [#"{"type":"token_refresh","token":"new"}"#])
        #expect(app.events("b") == app.events("a"))
    }

    @Test func TOK_2_withoutSubscribersTheNewestRotationWaitsInArrivalOrder() throws {
        let app = try App(platform: .android)
        _ = try app.register()
        app.android.onNewToken("t1")
        app.android.onNewIntent(AndroidIntent(extras: object(#"{"a":"1","google.message_id":"0:1"}"#)))
        app.android.onNewToken("t2")
        app.android.onNewIntent(AndroidIntent(extras: object(#"{"a":"2","google.message_id":"0:2"}"#)))
        try app.subscribe()
        #expect(
            app.events() == [
                #"{"a":"1","mobiler_push":"opened"}"#, #"{"type":"token_refresh","token":"t2"}"#,
                #"{"a":"2","mobiler_push":"opened"}"#,
            ])
    }

    @Test func TOK_2_aRotationLostWithTheProcessIsReportedAtTheNextLaunch() throws {
        let app = try App(platform: .ios)
        app.system.settings.withLock { $0.token = "aa" }
        _ = try app.register()
        app.system.settings.withLock { $0.token = "bb" }
        app.ios.didRegisterForRemoteNotifications(deviceToken: [0xBB])  // buffered, then the app is killed
        let next = try app.relaunch()
        next.ios.didFinishLaunching(remoteNotification: nil)
        try next.subscribe()
        #expect(next.events() == [#"{"type":"token_refresh","token":"bb"}"#])
    }

    /// The core unsubscribes after its subscription went live and before the plugin's
    /// start ran (the host hook puts it exactly there). The flush into that dead
    /// subscription fails, so the tap and the rotation stay buffered, the rotation is
    /// not remembered as told, and the next subscription gets both, in arrival order.
    @Test func TAP_2_TOK_2_aSubscriptionEndedBeforeItStartedLosesNothing() throws {
        let app = try App()
        _ = try app.register()
        app.ios.didRegisterForRemoteNotifications(deviceToken: [0xFF, 0xEE])
        tap(app, "t1", #"{"n":1,"aps":{"alert":"x"}}"#)
        let host = app.host
        host.hooks.beforeStartStream = { [weak host] key in host?.unsubscribe(key: key) }
        try app.subscribe("dead")
        #expect(app.events("dead").isEmpty)
        #expect(app.plugin.diagnostics.buffered == 2)
        #expect(app.plugin.diagnostics.liveSubscribers == 0)
        #expect(app.system.settings.withLock { $0.storedToken } == "0a1b2c3d")
        host.hooks.beforeStartStream = nil
        try app.subscribe("live")
        #expect(
            app.events("live") == [
                #"{"type":"token_refresh","token":"ffee"}"#, #"{"n":1,"body":"x","mobiler_push":"opened"}"#,
            ])
        #expect(app.system.settings.withLock { $0.storedToken } == "ffee")
    }

    /// A tap and a rotation while the only subscription is one the core already ended
    /// (its stop is still on its way to the plugin) go to the buffer, not into the
    /// dead stream.
    @Test func TAP_2_aTapIntoAnEndedSubscriptionIsBuffered() throws {
        let app = try App()
        let host = app.host
        host.hooks.beforeStartStream = { [weak host] key in host?.unsubscribe(key: key) }
        host.hooks.afterStartStream = { [weak app] _ in
            guard let app else { return }
            #expect(app.plugin.diagnostics.liveSubscribers == 1)
            tap(app, "t2", #"{"n":2,"aps":{"alert":"y"}}"#)
            app.ios.didRegisterForRemoteNotifications(deviceToken: [0xAB])
        }
        _ = try app.register()
        try app.subscribe("dead")
        host.hooks = HostHooks()
        try app.subscribe("live")
        #expect(app.events("dead").isEmpty)
        #expect(
            app.events("live") == [
                #"{"n":2,"body":"y","mobiler_push":"opened"}"#, #"{"type":"token_refresh","token":"ab"}"#,
            ])
    }
}
