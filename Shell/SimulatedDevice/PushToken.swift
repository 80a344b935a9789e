import OrderedJSON

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

    /// `byteCount` random bytes as lowercase hex: 32 are an APNs device token. Written
    /// straight into the string's storage, as a bulk fleet makes a million of them.
    mutating func hex(bytes byteCount: Int) -> String {
        String(unsafeUninitializedCapacity: byteCount * 2) { text in
            var word: UInt64 = 0
            for index in 0..<byteCount {
                if index % 8 == 0 { word = next() }
                let byte = UInt8(truncatingIfNeeded: word)
                word >>= 8
                text[2 * index] = Self.hexDigit(byte >> 4)
                text[2 * index + 1] = Self.hexDigit(byte & 0xF)
            }
            return byteCount * 2
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// `<instance id>:APA91b<134 characters>`, the shape of an FCM registration token.
    mutating func fcmToken() -> String {
        "\(base64URL(22)):APA91b\(base64URL(134))"
    }

    /// An uppercase canonical UUID (8-4-4-4-12), as APNs returns in `apns-id`. Digit `i`
    /// is nibble `i` of the two words, counted from the low end. Every push that names no
    /// `apns-id` gets one, so its digits are made eight at a time (`uppercaseHexDigits`)
    /// and stored as words, where a digit at a time was ~1,000 instructions a push.
    public mutating func uuid() -> String {
        let words = (next(), next())
        return String(unsafeUninitializedCapacity: 36) { text in
            guard let base = text.baseAddress else { return 0 }
            let at = UnsafeMutableRawPointer(base)
            let digits = (
                Self.uppercaseHexDigits(UInt32(truncatingIfNeeded: words.0)),
                Self.uppercaseHexDigits(UInt32(truncatingIfNeeded: words.0 >> 32)),
                Self.uppercaseHexDigits(UInt32(truncatingIfNeeded: words.1)),
                Self.uppercaseHexDigits(UInt32(truncatingIfNeeded: words.1 >> 32))
            )
            // Stored little-endian, a word's low byte (its first digit) goes first.
            func store(_ digits: UInt64, at offset: Int) {
                at.storeBytes(of: digits.littleEndian, toByteOffset: offset, as: UInt64.self)
            }
            func store(half digits: UInt64, at offset: Int) {
                let half = UInt32(truncatingIfNeeded: digits)
                at.storeBytes(of: half.littleEndian, toByteOffset: offset, as: UInt32.self)
            }
            store(digits.0, at: 0)
            store(half: digits.1, at: 9)
            store(half: digits.1 >> 32, at: 14)
            store(half: digits.2, at: 19)
            store(half: digits.2 >> 32, at: 24)
            store(digits.3, at: 28)
            (text[8], text[13], text[18], text[23]) = (0x2D, 0x2D, 0x2D, 0x2D)  // "-"
            return 36
        }
    }

    /// The eight nibbles of `value` as uppercase hex digits, one a byte, the low nibble
    /// in the low byte: each nibble spread into a byte of its own, then `0` added, and
    /// 7 more (`A` is 7 past the byte after `9`) to each byte whose nibble is 10 or more (adding 6
    /// carries into bit 4 for exactly those).
    static func uppercaseHexDigits(_ value: UInt32) -> UInt64 {
        var spread = UInt64(value)
        spread = (spread | spread << 16) & 0x0000_FFFF_0000_FFFF
        spread = (spread | spread << 8) & 0x00FF_00FF_00FF_00FF
        spread = (spread | spread << 4) & 0x0F0F_0F0F_0F0F_0F0F
        let letters = ((spread &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101
        return spread &+ 0x3030_3030_3030_3030 &+ letters &* 7
    }

    mutating func base64URL(_ count: Int) -> String {
        String(unsafeUninitializedCapacity: count) { text in
            writeBase64URL(count, into: text, at: 0)
            return count
        }
    }

    /// FCM's `google.message_id`, `0:<sequence>%<8 base64url characters>`, written
    /// straight into its storage: an interpolation was three appends and a number's
    /// `description`, ~900 instructions of every message.
    mutating func fcmMessageID(sequence: Int) -> String {
        let digits = DecimalDigits.count(UInt64(sequence))
        return String(unsafeUninitializedCapacity: 2 + digits + 1 + 8) { text in
            text[0] = UInt8(ascii: "0")
            text[1] = UInt8(ascii: ":")
            DecimalDigits.write(UInt64(sequence), into: text, endingAt: 2 + digits)
            text[2 + digits] = UInt8(ascii: "%")
            writeBase64URL(8, into: text, at: 3 + digits)
            return 2 + digits + 1 + 8
        }
    }

    private mutating func writeBase64URL(_ count: Int, into text: UnsafeMutableBufferPointer<UInt8>, at start: Int) {
        var bits: UInt64 = 0
        var available = 0
        for index in start..<(start + count) {
            if available < 6 {
                bits = next()
                available = 64
            }
            text[index] = Self.base64URLDigit(UInt8(truncatingIfNeeded: bits & 63))
            bits >>= 6
            available -= 6
        }
    }

    /// RFC 4648's URL-safe alphabet, by arithmetic rather than a table built per call.
    private static func base64URLDigit(_ value: UInt8) -> UInt8 {
        switch value {
        case 0..<26: UInt8(ascii: "A") + value
        case 26..<52: UInt8(ascii: "a") + value - 26
        case 52..<62: UInt8(ascii: "0") + value - 52
        case 62: UInt8(ascii: "-")
        default: UInt8(ascii: "_")
        }
    }
}

/// Hex back to bytes: the token an app registers with, as iOS hands it over; and bytes
/// as lowercase hex.
enum Hex {
    static func encode(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
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
