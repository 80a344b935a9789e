import CXHost
import OrderedJSON
import PushPlugin
import PushServices

/// How a device's app is registered with the push services (the `device` request's
/// options in shell-protocol.md).
public struct DeviceOptions: Sendable, Equatable {
    /// The APNs environment that issues the app's tokens.
    public var apnsEnvironment: APNsEnvironment
    /// The Firebase project the Android app belongs to.
    public var fcmProject: String
    /// The Apple developer team that owns the bundle.
    public var apnsTeam: String
    /// Android: the API level the phone runs (PH-7); below 33 there is no runtime
    /// notification permission.
    public var androidAPI: Int

    /// iOS: how many background pushes per rolling hour wake the app (PH-11; Apple: "don't
    /// try to send more than two or three per hour").
    public var backgroundPushesPerHour: Int

    /// iOS: the app's capabilities that let a notification through Focus (PH-8):
    /// `time-sensitive` (Time Sensitive Notifications) and `critical-alerts` (the entitlement).
    public var capabilities: [String]

    /// Android: what the app ships for its notifications (PH-6).
    public var resources: AppResources

    /// How many notifications the tray keeps for the app; nil: the platform's (`TrayLimit`).
    public var trayLimit: Int?

    /// The capabilities an app may have.
    public static let knownCapabilities = ["time-sensitive", "critical-alerts"]

    /// The `capabilities` option as a request or a state file gives it: known names only,
    /// kept in their known order.
    public static func capabilities(_ value: JSON) -> Result<[String], DeviceRefusal> {
        let list = value.arrayValue?.compactMap(\.stringValue)
        guard let list, list.count == value.arrayValue?.count, list.allSatisfy(knownCapabilities.contains) else {
            let known = knownCapabilities.map { "\"\($0)\"" }.joined(separator: ", ")
            return .failure(DeviceRefusal("\"capabilities\" must be an array of \(known), not \(value.compactText)"))
        }
        return .success(knownCapabilities.filter(list.contains))
    }

    /// The `tray_limit` option as a request or a state file gives it (`TrayLimit.counts`).
    public static func trayLimit(_ value: JSON) -> Result<Int, DeviceRefusal> {
        guard let count = value.integerValue.map(Int.init), TrayLimit.counts.contains(count) else {
            return .failure(
                DeviceRefusal(
                    "\"tray_limit\" must be a whole number from \(TrayLimit.counts.lowerBound) to \(TrayLimit.counts.upperBound), not \(value.compactText)"
                ))
        }
        return .success(count)
    }

    /// The API levels a device may run: Android 5.0 (21) to Android 15 (35).
    public static let androidAPIs = 21...35

    public init(
        apnsEnvironment: APNsEnvironment = .production, fcmProject: String = "cxshell",
        apnsTeam: String = "TEAM000001", androidAPI: Int = 34, backgroundPushesPerHour: Int = 3,
        capabilities: [String] = [], resources: AppResources = AppResources(), trayLimit: Int? = nil
    ) {
        self.apnsEnvironment = apnsEnvironment
        self.fcmProject = fcmProject
        self.apnsTeam = apnsTeam
        self.androidAPI = androidAPI
        self.backgroundPushesPerHour = backgroundPushesPerHour
        self.capabilities = capabilities
        self.resources = resources
        self.trayLimit = trayLimit
    }
}

/// A simulated phone with one app (the shell's `device`). It holds the OS's state
/// (install, app state, permission, push token, tray, the app's storage) and reaches
/// the push plugin only through its platform bridges, exactly as a real iOS or
/// Android shell would. Every token it is issued is recorded in the world's
/// `TokenRegistry`, which is how a push finds it.
///
/// The device's lock is never held while the plugin or the host runs: the plugin
/// calls back into the device (`PushSystem`) while it works.
public final class Device: PushSystem {
    /// The world's name for the device: `d1`, `d2`, … in order of creation.
    public let id: String
    public let platform: PushPlatform
    public let options: DeviceOptions
    /// The loaded libraries' plugins, registered on each of the app's processes.
    let plugins: ExtraPlugins
    private let registry: TokenRegistry
    private let core: @Sendable (Delivery) -> Void
    let state: Monitor<State>
    /// The world's channels: where MQTT arrivals go, and the front door's address.
    let hub: ChannelHub

    struct State {
        var installed = true
        var bundleID: String
        var app = AppState.notRunning
        var process: AppProcess?
        var authorization = PushAuthorization.undetermined
        /// How the user answers the next permission prompt.
        var userGrants = true
        /// None until the OS issues one: a fresh install gets its token when the app
        /// first registers (a new device's first install has one from the start).
        var token: String?
        /// Android: the Firebase installation id of this install.
        var installationID: String?
        /// Android: the FCM topics the app's token is subscribed to; they outlive
        /// processes and end with the install.
        var topics: Set<String> = []
        /// The app's own storage (`UserDefaults` / `SharedPreferences`); it survives kills.
        var storedToken: String?
        var tray = Tray()
        var droppedTapsInEndedProcesses = 0
        /// Set while the plugin posts during one push, for the push's outcome.
        var lastPost: PushOutcome.Posted?
        var nextMessage = 1
        /// iOS: the app icon's badge, as the last `aps.badge` set it (PH-5).
        var badge = 0
        /// Android: the last `notification_count` a displayed notification set (PH-5).
        var notificationCount: Int?
        /// iOS: Low Power Mode (PH-10).
        var lowPower = false
        /// iOS: a Focus is on (PH-8).
        var focus = false
        /// Android 8.0+: the app's notification channels (PH-6); they end with the install.
        var notificationChannels = NotificationChannelList()
        /// Set while the plugin posts during one push: the channel the user turned off.
        var lastBlockedChannel: String?
        /// The app's declared notification categories (PH-1); they end with the install.
        var categories: [NotificationCategory] = []
        /// Android: since when (world clock, ms) the phone has been in Doze (PH-9); nil: awake.
        var dozeSince: Int64?
        var ids: IDGenerator
        /// The install's channel registrations and the process's connections.
        var channels = DeviceChannels()

        mutating func newToken(for platform: PushPlatform) -> String {
            platform == .android ? ids.fcmToken() : ids.hex(bytes: 32)
        }
    }

    /// A device with the app installed and not running, holding a token. `core`
    /// receives what the app's host delivers while a process is alive. `ids` makes its
    /// tokens and ids: a world seeds each device's from one generator of its own rather
    /// than asking the system once per device.
    public convenience init(
        id: String = "d1", platform: PushPlatform, bundleID: String, options: DeviceOptions = DeviceOptions(),
        ids: IDGenerator = IDGenerator(), registry: TokenRegistry = TokenRegistry(), hub: ChannelHub = ChannelHub(),
        plugins: @escaping ExtraPlugins = { _ in {} }, core: @escaping @Sendable (Delivery) -> Void
    ) {
        self.init(
            id: id, platform: platform, options: options, state: State(bundleID: bundleID, ids: ids),
            registry: registry, hub: hub, plugins: plugins, core: core)
        state.withLock { state in
            issueInstallationID(&state)
            issueToken(&state)
            state.authorization = installedAuthorization
        }
    }

    /// What an install starts with (PH-7): Android below API 33 grants notifications at
    /// install and never asks; otherwise nothing is decided until the app asks.
    var installedAuthorization: PushAuthorization {
        platform == .android && options.androidAPI < 33 ? .granted : .undetermined
    }

    /// A device as `saved` describes it, after a reboot: powered on, the app not running,
    /// its tokens the saved ones (the registry holds them already; nothing is issued).
    public convenience init(
        id: String, platform: PushPlatform, options: DeviceOptions, saved: Saved, ids: IDGenerator,
        registry: TokenRegistry, hub: ChannelHub, plugins: @escaping ExtraPlugins,
        core: @escaping @Sendable (Delivery) -> Void
    ) {
        var state = State(bundleID: saved.bundleID, ids: ids)
        saved.apply(to: &state, platform: platform)
        self.init(
            id: id, platform: platform, options: options, state: state, registry: registry, hub: hub, plugins: plugins,
            core: core)
        // The http channel's webhooks find the install again (XM-2).
        if let webhook = saved.channels.webhook { hub.issue(recipient: webhook.recipientID, to: id) }
    }

    private init(
        id: String, platform: PushPlatform, options: DeviceOptions, state: State, registry: TokenRegistry,
        hub: ChannelHub, plugins: @escaping ExtraPlugins, core: @escaping @Sendable (Delivery) -> Void
    ) {
        self.id = id
        self.plugins = plugins
        self.hub = hub
        self.platform = platform
        self.options = options
        self.registry = registry
        self.core = core
        self.state = Monitor(state)
    }

    /// What the registry records for tokens this install is issued.
    private func entry(_ state: State) -> TokenRegistry.Entry {
        TokenRegistry.Entry(
            deviceID: id, platform: platform, bundleID: state.bundleID, environment: options.apnsEnvironment,
            project: options.fcmProject, team: options.apnsTeam, retiredAt: nil, device: self)
    }

    private func issueToken(_ state: inout State) {
        guard platform != .web else { return }
        let token = state.newToken(for: platform)
        state.token = token
        registry.issue(token: token, to: entry(state))
    }

    private func issueInstallationID(_ state: inout State) {
        guard platform == .android else { return }
        let fid = state.ids.base64URL(22)
        state.installationID = fid
        registry.issue(installationID: fid, to: entry(state))
    }

    deinit {
        closeConnections()
        state.withLock { $0.process }?.end()
    }

    // MARK: Reading

    public var appState: AppState { state.withLock { $0.app } }
    public var authorization: PushAuthorization { state.withLock { $0.authorization } }
    public var isInstalled: Bool { state.withLock { $0.installed } }
    /// The installed (or last installed) app's bundle id.
    public var bundleID: String { state.withLock { $0.bundleID } }
    /// The current push token; none on the web, and none before the OS issues one.
    public var token: String? { state.withLock { $0.token } }
    /// Android: the Firebase installation id of the current install.
    public var installationID: String? { state.withLock { $0.installationID } }
    /// Android: the FCM topics the app's token is subscribed to, sorted.
    public var topics: [String] { state.withLock { $0.topics.sorted() } }
    /// Whether the app's FCM topics satisfy `test`, asked of the set itself: a topic or
    /// condition send asks every device, and a sorted copy each would cost it an array.
    public func topics(satisfy test: (Set<String>) -> Bool) -> Bool { state.withLock { test($0.topics) } }
    public var trayEntries: [TrayEntry] { state.withLock { $0.tray.entries } }
    /// How many entries the tray keeps for the app, and what one more does.
    public var trayLimit: TrayLimit { TrayLimit.of(platform, count: options.trayLimit) }

    /// The number on the app's icon (PH-5): iOS, as `aps.badge` last set it; Android, the
    /// last `notification_count` a notification set, else the tray's entries; web, 0.
    public var badge: Int {
        state.withLock { state in
            switch platform {
            case .ios: state.badge
            case .android: state.notificationCount ?? state.tray.count
            case .web: 0
            }
        }
    }
    /// The running app's host, which the core talks to; nil when the app is not running.
    public var host: PluginHost? { state.withLock { $0.app.isRunning ? $0.process?.host : nil } }

    /// The push plugin's buffer in the running process (0 when not running), and the
    /// taps dropped by the bound since the device was made.
    public var buffer: (buffered: Int, droppedTaps: Int) {
        let (process, ended) = state.withLock { ($0.process, $0.droppedTapsInEndedProcesses) }
        let diagnostics = process?.push.diagnostics ?? PushDiagnostics(buffered: 0, droppedTaps: 0)
        return (diagnostics.buffered, ended + diagnostics.droppedTaps)
    }

    /// Waits until the app's host (if any) has made every delivery it owes. Throws
    /// `inDeliveryHandler` / `inPlugin` from the host's delivery handler or a plugin's thread.
    public func waitUntilIdle() throws(HostError) {
        try state.withLock { $0.process }?.host.waitUntilIdle()
    }

    /// Promises `waitUntilIdle` soon (`PluginHost.holdDeliveries`): the host held, for
    /// its `releaseDeliveries()`; nil when no app process runs.
    public func holdDeliveries() -> PluginHost? {
        guard let host = state.withLock({ $0.process })?.host else { return nil }
        host.holdDeliveries()
        return host
    }

    /// The device is switched off: the app's process ends without deliveries.
    public func powerOff() {
        endProcess(next: .notRunning)
    }

    /// An `apns-id` for a push whose sender gave none, as APNs makes one up.
    public func makeAPNsID() -> String { state.withLock { $0.ids.uuid() } }

    /// FCM's `google.message_id`: `0:<sequence>%<random>`.
    public func makeFCMMessageID() -> String {
        state.withLock { state in
            defer { state.nextMessage += 1 }
            return state.ids.fcmMessageID(sequence: state.nextMessage)
        }
    }

    // MARK: The user and the OS

    /// How the user answers the next prompt, and the setting from now on when it was
    /// already decided (the user changed it in Settings).
    public func setPermission(grant: Bool) {
        state.withLock { state in
            state.userGrants = grant
            if state.authorization != .undetermined { state.authorization = grant ? .granted : .denied }
        }
    }

    /// iOS: whether Low Power Mode is on (PH-10).
    public var isLowPower: Bool { state.withLock { $0.lowPower } }

    /// What a service asks of a device before it hands it a push: whether it is on the
    /// network, in Low Power Mode (iOS, PH-10), since when it dozes (Android, PH-9), and
    /// its app's state.
    public struct Conditions: Sendable {
        public let isOnline: Bool
        public let isLowPower: Bool
        public let dozeSince: Int64?
        public let appState: AppState
    }

    /// The conditions, read under one lock: a lock for each was ~0.14k instructions a push.
    public var conditions: Conditions {
        state.withLock {
            Conditions(
                isOnline: !$0.channels.offline, isLowPower: $0.lowPower, dozeSince: $0.dozeSince, appState: $0.app)
        }
    }

    /// iOS: the user turns Low Power Mode on or off (PH-10); the service holding pushes
    /// meanwhile is the world's APNs. Refused on other platforms.
    public func setLowPower(_ on: Bool) throws(DeviceRefusal) {
        guard platform == .ios else {
            throw DeviceRefusal(
                "low_power is iOS's Low Power Mode; a \(platform.rawValue) device has none (Android's is idle, Doze)")
        }
        state.withLock { $0.lowPower = on }
    }

    /// iOS: whether a Focus is on (PH-8).
    public var isFocused: Bool { state.withLock { $0.focus } }

    /// iOS: the user turns a Focus on or off (PH-8). Refused on other platforms.
    public func setFocus(_ on: Bool) throws(DeviceRefusal) {
        guard platform == .ios else {
            throw DeviceRefusal("focus is iOS's Focus; a \(platform.rawValue) device has none here")
        }
        state.withLock { $0.focus = on }
    }

    /// Android: since when the phone has been in Doze (PH-9); nil while it is awake.
    public var dozeSince: Int64? { state.withLock { $0.dozeSince } }

    /// Android: the phone goes idle (Doze) at `nowMilliseconds`, or wakes (PH-9); the
    /// service holding messages meanwhile is the world's FCM. Refused on other platforms.
    public func setIdle(_ on: Bool, nowMilliseconds: Int64) throws(DeviceRefusal) {
        guard platform == .android else {
            throw DeviceRefusal(
                "idle is Android's Doze; a \(platform.rawValue) device has none (iOS's is low_power)")
        }
        state.withLock { state in
            if on {
                if state.dozeSince == nil { state.dozeSince = nowMilliseconds }
            } else {
                state.dozeSince = nil
            }
        }
    }

    /// The permission as another phone's backup carries it (PH-13): the decision made,
    /// and how the user would answer a prompt.
    public func restorePermission(from other: Device) {
        let (authorization, grants) = other.state.withLock { ($0.authorization, $0.userGrants) }
        state.withLock { state in
            state.authorization = authorization
            state.userGrants = grants
        }
    }

    /// The user opens the app from the launcher (TAP-5: never an event).
    public func launch() throws(DeviceRefusal) -> AppState {
        try requireInstalled("launch it")
        switch appState {
        case .notRunning, .forceStopped:
            let process = start(.foreground)
            switch platform {
            case .ios: process.push.iosBridge.didFinishLaunching(remoteNotification: nil)
            case .android: process.push.androidBridge.onCreate(intent: nil)
            case .web: break
            }
        case .background:
            state.withLock { $0.app = .foreground }
        case .foreground:
            break
        }
        return appState
    }

    public func moveToBackground() throws(DeviceRefusal) -> AppState {
        try state.withLock { state throws(DeviceRefusal) in
            guard state.app.isRunning else {
                throw DeviceRefusal("the app is not running, so it cannot move to the background")
            }
            state.app = .background
            return state.app
        }
    }

    public func moveToForeground() throws(DeviceRefusal) -> AppState {
        try state.withLock { state throws(DeviceRefusal) in
            guard state.app.isRunning else {
                throw DeviceRefusal("the app is not running, so it is not in the app switcher; use launch")
            }
            state.app = .foreground
            return state.app
        }
    }

    /// The OS kills the process, or the user swipes it away: its subscriptions,
    /// pending calls and tap buffer end with it (TAP-6).
    public func kill() throws(DeviceRefusal) -> AppState {
        guard appState.isRunning else { throw DeviceRefusal("the app is not running, so there is nothing to kill") }
        endProcess(next: .notRunning)
        return .notRunning
    }

    /// Android's force stop: as `kill`, clears the app's tray entries, and nothing is
    /// delivered until the user launches the app (DEL-4).
    public func forceStop() throws(DeviceRefusal) -> AppState {
        guard platform == .android else {
            throw DeviceRefusal("force_stop is an Android operation; this device is \(platform.rawValue)")
        }
        try requireInstalled("force-stop it")
        endProcess(next: .forceStopped)
        state.withLock { $0.tray.clear() }
        return .forceStopped
    }

    /// The OS issues a new token. A running app hears of it at once; otherwise the
    /// plugin notices at the process's next start (TOK-2).
    public func rotateToken(nowMilliseconds: Int64) throws(DeviceRefusal) -> String {
        guard platform != .web else { throw DeviceRefusal("a web device has no push token to rotate") }
        try requireInstalled("rotate its token")
        let (token, process) = state.withLock { state -> (String, AppProcess?) in
            registry.retire(token: state.token, installationID: nil, at: nowMilliseconds)
            issueToken(&state)
            return (state.token ?? "", state.app.isRunning ? state.process : nil)
        }
        if let process {
            if platform == .ios {
                process.push.iosBridge.didRegisterForRemoteNotifications(deviceToken: Hex.decode(token))
            } else {
                process.push.androidBridge.onNewToken(token)
            }
        }
        return token
    }

    /// The user taps a tray entry (`newest`, `oldest` or an id), or one of its action
    /// buttons (`action`, with `text` for an input action; PH-3). It is removed; a tap or a
    /// foreground action brings the app to the foreground (launched if needed), any other
    /// action runs it in the background (started if needed); the plugin hears of it through
    /// the bridge (TAP-1). Returns the entry's id. A refusal changes nothing.
    public func tap(_ which: String, action: String? = nil, text: String? = nil) throws(DeviceRefusal) -> String {
        let (entry, button) = try state.withLock { state throws(DeviceRefusal) -> (TrayEntry, TrayEntry.Button?) in
            let entry = try Self.find(which, in: state.tray, doing: "tap")
            let button = try Self.button(action, text: text, of: entry)
            _ = state.tray.remove(entry.id)
            return (entry, button)
        }
        let foreground = button?.action.foreground ?? true
        let running = state.withLock { state -> AppProcess? in
            guard state.app.isRunning, let process = state.process else { return nil }
            if foreground { state.app = .foreground }
            return process
        }
        let process = running ?? start(foreground ? .foreground : .background)
        switch entry.content {
        case .ios(let userInfo):
            let notification = IOSNotification(identifier: entry.id, userInfo: userInfo)
            // A cold start reports a tap twice, in the launch options and in didReceive,
            // as iOS does; the plugin delivers it once. An action comes only to didReceive.
            if running == nil {
                process.push.iosBridge.didFinishLaunching(remoteNotification: button == nil ? notification : nil)
            }
            process.push.iosBridge.didReceive(
                response: notification, actionIdentifier: button?.action.id ?? IOSPushBridge.defaultActionIdentifier,
                userText: text)
        case .android(let tapIntent):
            var intent = button?.intent ?? tapIntent
            if let text { intent.extras[AndroidPushBridge.inputExtra] = .string(text) }
            if !foreground {
                process.push.androidBridge.onReceive(broadcast: intent)
            } else if running == nil {
                process.push.androidBridge.onCreate(intent: intent)
            } else {
                process.push.androidBridge.onNewIntent(intent)
            }
        case .channel(let event):
            if running == nil {
                switch platform {
                case .ios: process.push.iosBridge.didFinishLaunching(remoteNotification: nil)
                case .android: process.push.androidBridge.onCreate(intent: nil)
                case .web: break
                }
            }
            process.push.channelBridge.opened(id: entry.id, event: event)
        }
        return entry.id
    }

    /// PH-3: the button `action` names on `entry`, checked with its `text`; nil for a plain tap.
    private static func button(_ action: String?, text: String?, of entry: TrayEntry) throws(DeviceRefusal)
        -> TrayEntry.Button?
    {
        guard let action else {
            if text != nil { throw DeviceRefusal("\"text\" goes with an input action; give \"action\" too") }
            return nil
        }
        guard let button = entry.buttons.first(where: { $0.action.id == action }) else {
            let ids = entry.buttons.map(\.action.id)
            throw DeviceRefusal(
                "tray entry \(entry.id) has no action '\(action)'; "
                    + (ids.isEmpty ? "it has no actions" : "its actions are \(ids.joined(separator: ", "))"))
        }
        switch (button.action.input, text) {
        case (true, nil):
            throw DeviceRefusal("'\(action)' is an input action: give the user's \"text\"")
        case (false, _?):
            throw DeviceRefusal("'\(action)' is not an input action, so it takes no \"text\"")
        default:
            return button
        }
    }

    /// The user deletes the app: its process ends (as `kill`), its tray entries and
    /// storage go, and every token it held is retired at `nowMilliseconds`, so APNs
    /// answers 410 and FCM `UNREGISTERED` from now on. Its topics end with it.
    public func uninstall(nowMilliseconds: Int64) throws(DeviceRefusal) {
        try requireInstalled("uninstall it")
        endProcess(next: .notRunning)
        state.withLock { state in
            registry.retire(token: state.token, installationID: state.installationID, at: nowMilliseconds)
            state.installed = false
            state.token = nil
            state.installationID = nil
            state.storedToken = nil
            state.topics = []
            state.tray.clear()
            state.categories = []
            state.notificationChannels = NotificationChannelList()
            state.authorization = .undetermined
            state.channels = DeviceChannels()
        }
    }

    /// The app is installed again (or with another bundle): not running, no token
    /// until it registers, the notification permission undetermined again.
    public func install(bundleID: String?) throws(DeviceRefusal) -> String {
        try state.withLock { state throws(DeviceRefusal) -> String in
            guard !state.installed else {
                throw DeviceRefusal("the app \(state.bundleID) is already installed; uninstall it first")
            }
            state.installed = true
            if let bundleID { state.bundleID = bundleID }
            state.authorization = installedAuthorization
            issueInstallationID(&state)
            return state.bundleID
        }
    }

    /// Android: the app's Firebase library subscribes its token to an FCM topic, or
    /// leaves it (`subscribeToTopic` / `unsubscribeFromTopic`). Returns the topics now.
    public func setTopic(_ topic: String, subscribed: Bool) throws(DeviceRefusal) -> [String] {
        guard platform == .android else {
            throw DeviceRefusal("FCM topics are an Android operation here; this device is \(platform.rawValue)")
        }
        try requireInstalled("subscribe it to topics")
        return try state.withLock { state throws(DeviceRefusal) -> [String] in
            guard state.token != nil else {
                throw DeviceRefusal("the app has no FCM token yet: it gets one when it registers")
            }
            if subscribed { state.topics.insert(topic) } else { state.topics.remove(topic) }
            return state.topics.sorted()
        }
    }

    private func requireInstalled(_ action: String) throws(DeviceRefusal) {
        guard isInstalled else {
            throw DeviceRefusal("the app is not installed, so the user cannot \(action); install it first")
        }
    }

    /// The user swipes a tray entry away (PH-4): it is removed, and nothing else happens.
    /// Returns its id.
    public func dismiss(_ which: String) throws(DeviceRefusal) -> String {
        try state.withLock { state throws(DeviceRefusal) -> String in
            try Self.take(which, from: &state.tray, doing: "dismiss").id
        }
    }

    /// Takes the entry `which` names (`newest`, `oldest` or an id) out of the tray.
    private static func take(_ which: String, from tray: inout Tray, doing action: String) throws(DeviceRefusal)
        -> TrayEntry
    {
        tray.remove(try find(which, in: tray, doing: action).id)!
    }

    /// The entry `which` names (`newest`, `oldest` or an id), or a sentence saying why none.
    private static func find(_ which: String, in tray: Tray, doing action: String) throws(DeviceRefusal) -> TrayEntry {
        let entries = tray.entries
        guard !entries.isEmpty else { throw DeviceRefusal("the tray is empty: there is nothing to \(action)") }
        let chosen: TrayEntry? =
            switch which {
            case "newest": entries.last
            case "oldest": entries.first
            default: entries.first { $0.id == which }
            }
        guard let chosen else {
            let ids = entries.map(\.id).joined(separator: ", ")
            throw DeviceRefusal("no tray entry has id '\(which)'; the tray has \(ids) (or use newest / oldest)")
        }
        return chosen
    }

    // MARK: Pushes

    /// Delivers a push APNs (or simctl) accepted, as iOS would (DEL-1, DEL-2, DEL-5, DEL-6).
    public func receive(apnsPayload payload: JSONObject, collapseID: String?) -> PushOutcome {
        // What the OS decides about the entry, should there be one: its buttons (PH-2) and
        // how it is presented (PH-8), said only when a level or a Focus had a say.
        let aps = IOSNotification.APS(userInfo: payload)
        let (name, level) = (aps.category, aps.interruptionLevel)
        let (category, focus) = state.withLock { state in
            (name.flatMap { name in state.categories.first { $0.id == name } }, state.focus)
        }
        let presentation = Self.presentation(level, focus: focus, capabilities: options.capabilities)
        var outcome = deliver(
            apnsPayload: payload, aps: aps, collapseID: collapseID,
            buttons: (category?.actions ?? []).map { TrayEntry.Button(action: $0) },
            presented: level == nil && !focus ? nil : presentation.way)
        guard outcome.trayID != nil else { return outcome }
        if let name { outcome.effect += Self.categoryNote(name, category, shown: NotificationCategory.maximumActions) }
        if let note = presentation.note { outcome.effect += note }
        return outcome
    }

    /// PH-8: how iOS presents an alert of `interruption-level` `level`: `passive` always
    /// quietly; under Focus only `time-sensitive` with the Time Sensitive capability and
    /// `critical` with the Critical Alerts entitlement break through (a `critical` push
    /// without it is `active`). The note says why, when Focus or the level decided.
    static func presentation(_ level: String?, focus: Bool, capabilities: [String]) -> (
        way: TrayEntry.Presentation, note: String?
    ) {
        let critical = level == "critical" && capabilities.contains("critical-alerts")
        let effective = level == "critical" && !critical ? "active" : (level ?? "active")
        if effective == "passive" {
            return (.quiet, "; delivered quietly to the tray, no banner: its interruption level is passive (PH-8)")
        }
        guard focus else {
            return (
                .banner,
                level == "critical" && !critical
                    ? "; critical without the Critical Alerts entitlement is presented as active (PH-8)" : nil
            )
        }
        if critical { return (.banner, "; presented as a banner through Focus: a critical alert (PH-8)") }
        if effective == "time-sensitive" {
            return capabilities.contains("time-sensitive")
                ? (.banner, "; presented as a banner through Focus: time-sensitive (PH-8)")
                : (
                    .quiet,
                    "; delivered quietly to the tray: Focus is on, and the app lacks the Time Sensitive capability (PH-8)"
                )
        }
        return (.quiet, "; delivered quietly to the tray: Focus is on and the push is \(effective) (PH-8)")
    }

    /// PH-2: what a posted entry's category (`name`, declared as `category`) gave it, the
    /// first `shown` of its actions, for its effect.
    private static func categoryNote(_ name: String, _ category: NotificationCategory?, shown: Int) -> String {
        guard let category else { return "; no actions: the app declared no category '\(name)' (PH-2)" }
        let ids = category.actions.prefix(shown).map(\.id)
        return ids.isEmpty
            ? "; category '\(name)' has no actions (PH-2)"
            : "; with the actions of category '\(name)': \(ids.joined(separator: ", ")) (PH-2)"
    }

    private func deliver(
        apnsPayload payload: JSONObject, aps: IOSNotification.APS, collapseID: String?, buttons: [TrayEntry.Button],
        presented: TrayEntry.Presentation?
    ) -> PushOutcome {
        guard aps.present else {
            return PushOutcome(effect: "nothing: the payload has no aps, so iOS neither shows it nor wakes the app")
        }
        let (isAlert, wakes) = (aps.isAlert, aps.wakesApp)
        guard isAlert || wakes else {
            return PushOutcome(
                effect:
                    "nothing: without alert, sound, badge or content-available iOS neither shows the push nor hands it to the app, in any state (DEL-2)"
            )
        }
        // One lock for what the delivery reads, the badge and the notification's number, where
        // three were (the locks' share of a push 2.8k -> 2.5k instructions, callgrind).
        let badge = aps.badge?.integerValue
        let (app, allowed, process, sequence) = state.withLock { state in
            let allowed = state.authorization == .granted
            // PH-5: the badge is set in any app state, when notifications are allowed.
            if allowed, let badge, badge >= 0 { state.badge = Int(clamping: badge) }
            // The number the foreground's `willPresent` below names its notification by.
            let sequence = state.nextMessage
            if state.app == .foreground, state.process != nil, isAlert, allowed { state.nextMessage += 1 }
            return (state.app, allowed, state.process, sequence)
        }
        func show() -> PushOutcome.Posted {
            let alert = aps.alert
            let title = alert?["title"]?.stringValue
            let body = alert?.stringValue ?? alert?["body"]?.stringValue
            return state.withLock {
                $0.tray.post(
                    title: title, body: body, collapseKey: collapseID, content: .ios(userInfo: payload),
                    limit: trayLimit, buttons: buttons, presented: presented)
            }
        }
        switch (app, process) {
        case (.foreground, let process?):
            guard isAlert else {
                let live = process.push.diagnostics.liveSubscribers
                process.push.iosBridge.didReceiveRemoteNotification(userInfo: payload)
                return PushOutcome(
                    effect: Self.received(live, via: "didReceiveRemoteNotification")
                        + "; background pushes are never shown")
            }
            guard allowed else {
                if wakes { process.push.iosBridge.didReceiveRemoteNotification(userInfo: payload) }
                return PushOutcome(effect: "not presented and no event: notifications are not allowed (DEL-6)")
            }
            let live = process.push.diagnostics.liveSubscribers
            let options = process.push.iosBridge.willPresent(
                IOSNotification(identifier: DecimalDigits.id("n", sequence), userInfo: payload))
            if wakes { process.push.iosBridge.didReceiveRemoteNotification(userInfo: payload) }
            guard options.contains(.list) else { return PushOutcome(effect: Self.received(live, via: "willPresent")) }
            let posted = show()
            return PushOutcome(
                effect: Self.received(live, via: "willPresent", and: posted), trayID: posted.id)
        case (.background, let process?) where !isAlert:
            process.push.iosBridge.didReceiveRemoteNotification(userInfo: payload)
            return PushOutcome(effect: "delivered to the app in the background: no event, and never shown (DEL-2)")
        case (_, _) where !isAlert:
            return PushOutcome(
                effect: "not delivered: a background push does not launch an app that was killed or swiped away (DEL-2)"
            )
        default:
            if wakes, app == .background, let process {
                process.push.iosBridge.didReceiveRemoteNotification(userInfo: payload)
            }
            guard allowed else { return PushOutcome(effect: "not shown: notifications are not allowed (DEL-6)") }
            let posted = show()
            let why = app == .background ? "the app is in the background" : "the app is not running"
            return PushOutcome(
                effect: "\(posted.phrase) (\(why)); no event until it is tapped (DEL-2)", trayID: posted.id)
        }
    }

    /// Delivers a message FCM accepted for this device, as Android would (DEL-1,
    /// DEL-3 … DEL-6). `messageID` is FCM's `google.message_id`.
    public func receive(fcm message: FCMMessage, messageID: String) -> PushOutcome {
        var outcome = deliver(fcm: message, messageID: messageID)
        guard outcome.trayID != nil, let name = message.data[AndroidPushBridge.categoryKey] else {
            return outcome
        }
        // PH-2: the plugin adds buttons to the data messages it posts, never to a
        // notification message (FCM draws it, or the plugin posts it in the foreground).
        guard message.isNotificationMessage else {
            let category = notificationCategories().first { $0.id == name }
            outcome.effect += Self.categoryNote(name, category, shown: NotificationCategory.androidShownActions)
            return outcome
        }
        outcome.effect +=
            appState == .foreground
            ? "; no actions: only data messages get the buttons of their \"\(AndroidPushBridge.categoryKey)\" (PH-2)"
            : "; no actions: FCM draws notification messages itself, and they have none (PH-2)"
        return outcome
    }

    private func deliver(fcm message: FCMMessage, messageID: String) -> PushOutcome {
        // One lock for what the delivery reads and for starting over the last post, which a
        // foreground app's `onMessageReceived` sets below: three locks were ~0.27k
        // instructions more a message.
        let (app, allowed, foreground) = state.withLock { state in
            Self.forgetLastPost(&state)
            return (state.app, state.authorization == .granted, state.app == .foreground ? state.process : nil)
        }
        if app == .forceStopped {
            return PushOutcome(
                effect: "dropped: the app is force-stopped; nothing reaches it until it is launched (DEL-4)")
        }
        let remote = RemoteMessage(
            messageID: messageID, data: message.data,
            notification: message.isNotificationMessage
                ? RemoteMessage.Notification(title: message.title, body: message.body, tag: message.tag) : nil)
        if let process = foreground {
            let live = process.push.diagnostics.liveSubscribers
            process.push.androidBridge.onMessageReceived(remote)
            let post = lastPosted()
            return PushOutcome(
                effect: Self.received(live, via: "onMessageReceived", and: post), trayID: post.id)
        }
        if message.isNotificationMessage {
            guard allowed else { return PushOutcome(effect: "not shown: notifications are not allowed (DEL-6)") }
            // FCM draws it itself; the tap intent's extras are the message bundle.
            var extras = message.data.object
            extras["from"] = "1234567890"
            extras["google.message_id"] = .string(messageID)
            extras["google.sent_time"] = "1700000000000"
            extras["google.ttl"] = "2419200"
            extras["google.original_priority"] = .string((message.priority ?? "normal").lowercased())
            extras["google.delivered_priority"] = .string((message.priority ?? "normal").lowercased())
            extras["collapse_key"] = .string(message.collapseKey ?? bundleID)
            let channels = hasChannels
            let shown = state.withLock { state -> Result<PushOutcome.Posted, ChannelOff> in
                let channel =
                    channels
                    ? state.notificationChannels.channelForFCM(
                        requested: message.channelID, appDefault: options.resources.defaultNotificationChannelID) : nil
                if let channel, !channel.enabled { return .failure(ChannelOff(id: channel.id)) }
                if let count = message.notificationCount { state.notificationCount = count }
                return .success(
                    state.tray.post(
                        title: message.title, body: message.body, collapseKey: message.tag,
                        content: .android(intent: AndroidIntent(extras: extras)), limit: trayLimit,
                        channel: channel?.id,
                        icon: NotificationChannelList.iconForFCM(requested: message.icon, resources: options.resources)
                    ))
            }
            let posted: PushOutcome.Posted
            switch shown {
            case .success(let entry): posted = entry
            case .failure(let off):
                return PushOutcome(
                    effect: "displayed by FCM on channel '\(off.id)', which the user turned off: not shown (PH-6)")
            }
            return PushOutcome(
                effect:
                    "displayed by FCM: \(posted.phrase); its tap carries the data keys only, no event until then (DEL-3)",
                trayID: posted.id)
        }
        // A data message runs onMessageReceived in the background; a killed app's
        // process is started for it and reclaimed afterwards.
        let (process, transient) = state.withLock { state -> (AppProcess?, Bool) in
            state.app.isRunning ? (state.process, false) : (nil, true)
        }
        let worker = process ?? start(.notRunning)
        let post = postedDuring { worker.push.androidBridge.onMessageReceived(remote) }
        if transient { endProcess(next: .notRunning) }
        let why = transient ? "in a process started for it" : "in the background"
        return PushOutcome(
            effect: "onMessageReceived ran \(why) and \(post.phrase); no event until it is tapped (DEL-3)",
            trayID: post.id)
    }

    // MARK: PushSystem (what the plugin asks of the OS)

    public func notificationAuthorization() -> PushAuthorization { authorization }

    public func requestNotificationAuthorization() {
        let (granted, process) = state.withLock { state -> (Bool, AppProcess?) in
            state.authorization = state.userGrants ? .granted : .denied
            return (state.userGrants, state.process)
        }
        guard let process else { return }
        if platform == .ios {
            process.push.iosBridge.authorizationAnswered(granted: granted)
        } else {
            process.push.androidBridge.permissionResult(granted: granted)
        }
    }

    public func requestPushToken() {
        let (token, process) = state.withLock { state -> (String, AppProcess?) in
            if state.token == nil && state.installed { issueToken(&state) }
            return (state.token ?? "", state.process)
        }
        guard let process, platform != .web else { return }
        if platform == .ios {
            process.push.iosBridge.didRegisterForRemoteNotifications(deviceToken: Hex.decode(token))
        } else {
            process.push.androidBridge.tokenFetched(token)
        }
    }

    public func isAppInForeground() -> Bool { appState == .foreground }

    public func post(_ notification: TrayNotification) {
        let channels = hasChannels
        state.withLock { state in
            guard state.authorization == .granted else { return }
            let channel = channels ? notification.channelID.flatMap { state.notificationChannels.channel($0) } : nil
            if let channel, !channel.enabled {
                state.lastBlockedChannel = channel.id
                return
            }
            state.lastPost = state.tray.post(
                title: notification.title, body: notification.body, collapseKey: notification.tag,
                content: .android(
                    intent: AndroidIntent(action: notification.intentAction, extras: notification.intentExtras)),
                limit: trayLimit,
                buttons: notification.actions.map { TrayEntry.Button(action: $0.action, intent: $0.intent) },
                channel: channel?.id, icon: notification.icon)
        }
    }

    public func lastReportedToken() -> String? { state.withLock { $0.storedToken } }
    public func storeReportedToken(_ token: String) { state.withLock { $0.storedToken = token } }
    public func setNotificationCategories(_ categories: [NotificationCategory]) {
        state.withLock { $0.categories = categories }
    }
    public func notificationCategories() -> [NotificationCategory] { state.withLock { $0.categories } }

    public func stringResource(_ name: String) -> String? {
        name == AndroidPushBridge.channelNameResource ? options.resources.pushChannelName : nil
    }
    public func hasDrawable(_ name: String) -> Bool {
        name == AndroidPushBridge.iconResource && options.resources.pushIcon
    }
    public func createNotificationChannel(id: String, name: String) {
        guard hasChannels else { return }
        state.withLock { $0.notificationChannels.create(id: id, name: name) }
    }

    /// A channel the user turned off, which a notification was for (PH-6).
    private struct ChannelOff: Error {
        let id: String
    }

    /// Android 8.0 (API 26) and later have notification channels (PH-6, PH-7).
    public var hasChannels: Bool { platform == .android && options.androidAPI >= 26 }

    /// The app's notification channels, as the user left them (PH-6).
    public var notificationChannels: [NotificationChannelList.Channel] {
        state.withLock { $0.notificationChannels.channels }
    }

    /// The user turns one of the app's channels on or off in the system settings (PH-6).
    public func setNotificationChannel(_ id: String, enabled: Bool) throws(DeviceRefusal)
        -> NotificationChannelList.Channel
    {
        guard platform == .android else {
            throw DeviceRefusal("notification channels are Android's; a \(platform.rawValue) device has none")
        }
        guard hasChannels else {
            throw DeviceRefusal(
                "this phone runs API \(options.androidAPI); notification channels came with Android 8.0 (API 26)")
        }
        return try state.withLock { state throws(DeviceRefusal) in
            guard let channel = state.notificationChannels.setEnabled(id, enabled) else {
                let ids = state.notificationChannels.channels.map(\.id)
                throw DeviceRefusal(
                    "the app has no notification channel '\(id)'; "
                        + (ids.isEmpty ? "it has none yet" : "it has \(ids.joined(separator: ", "))"))
            }
            return channel
        }
    }

    // MARK: Processes

    /// Starts the app's process in `app` state. On Android the application's
    /// `onCreate` runs first, for any reason the process starts (iOS has its
    /// equivalent in `didFinishLaunching`, which the callers make).
    private func start(_ app: AppState) -> AppProcess {
        let process = AppProcess(system: DeviceLink(self), plugins: plugins, core: core)
        state.withLock { state in
            state.process = process
            state.app = app
        }
        if platform == .android { process.push.androidBridge.applicationDidStart() }
        return process
    }

    private func endProcess(next: AppState) {
        let process = state.withLock { state -> AppProcess? in
            defer {
                state.process = nil
                state.app = next
            }
            return state.process
        }
        closeConnections()
        guard let process else { return }
        let dropped = process.push.diagnostics.droppedTaps
        process.end()
        state.withLock { $0.droppedTapsInEndedProcesses += dropped }
    }

    /// Runs `body` and reports what the plugin posted while it ran.
    private func postedDuring(_ body: () -> Void) -> PushOutcome.Posted {
        state.withLock(Self.forgetLastPost)
        body()
        return lastPosted()
    }

    /// Starts over what the plugin posted, before it runs for a push.
    private static func forgetLastPost(_ state: inout State) {
        state.lastPost = nil
        state.lastBlockedChannel = nil
    }

    /// What the plugin posted since `forgetLastPost`, once.
    private func lastPosted() -> PushOutcome.Posted {
        state.withLock { state in
            // Taken, not read: read, the post was copied out of the state.
            if let post = state.lastPost.take() { return post }
            if let channel = state.lastBlockedChannel {
                return PushOutcome.Posted(id: nil, replaced: false, blockedChannel: channel)
            }
            // The plugin always posts; nothing landed only because notifications are not allowed.
            return PushOutcome.Posted(id: nil, replaced: false, refused: state.authorization != .granted)
        }
    }

    /// What a push handed to the app's `callback` did, with `live` events subscribers. The
    /// sentence is one of every push's report.
    static func received(_ live: Int, via callback: String) -> String {
        Sentence.text { appendReceived(live, via: callback, to: &$0) }
    }

    /// The same, then " and " what the tray did (`posted`). Not an optional `posted`: the
    /// post wrapped in an `Optional` for the call was a copy of it.
    static func received(_ live: Int, via callback: String, and posted: PushOutcome.Posted) -> String {
        Sentence.text { text in
            appendReceived(live, via: callback, to: &text)
            text += " and "
            posted.appendPhrase(to: &text)
        }
    }

    private static func appendReceived(_ live: Int, via callback: String, to text: inout Sentence) {
        if live == 0 {
            text += callback
            text += " ran with no events subscriber, so the received event was dropped"
            text += " (received is never buffered, DEL-1)"
        } else {
            text += "delivered as received ("
            text += callback
            text += ") to "
            text += live
            text += live == 1 ? " subscriber" : " subscribers"
        }
    }
}

extension PushOutcome {
    /// What happened to the tray during one push.
    struct Posted {
        var id: String?
        var replaced: Bool
        var refused = false
        /// The tray held `full` entries, Android's limit: the new one was not shown.
        var full: Int?
        /// The oldest entry, let go so the new one fits in the `kept` the tray keeps.
        var dropped: (id: String, kept: Int)?
        /// Posted on a channel the user turned off (PH-6).
        var blockedChannel: String?

        var phrase: String { Sentence.text { appendPhrase(to: &$0) } }

        func appendPhrase(to text: inout Sentence) {
            guard let id else {
                if let full {
                    text += "not shown: the app already has "
                    text += full
                    text += " notifications in the tray, "
                    text += "the most this phone keeps for one app (Android refuses more; device option tray_limit)"
                    return
                }
                if let blockedChannel {
                    text += "not shown: the user turned off its channel '"
                    text += blockedChannel
                    text += "' (PH-6)"
                    return
                }
                text += refused ? "not shown: notifications are not allowed (DEL-6)" : "nothing was posted to the tray"
                return
            }
            if replaced {
                text += "replaced tray entry "
                text += id
                text += " (same collapse id, DEL-5)"
            } else {
                text += "shown in the tray as "
                text += id
            }
            if let dropped {
                text += "; the oldest entry, "
                text += dropped.id
                text += ", left the tray, which keeps "
                text += dropped.kept
                text += " for one app (device option tray_limit)"
            }
        }
    }
}
