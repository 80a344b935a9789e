/// Push tokens and ids shaped as the real services issue them, from one fast
/// generator per device. They must be unique, not secret: SplitMix64 seeded once
/// from the system's source is plenty, and far cheaper than a system call per byte.
/// Seeded, it gives the same sequence on every machine (chaos rules' draws use that).
public struct IDGenerator: RandomNumberGenerator {
    private var state: UInt64

    public init() {
        var system = SystemRandomNumberGenerator()
        state = system.next()
    }

    /// A fixed sequence, for tests that must replay an input and seeded chaos rules.
    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// 32 random bytes, as APNs issues device tokens.
    mutating func apnsToken() -> [UInt8] {
        (0..<4).flatMap { _ in withUnsafeBytes(of: next()) { Array($0) } }
    }

    /// `<instance id>:APA91b<134 characters>`, the shape of an FCM registration token.
    mutating func fcmToken() -> String {
        "\(base64URL(22)):APA91b\(base64URL(134))"
    }

    /// An uppercase canonical UUID (8-4-4-4-12), as APNs returns in `apns-id`.
    /// Written straight into the string's storage: every push that names no `apns-id`
    /// gets one.
    mutating func uuid() -> String {
        var bits = (next(), next())
        return String(unsafeUninitializedCapacity: 36) { text in
            var at = 0
            for index in 0..<32 {
                if index == 8 || index == 12 || index == 16 || index == 20 {
                    text[at] = UInt8(ascii: "-")
                    at += 1
                }
                let nibble: UInt8
                if index < 16 {
                    nibble = UInt8(truncatingIfNeeded: bits.0 & 0xF)
                    bits.0 >>= 4
                } else {
                    nibble = UInt8(truncatingIfNeeded: bits.1 & 0xF)
                    bits.1 >>= 4
                }
                text[at] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10
                at += 1
            }
            return at
        }
    }

    mutating func base64URL(_ count: Int) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var text = [UInt8]()
        text.reserveCapacity(count)
        var bits: UInt64 = 0
        var available = 0
        for _ in 0..<count {
            if available < 6 {
                bits = next()
                available = 64
            }
            text.append(alphabet[Int(bits & 63)])
            bits >>= 6
            available -= 6
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// Lowercase hex, and back.
enum Hex {
    static func encode(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    static func decode(_ hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var high: UInt8?
        for character in hex.utf8 {
            let value: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = character - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = character - UInt8(ascii: "A") + 10
            default: continue
            }
            if let first = high {
                bytes.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return bytes
    }
}
