import Testing

@testable import SimulatedDevice

/// Tokens and ids are written digit by digit into a string's storage; each digit must
/// be the one its random bits name, in the real services' alphabets.
@Suite struct IDGeneratorTests {
    @Test(arguments: [1, 8, 16, 32, 33])
    func hexIsEachWordsBytesInOrderAsLowercaseDigits(byteCount: Int) {
        var generator = IDGenerator(seed: 0x7E57)
        var reference = IDGenerator(seed: 0x7E57)
        var expected = ""
        var word: UInt64 = 0
        for index in 0..<byteCount {
            if index % 8 == 0 { word = reference.next() }
            let byte = String(UInt8(truncatingIfNeeded: word >> (8 * UInt64(index % 8))), radix: 16)
            expected += byte.count == 1 ? "0" + byte : byte
        }
        #expect(generator.hex(bytes: byteCount) == expected)
    }

    @Test func uuidIsTwoWordsNibblesFromTheLowEndAsAnUppercaseCanonicalUUID() {
        var generator = IDGenerator(seed: 0x0DDB)
        var reference = IDGenerator(seed: 0x0DDB)
        for _ in 0..<100 {
            var words = [reference.next(), reference.next()]
            var expected = ""
            for index in 0..<32 {
                if [8, 12, 16, 20].contains(index) { expected += "-" }
                expected += String(words[index / 16] & 0xF, radix: 16, uppercase: true)
                words[index / 16] >>= 4
            }
            #expect(generator.uuid() == expected)
        }
    }

    @Test func base64URLNamesEachSixBitsByRFC4648sURLSafeAlphabet() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var generator = IDGenerator(seed: 0xBA5E)
        var reference = IDGenerator(seed: 0xBA5E)
        let count = 4_000
        var expected: [Character] = []
        var bits: UInt64 = 0
        var available = 0
        for _ in 0..<count {
            if available < 6 {
                bits = reference.next()
                available = 64
            }
            expected.append(alphabet[Int(bits & 63)])
            bits >>= 6
            available -= 6
        }
        let text = generator.base64URL(count)
        #expect(text == String(expected))
        #expect(Set(text) == Set(alphabet), "4,000 digits use every one of the 64")
    }

    /// FCM's message id is the interpolation it replaced, digit for digit, and draws the
    /// same random bits (a seeded world's transcript does not change).
    @Test(arguments: [1, 9, 10, 99, 100, 123_456_789, Int.max])
    func anFCMMessageIDIsZeroTheSequenceAndEightBase64URLCharacters(sequence: Int) {
        var generator = IDGenerator(seed: 0xFC4)
        var reference = IDGenerator(seed: 0xFC4)
        #expect(generator.fcmMessageID(sequence: sequence) == "0:\(sequence)%\(reference.base64URL(8))")
        #expect(generator.next() == reference.next())
    }
}
