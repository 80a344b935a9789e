import Testing

@testable import OrderedJSON

/// `ByteOutput` writes into room it makes ahead: what it holds must be exactly what was
/// appended, across every growth, and its JSON pieces what `JSON`'s writers write.
struct ByteOutputTests {
    @Test func piecesAcrossGrowthsAreKeptInOrder() {
        // From no room, and from room of one byte: every piece makes it grow sometimes.
        for capacity in [0, 1, 64] {
            var output = ByteOutput(capacity: capacity)
            var expected: [UInt8] = []
            var generator = SystemRandomNumberGenerator()
            for round in 0..<2_000 {
                let length = Int(generator.next() % 300)
                let piece = (0..<length).map { UInt8(truncatingIfNeeded: $0 &+ round) }
                switch round % 4 {
                case 0: output.append(piece)
                case 1: piece.withUnsafeBufferPointer { output.append($0) }
                case 2:
                    output.append(UInt8(truncatingIfNeeded: round))
                    expected.append(UInt8(truncatingIfNeeded: round))
                    continue
                default:
                    output.append("literal")
                    expected += Array("literal".utf8)
                    continue
                }
                expected += piece
            }
            #expect(output.count == expected.count)
            #expect(output.bytes == expected, "capacity \(capacity)")
            #expect(output.withBytes { Array($0) } == expected)
            #expect(output.takeBytes() == expected)
            #expect(output.count == 0 && output.bytes.isEmpty, "taken, the output is empty")
            output.append("again")
            #expect(output.bytes == Array("again".utf8), "and can be written again")
        }
    }

    @Test func jsonStringsAndNumbersAreWhatJSONsWritersWrite() {
        var generator = SystemRandomNumberGenerator()
        // Every byte below 0x80 (each escape), and some multi-byte characters.
        let alphabet = (0..<0x80).map { String(UnicodeScalar(UInt8($0))) } + ["é", "😀", "\u{2028}"]
        var output = ByteOutput()
        var expected: [UInt8] = []
        for _ in 0..<2_000 {
            let length = Int(generator.next() % 40)
            let text = (0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }.joined()
            output.appendJSONString(text)
            JSON.writeString(text, to: &expected)
            let number = Int64(bitPattern: generator.next()) >> (generator.next() % 64 as UInt64)
            output.appendDecimal(number)
            JSON.writeDecimal(number, to: &expected)
        }
        for number in [Int64.min, Int64.max, 0, -1] {
            output.appendDecimal(number)
            JSON.writeDecimal(number, to: &expected)
        }
        #expect(output.bytes == expected, "\(String(decoding: output.bytes, as: UTF8.self))")
    }

    @Test func aTruncatedOutputForgetsWhatCameAfter() {
        var output = ByteOutput(capacity: 4)
        output.append("kept")
        let mark = output.count
        output.append(", then cut")
        output.truncate(to: mark)
        output.append("!")
        #expect(output.bytes == Array("kept!".utf8))
    }
}
