/// Where the app is in its life, as the OS sees it.
public enum AppState: String, Sendable {
    /// Never launched, or killed (by the OS, or swiped away by the user).
    case notRunning = "not_running"
    case foreground
    case background
    /// Android only: the user force-stopped the app; nothing reaches it until launched (DEL-4).
    case forceStopped = "force_stopped"

    public var isRunning: Bool { self == .foreground || self == .background }
}

/// A request that does not fit the device, with the sentence that says why.
/// The device is unchanged.
public struct DeviceRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// What the device did with an accepted push, for a person to read.
public struct PushOutcome: Sendable, Equatable {
    public var effect: String
    /// The tray entry posted or replaced, if any.
    public var trayID: String?

    public init(effect: String, trayID: String? = nil) {
        self.effect = effect
        self.trayID = trayID
    }
}
