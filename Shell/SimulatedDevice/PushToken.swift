/// Push tokens shaped as the real services issue them.
enum PushToken {
    /// 32 random bytes, as APNs issues them.
    static func apnsBytes() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// `<instance id>:APA91b<134 characters>`, the shape of an FCM registration token.
    static func fcm() -> String {
        "\(randomBase64URL(22)):APA91b\(randomBase64URL(134))"
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    static func bytes(fromHex hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex), index < hex.endIndex {
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return bytes
    }

    static func randomBase64URL(_ count: Int) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var generator = SystemRandomNumberGenerator()
        return String((0..<count).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }

    /// An uppercase canonical UUID, as APNs returns in `apns-id`.
    static func uuid() -> String {
        var generator = SystemRandomNumberGenerator()
        let hex = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let text = Self.hex(hex).uppercased()
        let chars = Array(text)
        return [chars[0..<8], chars[8..<12], chars[12..<16], chars[16..<20], chars[20..<32]].map { String($0) }
            .joined(separator: "-")
    }
}
