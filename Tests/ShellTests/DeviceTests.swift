import CXHost
import OrderedJSON
import PushPlugin
import PushServices
import SimulatedDevice
import Testing

@Suite struct DeviceTests {
    func device(_ platform: PushPlatform) -> Device {
        Device(platform: platform, bundleID: "com.example.app") { _ in }
    }

    @Test func launchStartsTheAppFromEveryState() throws {
        let device = device(.android)
        #expect(device.appState == .notRunning)
        #expect(try device.launch() == .foreground)
        #expect(try device.launch() == .foreground)
        _ = try device.moveToBackground()
        #expect(try device.launch() == .foreground)
        _ = try device.forceStop()
        #expect(try device.launch() == .foreground)
        #expect(device.host != nil)
    }

    @Test func backgroundAndForegroundNeedARunningApp() throws {
        let device = device(.ios)
        #expect(throws: DeviceRefusal.self) { try device.moveToBackground() }
        #expect(throws: DeviceRefusal.self) { try device.moveToForeground() }
        _ = try device.launch()
        #expect(try device.moveToBackground() == .background)
        #expect(try device.moveToBackground() == .background)
        #expect(try device.moveToForeground() == .foreground)
    }

    @Test func killEndsTheProcessAndIsRefusedWhenNotRunning() throws {
        let device = device(.ios)
        #expect(throws: DeviceRefusal("the app is not running, so there is nothing to kill")) { try device.kill() }
        _ = try device.launch()
        let host = try #require(device.host)
        #expect(try device.kill() == .notRunning)
        #expect(device.host == nil)
        #expect(host.isShutDown)
    }

    @Test func forceStopIsAndroidOnlyAndClearsTheTray() throws {
        #expect(throws: DeviceRefusal("force_stop is an Android operation; this device is ios")) {
            try device(.ios).forceStop()
        }
        #expect(throws: DeviceRefusal.self) { try device(.web).forceStop() }
        let android = device(.android)
        android.setPermission(grant: true)
        _ = try android.launch()
        android.requestNotificationAuthorization()
        android.post(TrayNotification(title: "t", body: nil, tag: nil, intentAction: nil, intentExtras: JSONObject()))
        #expect(android.trayEntries.count == 1)
        #expect(try android.forceStop() == .forceStopped)
        #expect(android.trayEntries.isEmpty && android.appState == .forceStopped)
    }

    @Test func tapsAreRefusedOnAnEmptyTrayOrAnUnknownID() throws {
        let device = device(.android)
        #expect(throws: DeviceRefusal("the tray is empty: there is nothing to tap")) { try device.tap("newest") }
        _ = try device.launch()
        device.requestNotificationAuthorization()
        device.post(TrayNotification(title: "t", body: nil, tag: nil, intentAction: nil, intentExtras: JSONObject()))
        #expect(throws: DeviceRefusal.self) { try device.tap("t7") }
        #expect(device.trayEntries.count == 1)
    }

    @Test func aTapLaunchesAStoppedAppToTheForeground() throws {
        let device = device(.android)
        _ = try device.launch()
        device.requestNotificationAuthorization()
        device.post(TrayNotification(title: "t", body: nil, tag: nil, intentAction: nil, intentExtras: JSONObject()))
        _ = try device.kill()
        #expect(try device.tap("oldest") == "t1")
        #expect(device.appState == .foreground && device.trayEntries.isEmpty)
    }

    @Test func permissionAnswersThePromptThenBecomesTheSetting() {
        let device = device(.ios)
        device.setPermission(grant: false)
        #expect(device.authorization == .undetermined)
        device.requestNotificationAuthorization()
        #expect(device.authorization == .denied)
        device.setPermission(grant: true)
        #expect(device.authorization == .granted)
    }

    @Test func tokensAreShapedLikeTheRealOnes() throws {
        let ios = try #require(device(.ios).token)
        #expect(ios.count == 64 && ios.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        let fcm = try #require(device(.android).token)
        #expect(fcm.contains(":APA91b") && fcm.count > 150)
        #expect(device(.web).token == nil)
    }

    @Test func rotationRetiresTheOldTokenInTheRegistry() throws {
        let registry = TokenRegistry()
        let device = Device(platform: .ios, bundleID: "com.example.app", registry: registry) { _ in }
        let old = try #require(device.token)
        let new = try device.rotateToken(nowMilliseconds: 42)
        #expect(new != old && device.token == new)
        #expect(registry.apnsRecord(old) == APNsTokenRecord(bundleID: "com.example.app", retiredAt: 42))
        #expect(registry.apnsRecord(new) == APNsTokenRecord(bundleID: "com.example.app"))
        #expect(throws: DeviceRefusal.self) { try self.device(.web).rotateToken(nowMilliseconds: 0) }
    }

    @Test func uninstallRetiresEverythingAndInstallStartsAfresh() throws {
        let registry = TokenRegistry()
        let device = Device(platform: .android, bundleID: "com.example.app", registry: registry) { _ in }
        let token = try #require(device.token)
        let fid = try #require(device.installationID)
        _ = try device.launch()
        device.requestNotificationAuthorization()
        #expect(try device.setTopic("news", subscribed: true) == ["news"])
        try device.uninstall(nowMilliseconds: 7)
        #expect(!device.isInstalled && device.token == nil && device.topics.isEmpty && device.appState == .notRunning)
        #expect(registry.entry(.token(token))?.fcmRecord == FCMTokenRecord(project: "cxshell", retired: true))
        #expect(registry.entry(.fid(fid))?.fcmRecord == FCMTokenRecord(project: "cxshell", retired: true))
        #expect(throws: DeviceRefusal.self) { try device.launch() }
        #expect(throws: DeviceRefusal.self) { try device.uninstall(nowMilliseconds: 8) }
        #expect(try device.install(bundleID: nil) == "com.example.app")
        #expect(device.token == nil && device.authorization == .undetermined)
        #expect(throws: DeviceRefusal.self) { try device.install(bundleID: nil) }
        _ = try device.launch()  // the app registers again at its start: a new token
        let fresh = try #require(device.token)
        #expect(fresh != token && registry.entry(.token(fresh))?.fcmRecord == FCMTokenRecord(project: "cxshell"))
    }
}
