import CXHost
import OrderedJSON
import PushPlugin
import Testing

/// PH-1 … PH-3 in the plugin itself: the `categories` op, the buttons it adds to the
/// notifications it posts, and the `opened` event of a button press, on both bridges.
@Suite struct ActionTests {
    static let booking =
        #"[{"id":"booking","actions":[{"id":"accept","title":"Accept","foreground":true},{"id":"reply","title":"Reply","input":true},{"id":"decline","title":"Decline"},{"id":"later","title":"Later"}]}]"#

    func declare(_ app: App, _ input: String) throws -> PluginResponse? {
        let id = try app.host.call("push", "categories", input: input)
        try app.host.waitUntilIdle()
        return app.deliveries.lazy.compactMap { if case .response(id, let response) = $0 { response } else { nil } }
            .first
    }

    @Test func PH_1_theCategoriesOpKeepsTheCategoriesWithTheOSOrRefusesAndKeepsThePrevious() throws {
        let app = try App(platform: .android)
        #expect(try declare(app, Self.booking) == .success(#"{"categories":1}"#))
        #expect(app.system.notificationCategories().map(\.id) == ["booking"])
        #expect(app.system.notificationCategories()[0].actions[1] == .init(id: "reply", title: "Reply", input: true))
        let refused = try declare(app, #"[{"id":"x","actions":[{"id":"a","title":"A"},{"id":"a","title":"B"}]}]"#)
        #expect(refused == .failure("category 'x' has two actions with the id 'a'"))
        #expect(app.system.notificationCategories().map(\.id) == ["booking"])
        let web = try App(platform: .web)
        #expect(try declare(web, Self.booking)?.ok == false)
        #expect(web.system.notificationCategories().isEmpty)
    }

    @Test func PH_2_PH_3_androidDataMessagesGetThreeButtonsAndAPressIsOpenedWithItsActionAndText() throws {
        let app = try App(platform: .android)
        _ = try declare(app, Self.booking)
        app.system.settings.withLock { $0.foreground = false }
        app.android.onMessageReceived(
            RemoteMessage(
                messageID: "m1", data: stringMap(#"{"n":"1","mobiler_category":"booking","mobiler_action":"x"}"#)))
        app.android.onMessageReceived(
            RemoteMessage(
                messageID: "m2", data: stringMap(#"{"mobiler_category":"booking"}"#),
                notification: .init(title: "drawn")))
        let posted = app.system.settings.withLock { $0.posted }
        #expect(posted[0].actions.map(\.action.id) == ["accept", "reply", "decline"])
        #expect(posted[1].actions.isEmpty, "a notification message has no buttons")
        var reply = try #require(posted[0].actions.first { $0.action.id == "reply" }).intent
        reply.extras[AndroidPushBridge.inputExtra] = "on my way"
        try app.subscribe()
        app.android.onReceive(broadcast: reply)
        #expect(
            app.events() == [
                #"{"n":"1","mobiler_category":"booking","mobiler_action":"reply","mobiler_input":"on my way","mobiler_push":"opened"}"#
            ])
    }

    @Test func PH_3_anIOSActionIsOpenedWithItsIdentifierAndTheDefaultActionIsStillATap() throws {
        let app = try App()
        try app.subscribe()
        let booking = notification("n1", #"{"b":7,"aps":{"alert":"hi","category":"booking"},"mobiler_input":"forged"}"#)
        app.ios.didReceive(response: booking, actionIdentifier: "decline")
        app.ios.didReceive(
            response: notification("n2", #"{"aps":{"alert":"x"}}"#), actionIdentifier: "reply", userText: "ok")
        app.ios.didReceive(
            response: notification("n3", #"{"aps":{"alert":"y"}}"#),
            actionIdentifier: IOSPushBridge.defaultActionIdentifier)
        #expect(
            app.events() == [
                #"{"b":7,"body":"hi","mobiler_action":"decline","mobiler_push":"opened"}"#,
                #"{"body":"x","mobiler_action":"reply","mobiler_input":"ok","mobiler_push":"opened"}"#,
                #"{"body":"y","mobiler_push":"opened"}"#,
            ])
    }
}
