import OrderedJSON

/// What the push plugin asks of the OS. A real iOS or Android shell implements it
/// over the platform's APIs; the headless shell implements it over its simulated device.
///
/// Requests are answered later through the platform bridge (for example
/// `requestPushToken` is answered by `didRegisterForRemoteNotifications` on iOS or
/// `tokenFetched` on Android), and may be answered before the request returns.
public protocol PushSystem: AnyObject, Sendable {
    var platform: PushPlatform { get }

    /// The stored notification decision (REG-2).
    func notificationAuthorization() -> PushAuthorization

    /// Shows the permission prompt; the answer arrives through the bridge's
    /// `authorizationAnswered` (iOS) or `permissionResult` (Android).
    func requestNotificationAuthorization()

    /// iOS `registerForRemoteNotifications`, Android `FirebaseMessaging.getToken`.
    func requestPushToken()

    /// Whether the app is in the foreground now.
    func isAppInForeground() -> Bool

    /// Android: posts a tray notification built by the plugin (DEL-3). The OS drops
    /// it when notifications are not allowed.
    func post(_ notification: TrayNotification)

    /// The last token the plugin reported to the core, kept in the app's own
    /// storage (UserDefaults, SharedPreferences) so a rotation while the app was not
    /// running is noticed at the next launch.
    func lastReportedToken() -> String?
    func storeReportedToken(_ token: String)

    /// The app's declared categories (PH-1), kept across its processes: on iOS by the OS
    /// (`UNUserNotificationCenter.setNotificationCategories`), on Android by the plugin in
    /// the app's own storage. The OS forgets them when the app is uninstalled.
    func setNotificationCategories(_ categories: [NotificationCategory])
    func notificationCategories() -> [NotificationCategory]

    /// Android: the app's string resource `name` (`Context.getString`); nil when the app
    /// ships none, so the plugin's own default applies (PH-6).
    func stringResource(_ name: String) -> String?
    /// Android: whether the app ships the drawable resource `name` (PH-6).
    func hasDrawable(_ name: String) -> Bool
    /// Android 8.0+: `NotificationManager.createNotificationChannel`. Creating a channel
    /// that exists changes nothing the user set (PH-6).
    func createNotificationChannel(id: String, name: String)

    /// Registers the app on another channel (its SDK's work: connect, subscribe) and
    /// answers with the token a backend reaches the app by, or a refusal. It may
    /// answer before it returns.
    func registerChannel(
        _ request: ChannelRequest, answer: @escaping @Sendable (Result<String, ChannelRefusal>) -> Void)

    /// The core subscribed to `events` for the first time in this process: the
    /// install's channel registrations reconnect now (APW-5).
    func resumeChannels()
}

extension PushSystem {
    /// A system without other channels refuses every one.
    public func registerChannel(
        _ request: ChannelRequest, answer: @escaping @Sendable (Result<String, ChannelRefusal>) -> Void
    ) {
        answer(.failure(ChannelRefusal("this system offers no '\(request.channel)' channel")))
    }

    public func resumeChannels() {}
}

/// A notification the plugin asks the OS to show (Android data messages).
public struct TrayNotification: Sendable, Equatable {
    public var title: String?
    public var body: String?
    /// `android.notification.tag`: a posted notification with the same tag replaces it (DEL-5).
    public var tag: String?
    /// The action and extras of the tap intent. The plugin reads them back in
    /// `AndroidPushBridge.onNewIntent` / `onCreate`.
    public var intentAction: String?
    public var intentExtras: JSONObject
    /// The buttons (PH-2), each with the intent its press sends.
    public var actions: [Button]
    /// Android 8.0+: the channel it is posted on, and its small icon (PH-6).
    public var channelID: String?
    public var icon: String?

    /// A button: what it shows, and the intent the OS sends when it is pressed, to the
    /// activity (`foreground`) or to the plugin's broadcast receiver. For an `input` button
    /// the OS adds the user's text to the extras under `AndroidPushBridge.inputExtra`.
    public struct Button: Sendable, Equatable {
        public var action: NotificationCategory.Action
        public var intent: AndroidIntent

        public init(action: NotificationCategory.Action, intent: AndroidIntent) {
            self.action = action
            self.intent = intent
        }
    }
}

// The Android plugin uses the memberwise initializer, kept while the body declares none: one
// that assigns the members copies the notification it built (Docs/Performance.md, "Copies the
// compiler makes of a large struct").
extension TrayNotification {
    /// A notification with no buttons, on no channel, with no icon of its own.
    public init(title: String?, body: String?, tag: String?, intentAction: String?, intentExtras: JSONObject) {
        self.init(
            title: title, body: body, tag: tag, intentAction: intentAction, intentExtras: intentExtras, actions: [],
            channelID: nil, icon: nil)
    }
}
