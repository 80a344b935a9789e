import CXHost
import PushPlugin
import Testing

@Suite struct RegisterTests {
    @Test func REG_1_iosAnswersTheHexTokenAndApns() throws {
        let app = try App(platform: .ios)
        app.system.settings.withLock { $0.token = String(repeating: "ab", count: 32) }
        let response = try #require(try app.register())
        #expect(response == .success(#"{"token":"\#(String(repeating: "ab", count: 32))","platform":"apns"}"#))
    }

    @Test func REG_1_iosTokenBytesBecomeLowercaseHexOfAnyLength() throws {
        let app = try App(platform: .ios)
        app.system.settings.withLock { $0.token = "00FF0AB012" }  // the fake OS hands these bytes over
        let response = try #require(try app.register())
        #expect(response == .success(#"{"token":"00ff0ab012","platform":"apns"}"#))
        #expect(app.system.lastReportedToken() == "00ff0ab012")
    }

    @Test func REG_1_androidAnswersTheFcmToken() throws {
        let app = try App(platform: .android)
        app.system.settings.withLock { $0.token = "fcm:APA91b-x_y" }
        #expect(try app.register() == .success(#"{"token":"fcm:APA91b-x_y","platform":"fcm"}"#))
    }

    @Test(arguments: [PushPlatform.ios, .android])
    func REG_2_theFirstRegisterAsksOnceAndAGrantGoesOn(platform: PushPlatform) throws {
        let app = try App(platform: platform)
        #expect(try app.register()?.ok == true)
        #expect(try app.register()?.ok == true)
        #expect(app.system.settings.withLock { $0.prompts } == 1)
    }

    @Test(arguments: [PushPlatform.ios, .android])
    func REG_2_aDenialAnswersOkFalseAndIsNotAskedAgain(platform: PushPlatform) throws {
        let app = try App(platform: platform)
        app.system.settings.withLock { $0.userGrants = false }
        let first = try #require(try app.register())
        #expect(!first.ok)
        #expect(first.output.contains("notification permission was denied"))
        app.system.settings.withLock { $0.userGrants = true }  // the prompt is not shown again
        #expect(try app.register() == first)
        #expect(app.system.settings.withLock { $0.prompts } == 1)
    }

    @Test(arguments: [PushPlatform.ios, .android])
    func REG_3_anOSFailureAnswersWithTheOSText(platform: PushPlatform) throws {
        let app = try App(platform: platform)
        app.system.settings.withLock { $0.registrationError = "no valid aps-environment entitlement string found" }
        #expect(try app.register() == .failure("no valid aps-environment entitlement string found"))
    }

    @Test func REG_4_registerIsIdempotentAndFollowsRotation() throws {
        let app = try App(platform: .android)
        app.system.settings.withLock { $0.token = "t1" }
        let first = try app.register()
        #expect(try app.register() == first)
        app.system.settings.withLock { $0.token = "t2" }
        app.android.onNewToken("t2")
        #expect(try app.register() == .success(#"{"token":"t2","platform":"fcm"}"#))
    }

    @Test func REG_5_webAnswersOkFalseAndDoesNothingElse() throws {
        let app = try App(platform: .web)
        let response = try #require(try app.register())
        #expect(!response.ok && response.output.contains("not available on the web"))
        #expect(app.system.settings.withLock { $0.prompts } == 0)
    }

    @Test func anUnknownOpListsTheOps() throws {
        let app = try App()
        let id = try app.host.call("push", "regster")
        try app.host.waitUntilIdle()
        #expect(app.deliveries == [.response(id, .failure("push has no op 'regster'; it has: register, categories"))])
    }
}
