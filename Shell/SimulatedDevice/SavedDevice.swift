import PushPlugin

extension Device {
    /// What a device keeps across a restart of the world (`cxshell serve --state`), as the
    /// phone keeps it across a reboot: the install, the permission, its token and
    /// installation id, topics, the app's own storage, flight mode, and the tray by the
    /// OS's rule (iOS keeps delivered notifications, Android clears them), its channel
    /// registrations. The app does not run after a reboot: its channel connections are made
    /// again when its core next subscribes (APW-5; Docs/Install.md).
    public struct Saved: Sendable, Equatable {
        public var installed: Bool
        public var bundleID: String
        public var permission: PushAuthorization
        public var userGrants: Bool
        public var token: String?
        public var installationID: String?
        public var topics: [String]
        public var storedToken: String?
        public var tray: [TrayEntry]
        public var nextTrayID: Int
        public var nextMessage: Int
        /// Flight mode is kept across a reboot, and since when it was on.
        public var online: Bool
        public var offlineSince: Int64
        /// iOS: the app icon's badge (PH-5), and Low Power Mode (PH-10).
        public var badge: Int
        public var lowPower: Bool
        /// Android: since when the phone has been in Doze (PH-9); nil: awake.
        public var dozeSince: Int64?
        /// The app's declared categories (PH-1): the OS, or the app's storage, keeps them.
        public var categories: [NotificationCategory]
        /// iOS: a Focus is on (PH-8).
        public var focus: Bool
        /// Android 8.0+: the app's notification channels, as the user left them (PH-6).
        public var notificationChannels: [NotificationChannelList.Channel]
        /// The install's channel registrations, not its connections (APW-5 makes them again).
        public var channels: SavedChannels

        public init(
            installed: Bool, bundleID: String, permission: PushAuthorization, userGrants: Bool, token: String?,
            installationID: String?, topics: [String], storedToken: String?, tray: [TrayEntry], nextTrayID: Int,
            nextMessage: Int, online: Bool = true, offlineSince: Int64 = 0, badge: Int = 0,
            lowPower: Bool = false, dozeSince: Int64? = nil, categories: [NotificationCategory] = [],
            focus: Bool = false, notificationChannels: [NotificationChannelList.Channel] = [],
            channels: SavedChannels = SavedChannels()
        ) {
            self.installed = installed
            self.bundleID = bundleID
            self.permission = permission
            self.userGrants = userGrants
            self.token = token
            self.installationID = installationID
            self.topics = topics
            self.storedToken = storedToken
            self.tray = tray
            self.nextTrayID = nextTrayID
            self.nextMessage = nextMessage
            self.online = online
            self.offlineSince = offlineSince
            self.badge = badge
            self.lowPower = lowPower
            self.dozeSince = dozeSince
            self.categories = categories
            self.focus = focus
            self.notificationChannels = notificationChannels
            self.channels = channels
        }

        func apply(to state: inout State, platform: PushPlatform) {
            state.installed = installed
            state.authorization = permission
            state.userGrants = userGrants
            state.token = token
            state.installationID = installationID
            state.topics = Set(topics)
            state.storedToken = storedToken
            state.tray = Tray(entries: platform == .android ? [] : tray, nextID: nextTrayID)
            state.nextMessage = max(nextMessage, 1)
            state.channels.offline = !online
            state.channels.offlineSince = offlineSince
            state.badge = badge
            state.lowPower = lowPower
            state.dozeSince = dozeSince
            state.categories = categories
            state.focus = focus
            state.notificationChannels = NotificationChannelList(channels: notificationChannels)
            channels.apply(to: &state.channels)
        }
    }

    /// The device as a restart of the world keeps it (the OS's rule applied to the tray).
    public var saved: Saved {
        state.withLock { state in
            Saved(
                installed: state.installed, bundleID: state.bundleID, permission: state.authorization,
                userGrants: state.userGrants, token: state.token, installationID: state.installationID,
                topics: state.topics.sorted(), storedToken: state.storedToken,
                tray: platform == .android ? [] : state.tray.entries, nextTrayID: state.tray.nextID,
                nextMessage: state.nextMessage, online: !state.channels.offline,
                offlineSince: state.channels.offlineSince, badge: state.badge, lowPower: state.lowPower,
                dozeSince: state.dozeSince, categories: state.categories, focus: state.focus,
                notificationChannels: state.notificationChannels.channels, channels: SavedChannels(state.channels))
        }
    }
}
