import OrderedJSON

/// What an Android app ships that decides how its notifications look (PH-6): the device
/// option `resources`.
public struct AppResources: Sendable, Equatable {
    /// The string resource `mobiler_push_channel_name`: the plugin's channel's name.
    public var pushChannelName: String?
    /// The drawable `mobiler_push_icon`: the plugin's notifications' small icon.
    public var pushIcon: Bool
    /// The manifest meta-data `com.google.firebase.messaging.default_notification_icon`.
    public var defaultNotificationIcon: Bool
    /// The manifest meta-data `com.google.firebase.messaging.default_notification_channel_id`.
    public var defaultNotificationChannelID: String?

    public init(
        pushChannelName: String? = nil, pushIcon: Bool = false, defaultNotificationIcon: Bool = false,
        defaultNotificationChannelID: String? = nil
    ) {
        self.pushChannelName = pushChannelName
        self.pushIcon = pushIcon
        self.defaultNotificationIcon = defaultNotificationIcon
        self.defaultNotificationChannelID = defaultNotificationChannelID
    }

    /// The option's keys, as the app's resources are named.
    public static let keys = [
        "mobiler_push_channel_name", "mobiler_push_icon", "default_notification_icon",
        "default_notification_channel_id",
    ]

    public var json: JSON {
        var object = JSONObject()
        if let pushChannelName { object["mobiler_push_channel_name"] = .string(pushChannelName) }
        if pushIcon { object["mobiler_push_icon"] = true }
        if defaultNotificationIcon { object["default_notification_icon"] = true }
        if let defaultNotificationChannelID {
            object["default_notification_channel_id"] = .string(defaultNotificationChannelID)
        }
        return .object(object)
    }

    /// The option as a request or a state file gives it; a sentence names what is wrong.
    public static func parse(_ value: JSON) -> Result<AppResources, DeviceRefusal> {
        guard let object = value.objectValue else { return .failure(DeviceRefusal("\"resources\" must be an object")) }
        if let unknown = object.orderedKeys.first(where: { !keys.contains($0) }) {
            return .failure(
                DeviceRefusal(
                    "\"resources\" has no '\(unknown)'; an app's resources here are \(keys.joined(separator: ", "))"))
        }
        // Each value by its kind, into the field it sets.
        let texts: [(String, WritableKeyPath<AppResources, String?>)] = [
            ("mobiler_push_channel_name", \.pushChannelName),
            ("default_notification_channel_id", \.defaultNotificationChannelID),
        ]
        let flags: [(String, WritableKeyPath<AppResources, Bool>)] = [
            ("mobiler_push_icon", \.pushIcon), ("default_notification_icon", \.defaultNotificationIcon),
        ]
        var resources = AppResources()
        for (key, field) in texts where object[key] != nil {
            guard let text = object[key]?.stringValue, !text.isEmpty else {
                return .failure(DeviceRefusal("\"resources\".\(key) must be a non-empty string"))
            }
            resources[keyPath: field] = text
        }
        for (key, field) in flags where object[key] != nil {
            guard case .bool(let shipped)? = object[key] else {
                return .failure(DeviceRefusal("\"resources\".\(key) must be true or false (whether the app ships it)"))
            }
            resources[keyPath: field] = shipped
        }
        return .success(resources)
    }
}

/// An app's notification channels on Android 8.0+ (PH-6), in the order they were
/// created, each as the user left it. They end with the install.
public struct NotificationChannelList: Sendable, Equatable {
    public struct Channel: Sendable, Equatable {
        public var id: String
        public var name: String
        public var enabled: Bool

        public init(id: String, name: String, enabled: Bool = true) {
            self.id = id
            self.name = name
            self.enabled = enabled
        }

        public var json: JSON {
            .object(JSONObject([("id", .string(id)), ("name", .string(name)), ("enabled", .bool(enabled))]))
        }
    }

    public private(set) var channels: [Channel] = []

    public init(channels: [Channel] = []) { self.channels = channels }

    /// FCM's own channel, made the first time it displays a notification no app channel takes.
    public static let fallbackID = "fcm_fallback_notification_channel"
    public static let fallbackName = "Miscellaneous"

    /// `createNotificationChannel`: a channel that exists keeps what the user set (its
    /// name follows the app's).
    public mutating func create(id: String, name: String) {
        if let index = channels.firstIndex(where: { $0.id == id }) {
            channels[index].name = name
        } else {
            channels.append(Channel(id: id, name: name))
        }
    }

    public func channel(_ id: String) -> Channel? { channels.first { $0.id == id } }

    /// The user turns a channel on or off in the system settings; nil when the app has no
    /// such channel.
    public mutating func setEnabled(_ id: String, _ enabled: Bool) -> Channel? {
        guard let index = channels.firstIndex(where: { $0.id == id }) else { return nil }
        channels[index].enabled = enabled
        return channels[index]
    }

    /// Where FCM posts a notification message: `android.notification.channel_id` when the
    /// app created it, else the app's `default_notification_channel_id` when set and
    /// created, else FCM's fallback channel (made now if it is not yet).
    public mutating func channelForFCM(requested: String?, appDefault: String?) -> Channel {
        for id in [requested, appDefault].compactMap({ $0 }) {
            if let channel = channel(id) { return channel }
        }
        create(id: Self.fallbackID, name: Self.fallbackName)
        return channel(Self.fallbackID)!
    }

    /// The small icon of a notification FCM displays: `android.notification.icon`, else
    /// the app's `default_notification_icon` meta-data, else its launcher icon.
    public static func iconForFCM(requested: String?, resources: AppResources) -> String {
        requested ?? (resources.defaultNotificationIcon ? "default_notification_icon" : "ic_launcher")
    }
}
