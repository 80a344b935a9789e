import OrderedJSON
import Testing

/// Digits written in place are the digits `String(describing:)` gives, at every length
/// from one digit to the most an `Int` (or `Int64`) has, either sign.
@Suite struct DecimalDigitsTests {
    static let values: [Int] = {
        var values = [0, 1, 9, 10, 11, 99, 100, 101, Int.max, Int.max - 1, Int.min, Int.min + 1]
        var power = 1
        for _ in 1..<19 {
            power *= 10
            values += [power - 1, power, power + 1, -power, -(power - 1)]
        }
        return values
    }()

    @Test func idsAreTheLetterAndTheNumber() {
        for value in Self.values {
            #expect(DecimalDigits.id("t", value) == "t\(value)")
            #expect(DecimalDigits.id("n", value) == "n\(value)")
        }
    }

    @Test func textsAndJSONNumbersAreTheNumbersText() {
        for value in Self.values {
            #expect(DecimalDigits.text(Int64(value)) == String(value))
            #expect(JSONNumber(Int64(value)).text == String(value))
            #expect(JSON.integer(Int64(value)).compactText == String(value))
        }
    }

    @Test func countsAndDigitsAreThoseOfTheNumbersText() {
        for value in Self.values {
            let magnitude = UInt64(value.magnitude)
            #expect(DecimalDigits.count(magnitude) == String(magnitude).count, "\(magnitude)")
            var written: [UInt8] = []
            JSON.writeDecimal(Int64(value), to: &written)
            #expect(String(decoding: written, as: UTF8.self) == String(value))
        }
        #expect(DecimalDigits.count(UInt64.max) == 20)
        var written = Array("held ".utf8)
        JSON.writeDecimal(.min, to: &written)
        #expect(String(decoding: written, as: UTF8.self) == "held \(Int64.min)")
    }
}
