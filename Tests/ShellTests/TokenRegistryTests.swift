import Foundation
import PushServices
import Testing

@testable import SimulatedDevice

/// The registry's key folds a token's bytes into one word: a change anywhere in a
/// token, its tail included, must change the word, or tokens would share buckets.
struct TokenRegistryTests {
    static let fcmToken = String(repeating: "aB3-_", count: 32) + "xyz"  // 163 bytes, as FCM's
    static let apnsToken = String(repeating: "0f", count: 32)

    @Test(arguments: [fcmToken, apnsToken, "short"])
    func aTokenChangedInAnyOneByteFoldsDifferently(token: String) {
        let bytes = Array(token.utf8)
        let folded = TokenRegistry.Key(token).folded
        for index in bytes.indices {
            var changed = bytes
            changed[index] ^= 0x01
            let other = TokenRegistry.Key(String(decoding: changed, as: UTF8.self))
            #expect(other.folded != folded, "byte \(index) of \(bytes.count) left the fold unchanged")
        }
        #expect(TokenRegistry.Key(token + "a").folded != folded, "a longer token folded the same")
    }

    @Test func tokensThatDifferOnlyInTheirTailFindTheirOwnDevices() {
        let registry = TokenRegistry()
        let tokens = (0..<64).map { String(Self.fcmToken.dropLast(2)) + String(format: "%02d", $0) }
        for (index, token) in tokens.enumerated() {
            registry.issue(token: token, to: entry(device: "dev-\(index)"))
        }
        for (index, token) in tokens.enumerated() {
            #expect(registry.entry(token: token)?.deviceID == "dev-\(index)")
        }
        #expect(registry.entry(token: Self.fcmToken) == nil)
        #expect(Set(registry.recorded.tokens.map(\.0)) == Set(tokens))
    }

    private func entry(device: String) -> TokenRegistry.Entry {
        TokenRegistry.Entry(
            deviceID: device, platform: .android, bundleID: "com.example.app", environment: .development,
            project: "demo", team: "TEAM", retiredAt: nil)
    }
}
