import CXHost
import Foundation
import OrderedJSON
import PushPlugin
import Synchronization

/// Resident size before and after 1,000,000 taps with no subscriber, and after
/// 100,000 subscribe/unsubscribe cycles: the tap buffer's bound holds and nothing leaks.
enum MemoryBenchmark {
    /// An OS that allows everything and remembers nothing.
    final class QuietSystem: PushSystem {
        let platform = PushPlatform.ios
        func notificationAuthorization() -> PushAuthorization { .granted }
        func requestNotificationAuthorization() {}
        func requestPushToken() {}
        func isAppInForeground() -> Bool { false }
        func post(_ notification: TrayNotification) {}
        func lastReportedToken() -> String? { nil }
        func storeReportedToken(_ token: String) {}
        func setNotificationCategories(_ categories: [NotificationCategory]) {}
        func notificationCategories() -> [NotificationCategory] { [] }
        func stringResource(_ name: String) -> String? { nil }
        func hasDrawable(_ name: String) -> Bool { false }
        func createNotificationChannel(id: String, name: String) {}
    }

    static func run() {
        let plugin = PushPlugin(system: QuietSystem())
        let host = PluginHost { _ in }
        try? host.register(plugin)
        let userInfo = JSONObject([
            ("aps", ["alert": "tap"] as JSON), ("booking", "01J9ZK3Q" as JSON), ("n", 1 as JSON),
        ])
        func tap(_ index: Int) {
            plugin.iosBridge.didReceive(
                response: IOSNotification(identifier: "n\(index)", userInfo: userInfo),
                actionIdentifier: IOSPushBridge.defaultActionIdentifier)
        }
        for index in 0..<20_000 { tap(index) }  // warm the allocator
        let before = residentBytes()
        for index in 20_000..<1_020_000 { tap(index) }
        let afterTaps = residentBytes()
        precondition(plugin.diagnostics.buffered == 32)
        report(
            "memory_taps_without_subscriber",
            [
                ("taps", 1_000_000), ("rss_before", Double(before)), ("rss_after", Double(afterTaps)),
                ("growth_bytes", Double(afterTaps - before)), ("dropped_taps", Double(plugin.diagnostics.droppedTaps)),
            ],
            target: "growth_bytes < 1048576", met: afterTaps - before < 1 << 20)

        for _ in 0..<5_000 { cycle(host) }
        let beforeCycles = residentBytes()
        for _ in 0..<100_000 { cycle(host) }
        try? host.waitUntilIdle()
        let afterCycles = residentBytes()
        report(
            "memory_subscribe_cycles",
            [
                ("cycles", 100_000), ("rss_before", Double(beforeCycles)), ("rss_after", Double(afterCycles)),
                ("growth_bytes", Double(afterCycles - beforeCycles)),
            ],
            target: "growth_bytes < 1048576", met: afterCycles - beforeCycles < 1 << 20)
    }

    static func cycle(_ host: PluginHost) {
        try? host.subscribe(key: "push", plugin: "push", stream: "events")
        host.unsubscribe(key: "push")
    }
}
