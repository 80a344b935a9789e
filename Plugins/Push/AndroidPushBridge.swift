import OrderedJSON

/// An FCM message as `FirebaseMessagingService.onMessageReceived` sees it.
public struct RemoteMessage: Sendable, Equatable {
    /// The notification block of a notification message.
    public struct Notification: Sendable, Equatable {
        public var title: String?
        public var body: String?
        /// `android.notification.tag` (DEL-5).
        public var tag: String?

        public init(title: String? = nil, body: String? = nil, tag: String? = nil) {
            self.title = title
            self.body = body
            self.tag = tag
        }
    }

    /// `google.message_id`.
    public var messageID: String
    /// `getData()`: the developer's keys, in order, string values.
    public var data: JSONStringMap
    public var notification: Notification?

    public init(messageID: String, data: JSONStringMap, notification: Notification? = nil) {
        self.messageID = messageID
        self.data = data
        self.notification = notification
    }
}

/// An activity intent as Android hands it over: its action and its extras, in order.
public struct AndroidIntent: Sendable, Equatable {
    /// The intent's action: `AndroidPushBridge.openAction` for a notification the
    /// plugin posted; nil for the launcher's intent and for FCM's own notifications.
    public var action: String?
    public var extras: JSONObject

    public init(action: String? = nil, extras: JSONObject) {
        self.action = action
        self.extras = extras
    }
}

/// Where an Android shell forwards the OS's callbacks, unchanged. Each method is
/// named after the `FirebaseMessagingService`, `Activity` or Firebase task callback
/// that calls it.
public struct AndroidPushBridge: Sendable {
    let plugin: PushPlugin

    /// The action of the intents the plugin posts. The plugin reads its own extras
    /// only from an intent with this action: the extras of an FCM-displayed
    /// notification are the message's data keys, and no data key may steer the
    /// plugin (DEL-3), whatever its name.
    public static let openAction = "mobiler.push.OPEN"
    /// The extra that carries a plugin-posted notification's own event (PAY-2).
    public static let payloadExtra = "mobiler_push_payload"
    /// The extra that identifies a plugin-posted notification.
    public static let idExtra = "mobiler_push_id"
    /// The extra of a button's intent that names its action (PH-3).
    public static let actionExtra = "mobiler_push_action"
    /// The `RemoteInput` result key of an input button: the OS puts the user's text here.
    public static let inputExtra = "mobiler_push_input"
    /// The data key that names the category whose buttons the plugin adds (PH-2).
    public static let categoryKey = "mobiler_category"
    /// The channel the plugin posts on, named by the app's string resource
    /// `mobiler_push_channel_name` (default "Notifications"), with the small icon
    /// `mobiler_push_icon` when the app ships one, else the system's info glyph (PH-6).
    public static let channelID = "mobiler_push"
    public static let channelNameResource = "mobiler_push_channel_name"
    public static let defaultChannelName = "Notifications"
    public static let iconResource = "mobiler_push_icon"
    public static let systemIcon = "android.R.drawable.ic_dialog_info"

    /// `Application.onCreate`: the app's process started, for any reason (a launch, a
    /// tap, a message that wakes it). The plugin asks for the current token, so that
    /// a rotation it has not told the core of is noticed (TOK-2).
    public func applicationDidStart() {
        let system = plugin.system
        system.createNotificationChannel(
            id: Self.channelID, name: system.stringResource(Self.channelNameResource) ?? Self.defaultChannelName)
        plugin.processStarted()
    }

    /// `Activity.onCreate`: the launch intent. A tap that launched the app is an
    /// `opened` event (TAP-1); a launcher intent is nothing (TAP-5).
    public func onCreate(intent: AndroidIntent?) {
        if let intent { handle(intent) }
    }

    /// `Activity.onNewIntent`: a tap while the app is running (TAP-1).
    public func onNewIntent(_ intent: AndroidIntent) {
        handle(intent)
    }

    /// `FirebaseMessagingService.onNewToken` (TOK-1, TOK-2).
    public func onNewToken(_ token: String) {
        plugin.tokenArrived(token)
    }

    /// The success listener of `FirebaseMessaging.getToken()` (REG-1).
    public func tokenFetched(_ token: String) {
        plugin.tokenArrived(token)
    }

    /// The failure listener of `FirebaseMessaging.getToken()` (REG-3).
    public func tokenFetchFailed(error: String) {
        plugin.registrationFailed(error)
    }

    /// `onRequestPermissionsResult` for `POST_NOTIFICATIONS` (REG-2).
    public func permissionResult(granted: Bool) {
        plugin.authorizationAnswered(granted: granted)
    }

    /// The plugin's `BroadcastReceiver.onReceive`: a button that does not open the app was
    /// pressed; the app's process runs in the background for it (PH-3).
    public func onReceive(broadcast intent: AndroidIntent) {
        handle(intent)
    }

    /// `FirebaseMessagingService.onMessageReceived`: every data message, and a
    /// notification message in the foreground. In the foreground it is a `received`
    /// event (DEL-1). The plugin always posts the tray notification, and its tap
    /// carries this message's own payload (DEL-3, PAY-2). The OS drops the post when
    /// notifications are not allowed (DEL-6).
    public func onMessageReceived(_ message: RemoteMessage) {
        // The notification keeps the message's text without `mobiler_push`; the event is
        // that text with the key spliced in last, made only for a subscriber.
        let stored = PushEvent.androidMessageText(
            data: message.data, notificationTitle: message.notification?.title,
            notificationBody: message.notification?.body)
        if plugin.system.isAppInForeground() {
            plugin.received(text: PushEvent.android(messageText: stored, action: .received))
        }
        // Two distinct keys, appended into room made for them: a list of pairs made an
        // array to read and looked each key up (~0.3k instructions of every message).
        var extras = JSONObject(capacity: 2)
        extras.appendUnique(Self.payloadExtra, .string(stored))
        extras.appendUnique(Self.idExtra, .string(message.messageID))
        plugin.system.post(
            TrayNotification(
                title: message.notification?.title ?? message.data["title"],
                body: message.notification?.body ?? message.data["body"],
                tag: message.notification?.tag, intentAction: Self.openAction, intentExtras: extras,
                actions: buttons(for: message, extras: extras), channelID: Self.channelID,
                icon: plugin.system.hasDrawable(Self.iconResource) ? Self.iconResource : Self.systemIcon))
    }

    /// PH-2: a data message whose `mobiler_category` names a declared category gets that
    /// category's first three actions, each an intent that names it.
    private func buttons(for message: RemoteMessage, extras: JSONObject) -> [TrayNotification.Button] {
        guard message.notification == nil, let name = message.data[Self.categoryKey],
            let category = plugin.system.notificationCategories().first(where: { $0.id == name })
        else { return [] }
        return category.actions.prefix(NotificationCategory.androidShownActions).map { action in
            var pressed = extras
            pressed[Self.actionExtra] = .string(action.id)
            return TrayNotification.Button(
                action: action, intent: AndroidIntent(action: Self.openAction, extras: pressed))
        }
    }

    private func handle(_ intent: AndroidIntent) {
        if intent.action == Self.openAction {
            guard let payloadText = intent.extras[Self.payloadExtra]?.stringValue,
                let payload = try? JSON.parse(text: payloadText).objectValue
            else { return }
            let id = intent.extras[Self.idExtra]?.stringValue ?? payloadText
            guard let action = intent.extras[Self.actionExtra]?.stringValue else {
                return plugin.opened(id: id, event: payload)
            }
            plugin.opened(
                id: id,
                event: PushEvent.acted(payload, action: action, input: intent.extras[Self.inputExtra]?.stringValue))
        } else if let messageID = intent.extras["google.message_id"]?.stringValue {
            // A notification message FCM displayed itself: the extras are the message
            // bundle; its data keys are what remains without GmsCore's own keys (DEL-3).
            plugin.opened(
                id: messageID,
                event: PushEvent.android(
                    data: intent.extras, notificationTitle: nil, notificationBody: nil, action: .opened))
        }
    }
}
