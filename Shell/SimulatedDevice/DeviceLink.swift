import PushPlugin

/// The OS as an app process's plugin sees it: the device, held weakly. The device
/// owns its app process, and the process's plugin needs the device as its OS;
/// holding it weakly here keeps that from being a cycle, so a device nobody holds
/// goes away and ends its process. Once the device is gone the app hears nothing.
final class DeviceLink: PushSystem {
    let platform: PushPlatform
    private weak let device: Device?

    init(_ device: Device) {
        platform = device.platform
        self.device = device
    }

    func notificationAuthorization() -> PushAuthorization { device?.notificationAuthorization() ?? .denied }
    func requestNotificationAuthorization() { device?.requestNotificationAuthorization() }
    func requestPushToken() { device?.requestPushToken() }
    func isAppInForeground() -> Bool { device?.isAppInForeground() ?? false }
    func post(_ notification: TrayNotification) { device?.post(notification) }
    func lastReportedToken() -> String? { device?.lastReportedToken() }
    func storeReportedToken(_ token: String) { device?.storeReportedToken(token) }
    func setNotificationCategories(_ categories: [NotificationCategory]) {
        device?.setNotificationCategories(categories)
    }
    func notificationCategories() -> [NotificationCategory] { device?.notificationCategories() ?? [] }
    func stringResource(_ name: String) -> String? { device?.stringResource(name) }
    func hasDrawable(_ name: String) -> Bool { device?.hasDrawable(name) ?? false }
    func createNotificationChannel(id: String, name: String) { device?.createNotificationChannel(id: id, name: name) }
    func registerChannel(
        _ request: ChannelRequest, answer: @escaping @Sendable (Result<String, ChannelRefusal>) -> Void
    ) {
        guard let device else { return answer(.failure(ChannelRefusal("the device is gone"))) }
        device.registerChannel(request, answer: answer)
    }
    func resumeChannels() { device?.resumeChannels() }
}
