/// Which OS the plugin runs on; it decides the token kind and which bridge applies.
public enum PushPlatform: String, Sendable, CaseIterable {
    case ios, android, web

    /// The `platform` value of a `register` answer (REG-1); nil on the web.
    public var tokenService: String? {
        switch self {
        case .ios: "apns"
        case .android: "fcm"
        case .web: nil
        }
    }
}

/// The user's decision about notifications, as the OS reports it.
public enum PushAuthorization: String, Sendable {
    case undetermined, granted, denied
}
