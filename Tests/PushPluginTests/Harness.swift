import CXHost
import OrderedJSON
import PushPlugin
import Testing

/// A stand-in OS that answers at once, through the bridges, as the headless device does.
final class FakePushSystem: PushSystem {
    struct Settings {
        var authorization = PushAuthorization.undetermined
        /// What the user answers when asked.
        var userGrants = true
        var token = "0a1b2c3d"
        var registrationError: String?
        var foreground = true
        var storedToken: String?
        var prompts = 0
        var posted: [TrayNotification] = []
        var categories: [NotificationCategory] = []
    }

    let platform: PushPlatform
    let settings = Monitor(Settings())
    /// Weak: the plugin holds this system, so a strong reference back would be a cycle.
    let plugin = Monitor(WeakPlugin())

    init(platform: PushPlatform) { self.platform = platform }

    func notificationAuthorization() -> PushAuthorization { settings.withLock { $0.authorization } }

    func requestNotificationAuthorization() {
        let granted = settings.withLock { settings -> Bool in
            settings.prompts += 1
            settings.authorization = settings.userGrants ? .granted : .denied
            return settings.userGrants
        }
        guard let plugin = plugin.withLock({ $0.value }) else { return }
        if platform == .ios {
            plugin.iosBridge.authorizationAnswered(granted: granted)
        } else {
            plugin.androidBridge.permissionResult(granted: granted)
        }
    }

    func requestPushToken() {
        let (token, error) = settings.withLock { ($0.token, $0.registrationError) }
        guard let plugin = plugin.withLock({ $0.value }) else { return }
        switch (platform, error) {
        case (.ios, let error?): plugin.iosBridge.didFailToRegisterForRemoteNotifications(error: error)
        case (.ios, nil): plugin.iosBridge.didRegisterForRemoteNotifications(deviceToken: hexBytes(token))
        case (_, let error?): plugin.androidBridge.tokenFetchFailed(error: error)
        case (_, nil): plugin.androidBridge.tokenFetched(token)
        }
    }

    func isAppInForeground() -> Bool { settings.withLock { $0.foreground } }
    func post(_ notification: TrayNotification) { settings.withLock { $0.posted.append(notification) } }
    func lastReportedToken() -> String? { settings.withLock { $0.storedToken } }
    func storeReportedToken(_ token: String) { settings.withLock { $0.storedToken = token } }
    func setNotificationCategories(_ categories: [NotificationCategory]) {
        settings.withLock { $0.categories = categories }
    }
    func notificationCategories() -> [NotificationCategory] { settings.withLock { $0.categories } }
    // An app that ships no resources, on an OS without channels: the plugin's defaults apply.
    func stringResource(_ name: String) -> String? { nil }
    func hasDrawable(_ name: String) -> Bool { false }
    func createNotificationChannel(id: String, name: String) {}

    private func hexBytes(_ hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }
}

/// One app process: a host with the push plugin, over a fake OS that outlives it.
final class App: Sendable {
    let system: FakePushSystem
    let plugin: PushPlugin
    let host: PluginHost
    let log: DeliveryLog
    /// Everything delivered to the core so far.
    var deliveries: [Delivery] { log.deliveries.withLock { $0 } }

    init(platform: PushPlatform = .ios, system: FakePushSystem? = nil) throws {
        let system = system ?? FakePushSystem(platform: platform)
        let plugin = PushPlugin(system: system)
        let log = DeliveryLog()
        self.log = log
        self.system = system
        self.plugin = plugin
        system.plugin.withLock { $0.value = plugin }
        host = PluginHost { delivery in log.deliveries.withLock { $0.append(delivery) } }
        try host.register(plugin)
    }

    /// The same device, a new process (TAP-6).
    func relaunch() throws -> App {
        try host.shutdown()
        return try App(platform: system.platform, system: system)
    }

    func register() throws -> PluginResponse? {
        let id = try host.call("push", "register")
        try host.waitUntilIdle()
        return deliveries.lazy.compactMap { if case .response(id, let response) = $0 { response } else { nil } }.first
    }

    func subscribe(_ key: String = "push") throws {
        try host.subscribe(key: key, plugin: "push", stream: "events")
        try host.waitUntilIdle()
    }

    /// The outputs delivered on `key`. EV-1 (every item is `ok = true`) is checked
    /// here: a failing item fails the test that asked, and only that test.
    func events(_ key: String = "push") -> [String] {
        #expect(throws: Never.self) { try host.waitUntilIdle() }
        return deliveries.compactMap { delivery -> String? in
            guard case .item(key, let response) = delivery else { return nil }
            #expect(response.ok, "EV-1: every item is ok = true, got \(response)")
            return response.output
        }
    }

    var ios: IOSPushBridge { plugin.iosBridge }
    var android: AndroidPushBridge { plugin.androidBridge }
}

final class WeakPlugin: @unchecked Sendable {
    // Only read and written inside the owning Monitor.
    weak var value: PushPlugin?
}

final class DeliveryLog: Sendable {
    let deliveries = Monitor<[Delivery]>([])
}

func object(_ text: String) -> JSONObject {
    try! JSON.parse(text: text).objectValue!
}

/// A message's data as the shell reads it from a sender: in the plain form when it has
/// one, else an object.
func stringMap(_ text: String) -> JSONStringMap {
    JSONStringMap(plainText: text) ?? JSONStringMap(object(text))
}

func notification(_ id: String, _ userInfo: String) -> IOSNotification {
    IOSNotification(identifier: id, userInfo: object(userInfo))
}
