import OrderedJSON
import PushPlugin

/// One notification in the tray. It holds its own payload, so tapping it delivers
/// exactly what it was posted with (TAP-1).
public struct TrayEntry: Sendable, Equatable {
    public enum Content: Sendable, Equatable {
        /// iOS: the APNs payload, handed back as the notification's `userInfo`.
        case ios(userInfo: JSONObject)
        /// Android: the tap intent.
        case android(intent: AndroidIntent)
        /// Another channel's notification (Appwrite): the `opened` event its tap delivers.
        case channel(event: JSONObject)
    }

    /// An action button (PH-2); on Android with the intent its press sends.
    public struct Button: Sendable, Equatable {
        public var action: NotificationCategory.Action
        public var intent: AndroidIntent?

        public init(action: NotificationCategory.Action, intent: AndroidIntent? = nil) {
            self.action = action
            self.intent = intent
        }
    }

    /// iOS: how the notification was presented (PH-8).
    public enum Presentation: String, Sendable {
        case banner, quiet
    }

    public let id: String
    public var title: String?
    public var body: String?
    /// `apns-collapse-id` or `android.notification.tag` (DEL-5).
    public var collapseKey: String?
    public var content: Content
    public var buttons: [Button]
    /// iOS, when the push had an interruption level or a Focus was on; nil otherwise (a
    /// banner, as every alert is without them).
    public var presented: Presentation?
    /// Android 8.0+: the channel it was posted on, and (Android) its small icon (PH-6).
    public var channel: String?
    public var icon: String?
}

extension TrayEntry {
    /// An entry with no channel or icon (iOS's, or one read back from a state document).
    /// The tray makes its entries with the memberwise initializer, which the type keeps
    /// while its body declares none (Docs/Performance.md, "Copies the compiler makes").
    public init(
        id: String, title: String?, body: String?, collapseKey: String?, content: Content, buttons: [Button] = [],
        presented: Presentation? = nil
    ) {
        self.init(
            id: id, title: title, body: body, collapseKey: collapseKey, content: content, buttons: buttons,
            presented: presented, channel: nil, icon: nil)
    }
}

/// How many entries the OS keeps in the tray for one app, and what one more does.
public struct TrayLimit: Sendable, Equatable {
    /// The most entries the app may have at once.
    public var count: Int
    /// Android refuses a new notification when the app already has `count` (its
    /// NotificationManagerService: "Package has already posted 50 notifications. Not showing
    /// more."); iOS and the web show it and let the oldest go.
    public var refusesNew: Bool

    /// The counts a `tray_limit` device option may give.
    public static let counts = 1...1000

    /// A platform's limit: Android's is its own 50 (`MAX_PACKAGE_NOTIFICATIONS`); Apple
    /// publishes none for delivered notifications, so iOS's and the web's 64 are ours (the
    /// same as iOS's bound on an app's pending local notifications). `count`, when given,
    /// is the device option's.
    public static func of(_ platform: PushPlatform, count: Int? = nil) -> TrayLimit {
        platform == .android
            ? TrayLimit(count: count ?? 50, refusesNew: true) : TrayLimit(count: count ?? 64, refusesNew: false)
    }
}
