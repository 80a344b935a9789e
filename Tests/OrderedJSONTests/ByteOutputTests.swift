import Foundation
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

    /// Copies share the memory until one writes: then the writer gets its own, and the
    /// other keeps what it had.
    @Test func aCopyKeepsWhatItHadWhenTheOtherWrites() {
        for capacity in [0, 64] {
            var first = ByteOutput(capacity: capacity)
            first.append("shared")
            var second = first
            second.append(", then the second's")
            first.append(", then the first's")
            #expect(first.bytes == Array("shared, then the first's".utf8))
            #expect(second.bytes == Array("shared, then the second's".utf8))
            var third = first
            third.truncate(to: 6)
            third.append("!")
            #expect(first.bytes == Array("shared, then the first's".utf8) && third.bytes == Array("shared!".utf8))
        }
    }

    /// The memory handed over holds the bytes after the head room, and is the caller's to
    /// free; the output is empty after, and writes again after the same head room.
    @Test func takenMemoryHoldsTheBytesAfterTheHeadRoom() throws {
        var output = ByteOutput(capacity: 4, headRoom: 10)
        let none = output.takeMemory()
        #expect(none == nil, "nothing written, nothing handed over")
        var expected: [UInt8] = []
        for round in 0..<500 {
            output.append(utf8Of: "piece \(round);")
            expected += Array("piece \(round);".utf8)
        }
        var copy = output
        let first = output.takeMemory()
        let taken = try #require(first)
        #expect(taken.headRoom == 10 && taken.count == expected.count && taken.size >= 10 + expected.count)
        let bytes = Array(
            UnsafeBufferPointer(start: (taken.block + 10).assumingMemoryBound(to: UInt8.self), count: taken.count))
        #expect(bytes == expected)
        free(taken.block)
        #expect(output.count == 0 && output.bytes.isEmpty)
        #expect(copy.bytes == expected, "a copy made before keeps its bytes")
        copy.append("!")
        output.append("again")
        let second = output.takeMemory()
        let again = try #require(second)
        let text = String(
            decoding: UnsafeRawBufferPointer(start: again.block + again.headRoom, count: again.count), as: UTF8.self)
        #expect(again.headRoom == 10 && text == "again")
        free(again.block)
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
