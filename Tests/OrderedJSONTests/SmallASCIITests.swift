import Testing

@testable import OrderedJSON

/// `SmallASCII.string` writes the standard library's small-string form itself; these hold
/// it to the strings `String(decoding:as:)` makes from the same bytes, for every byte value
/// at every place of every length around the small form's 15.
struct SmallASCIITests {
    /// On this platform (64-bit, little-endian) the form must hold, or the parser has
    /// silently lost its fast path.
    @Test func theLayoutHoldsHere() {
        #expect(SmallASCII.layoutHolds)
    }

    @Test func everyByteAtEveryPlaceMakesTheStringTheLibraryMakes() {
        for length in 0...18 {
            for place in 0..<max(length, 1) {
                for byte in UInt8.min...UInt8.max where length > 0 || byte == 0 {
                    // Letters that differ from place to place, so that a byte read from the
                    // wrong place shows.
                    var bytes = (0..<length).map { UInt8(ascii: "A") + UInt8($0 % 26) }
                    if length > 0 { bytes[place] = byte }
                    bytes.withUnsafeBufferPointer { buffer in
                        let made = SmallASCII.string(buffer)
                        let expected = String(decoding: buffer, as: UTF8.self)
                        #expect(made == expected, "byte \(byte) at \(place) of \(length)")
                        #expect(Array(made.utf8) == Array(expected.utf8))
                        #expect(made.hashValue == expected.hashValue)
                        // A small ASCII string has the same bits, so that no part of the library
                        // can tell the two apart; a longer one is on the heap, as the library's.
                        guard length <= SmallASCII.capacity, bytes.allSatisfy({ $0 < 0x80 }) else { return }
                        #expect(
                            unsafeBitCast(made, to: (UInt64, UInt64).self)
                                == unsafeBitCast(expected, to: (UInt64, UInt64).self),
                            "byte \(byte) at \(place) of \(length)")
                    }
                }
            }
        }
    }

    /// Made strings behave as strings: grown past the small form, compared, sliced.
    @Test func madeStringsGrowAndCompareAsAnyOther() {
        let bytes = Array("apns-topic:com.example".utf8)
        bytes.withUnsafeBufferPointer { buffer in
            let topic = SmallASCII.string(UnsafeBufferPointer(rebasing: buffer[..<10]))
            var grown = topic
            grown += ": a value long enough to move the string to the heap"
            #expect(grown == "apns-topic: a value long enough to move the string to the heap")
            #expect(topic == "apns-topic")
            #expect(topic.split(separator: "-") == ["apns", "topic"])
            #expect(topic < "apns-topics" && topic.uppercased() == "APNS-TOPIC")
        }
    }
}
