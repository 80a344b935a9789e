import OrderedJSON

/// A notification as iOS hands it over: the request's identifier and its `userInfo`
/// (the APNs payload).
public struct IOSNotification: Sendable, Equatable {
    public var identifier: String
    public var userInfo: JSONObject

    public init(identifier: String, userInfo: JSONObject) {
        self.identifier = identifier
        self.userInfo = userInfo
    }

    /// An alert push has `aps.alert`, `aps.sound` or `aps.badge`; anything else
    /// (`content-available` only, or no `aps`) shows nothing (DEL-2).
    public var isAlert: Bool { Self.isAlert(userInfo: userInfo) }

    public static func isAlert(userInfo: JSONObject) -> Bool { APS(userInfo: userInfo).isAlert }

    /// A push that wakes the app has `aps.content-available` 1 (DEL-2).
    public static func wakesApp(userInfo: JSONObject) -> Bool { APS(userInfo: userInfo).wakesApp }

    /// What iOS reads of a payload's `aps`, found in one pass over its members: a push
    /// asked a dozen questions of it, each a search of the members (~1.3k instructions).
    public struct APS {
        /// Whether the payload has an `aps` object at all.
        public let present: Bool
        /// `alert`, `sound` or `badge` is there: the push shows something (DEL-2).
        public let isAlert: Bool
        /// `content-available` is 1, compared by the number's text as JSON numbers
        /// compare (`1.0` is not `1`): the push wakes the app (DEL-2).
        public let wakesApp: Bool
        public let alert: JSON?
        public let badge: JSON?
        /// `category` (PH-2), when a string.
        public let category: String?
        /// `interruption-level` (PH-8), when a string.
        public let interruptionLevel: String?

        public init(userInfo: JSONObject) {
            // Read into locals and stored once: the struct written member by member from
            // the loop was copied whole each time. An object's keys are unique.
            var sound = false
            var wakes = false
            var alert: JSON?
            var badge: JSON?
            var category: String?
            var level: String?
            let aps = userInfo["aps"]?.objectValue
            for (key, value) in aps ?? JSONObject() {
                switch key {
                case "alert": alert = value
                case "badge": badge = value
                case "sound": sound = true
                case "content-available": wakes = value.numberValue?.text == "1"
                case "category": category = value.stringValue
                case "interruption-level": level = value.stringValue
                default: break
                }
            }
            present = aps != nil
            isAlert = sound || alert != nil || badge != nil
            wakesApp = wakes
            self.alert = alert
            self.badge = badge
            self.category = category
            interruptionLevel = level
        }
    }
}

/// How a foreground notification is presented (`UNNotificationPresentationOptions`).
public struct IOSPresentationOptions: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let banner = IOSPresentationOptions(rawValue: 1)
    public static let list = IOSPresentationOptions(rawValue: 2)
    public static let sound = IOSPresentationOptions(rawValue: 4)
    public static let badge = IOSPresentationOptions(rawValue: 8)
}

/// Where an iOS shell forwards the OS's callbacks, unchanged. Each method is named
/// after the `UIApplicationDelegate` or `UNUserNotificationCenterDelegate` callback
/// that calls it.
public struct IOSPushBridge: Sendable {
    let plugin: PushPlugin

    /// `UNNotificationDefaultActionIdentifier`: the user tapped the notification itself.
    public static let defaultActionIdentifier = "com.apple.UNNotificationDefaultActionIdentifier"

    /// `application(_:didFinishLaunchingWithOptions:)`. Registers again, as iOS apps do
    /// at every launch and whatever the notification permission (token issuance does
    /// not depend on it), so a token rotated while no process held it is noticed
    /// first (TOK-2); then `remoteNotification`, the launch options' notification when
    /// a tap launched the app, is that tap's `opened` (TAP-1, TAP-2).
    public func didFinishLaunching(remoteNotification: IOSNotification?) {
        plugin.processStarted()
        if let notification = remoteNotification {
            plugin.opened(
                id: notification.identifier, event: PushEvent.ios(userInfo: notification.userInfo, action: .opened))
        }
    }

    /// `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`: the token
    /// as lowercase hex, whatever its length (REG-1).
    public func didRegisterForRemoteNotifications(deviceToken: [UInt8]) {
        plugin.tokenArrived(Self.hex(deviceToken))
    }

    /// `application(_:didFailToRegisterForRemoteNotificationsWithError:)` (REG-3).
    public func didFailToRegisterForRemoteNotifications(error: String) {
        plugin.registrationFailed(error)
    }

    /// The completion of `requestAuthorization(options:)` (REG-2).
    public func authorizationAnswered(granted: Bool) {
        plugin.authorizationAnswered(granted: granted)
    }

    /// `userNotificationCenter(_:willPresent:)`: an alert push in the foreground is a
    /// `received` event and is shown (DEL-1).
    public func willPresent(_ notification: IOSNotification) -> IOSPresentationOptions {
        plugin.received(event: PushEvent.ios(userInfo: notification.userInfo, action: .received))
        return [.banner, .list, .sound, .badge]
    }

    /// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`. In the
    /// foreground a background push is `received` (DEL-1). An alert push also reaches
    /// `willPresent`, which already delivered it, so it is not delivered twice here
    /// (Capacitor's duplicate `received` on iOS 18). In the background: nothing (DEL-2).
    public func didReceiveRemoteNotification(userInfo: JSONObject) {
        guard plugin.system.isAppInForeground(), !IOSNotification.isAlert(userInfo: userInfo) else { return }
        plugin.received(event: PushEvent.ios(userInfo: userInfo, action: .received))
    }

    /// `UNNotificationDismissActionIdentifier`: the user dismissed it (custom dismiss action).
    public static let dismissActionIdentifier = "com.apple.UNNotificationDismissActionIdentifier"

    /// `userNotificationCenter(_:didReceive:)`: the default action is a tap (TAP-1), any
    /// other action of the notification's category is that action's `opened` (PH-3), with
    /// `userText` for a text input action. The same notification reported again (it also
    /// launched the app) is ignored.
    public func didReceive(response notification: IOSNotification, actionIdentifier: String, userText: String? = nil) {
        let event = PushEvent.ios(userInfo: notification.userInfo, action: .opened)
        switch actionIdentifier {
        case Self.defaultActionIdentifier:
            plugin.opened(id: notification.identifier, event: event)
        case Self.dismissActionIdentifier:
            return
        default:
            plugin.opened(
                id: notification.identifier, event: PushEvent.acted(event, action: actionIdentifier, input: userText))
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
