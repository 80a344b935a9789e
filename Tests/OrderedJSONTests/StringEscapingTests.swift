import Testing

@testable import OrderedJSON

/// `writeString` skips sixteen bytes, then eight, at a time while none needs escaping;
/// these check it against the plain byte-by-byte rule for every byte value at every place
/// in a block and a word, and the readers' scan for a plain string's end alike.
struct StringEscapingTests {
    /// The rule itself: `"`, `\` and bytes below 0x20 escaped, everything else as is.
    static func reference(_ text: String) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += Array(#"\""#.utf8)
            case UInt8(ascii: "\\"): out += Array(#"\\"#.utf8)
            case 0x08: out += Array(#"\b"#.utf8)
            case 0x0C: out += Array(#"\f"#.utf8)
            case 0x0A: out += Array(#"\n"#.utf8)
            case 0x0D: out += Array(#"\r"#.utf8)
            case 0x09: out += Array(#"\t"#.utf8)
            case ..<0x20: out += Array(String(format: "\\u%04x", byte).utf8)
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
        return out
    }

    @Test func everyASCIIByteAtEveryOffsetIsEscapedAsTheRuleSays() {
        for byte in UInt8(0)..<0x80 {
            // Up to two blocks and a word and a tail: every way the scans hand over.
            for length in 1...43 {
                for offset in 0..<length {
                    // Letters that differ from place to place, so that a byte written in
                    // the wrong place shows.
                    var bytes = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
                    bytes[offset] = byte
                    let text = String(decoding: bytes, as: UTF8.self)
                    var written: [UInt8] = []
                    JSON.writeString(text, to: &written)
                    #expect(written == Self.reference(text), "byte \(byte) at \(offset) of \(length)")
                    // The size the writer allots is exactly what it writes.
                    #expect(JSON.serializedSize(of: text) == written.count, "byte \(byte) at \(offset) of \(length)")
                }
            }
        }
    }

    @Test func wordTestFlagsExactlyTheWordsWithAnEscapedByte() {
        // Neighbours that make the borrow of a subtraction cross bytes: 0x00, 0x01, 0x20,
        // 0x21, 0x22, 0x23, 0x5B … 0x5D, 0x80, 0xFF.
        let interesting: [UInt8] = [
            0x00, 0x01, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7E, 0x7F, 0x80, 0xA2, 0xFF,
        ]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200_000 {
            var word: UInt64 = 0
            var first = 8
            var firstNotPlain = 8
            for place in 0..<8 {
                let byte = interesting.randomElement(using: &generator)!
                if first == 8, byte < 0x20 || byte == 0x22 || byte == 0x5C { first = place }
                let plain = byte >= 0x20 && byte <= 0x7E && byte != 0x22 && byte != 0x5C
                if firstNotPlain == 8, !plain { firstNotPlain = place }
                word |= UInt64(byte) << (place * 8)
            }
            #expect(ByteWord(word).needsEscape == (first < 8), "word \(String(word, radix: 16))")
            // The writer moves on to the first byte it flags: that one must be exact.
            #expect(ByteWord(word).firstEscapeOffset == first, "word \(String(word, radix: 16))")
            // And the parsers to the first that is not plain.
            #expect(ByteWord(word).isPlain == (firstNotPlain == 8), "word \(String(word, radix: 16))")
            #expect(ByteWord(word).firstNotPlainOffset == firstNotPlain, "word \(String(word, radix: 16))")
        }
    }

    @Test func blockTestsFlagExactlyTheFirstByteTheWordTestsFlag() {
        let interesting: [UInt8] = [
            0x00, 0x01, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7E, 0x7F, 0x80, 0xA2, 0xFF,
        ]
        var generator = SystemRandomNumberGenerator()
        var block = [UInt8](repeating: 0, count: ByteBlock.size)
        var copied = [UInt8](repeating: 0, count: ByteBlock.size)
        for round in 0..<100_000 {
            // Mostly plain letters, so that the first flagged byte falls anywhere.
            for place in 0..<ByteBlock.size {
                block[place] =
                    Int.random(in: 0..<8, using: &generator) == 0
                    ? interesting.randomElement(using: &generator)! : UInt8(ascii: "a") + UInt8(place)
            }
            if round % 7 == 0 { block = block.map { $0 < 0x20 || $0 >= 0x7F || $0 == 0x22 || $0 == 0x5C ? 0x41 : $0 } }
            let first = block.firstIndex { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C } ?? ByteBlock.size
            let firstNotPlain =
                block.firstIndex { $0 < 0x20 || $0 >= 0x7F || $0 == 0x22 || $0 == 0x5C } ?? ByteBlock.size
            block.withUnsafeBufferPointer { bytes in
                #expect(ByteBlock.firstEscapeOffset(at: bytes.baseAddress!) == first, "block \(block)")
                #expect(ByteBlock.firstNotPlainOffset(at: bytes.baseAddress!) == firstNotPlain, "block \(block)")
                copied.withUnsafeMutableBufferPointer { to in
                    #expect(ByteBlock.copy(from: bytes.baseAddress!, to: to.baseAddress!) == first, "block \(block)")
                }
            }
            #expect(copied == block)
        }
    }

    /// A plain string's end is found at its quote, and not past any byte that is not
    /// plain, wherever either falls in blocks, words and the tail.
    @Test func aPlainStringEndsAtItsQuoteAndAtNoOtherByte() {
        for byte in UInt8(0)...0xFF {
            for length in 1...43 {
                for offset in 0..<length {
                    var bytes = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
                    bytes[offset] = byte
                    let plain = byte >= 0x20 && byte <= 0x7E && byte != 0x5C
                    // With no closing quote, no end.
                    let found = bytes.withUnsafeBufferPointer {
                        ByteWord.plainStringEnd(in: $0.baseAddress!, count: length, from: 0)
                    }
                    #expect(found == (byte == 0x22 ? offset : nil), "byte \(byte) at \(offset) of \(length)")
                    // Closed by a quote after it, the string ends there when the byte is plain.
                    let closed = bytes + [UInt8(ascii: "\""), UInt8(ascii: "x")]
                    let end = closed.withUnsafeBufferPointer {
                        ByteWord.plainStringEnd(in: $0.baseAddress!, count: closed.count, from: 0)
                    }
                    #expect(
                        end == (byte == 0x22 ? offset : plain ? length : nil), "byte \(byte) at \(offset) of \(length)")
                }
            }
        }
    }

    /// Strings where escapes come close together, several in a word and across words'
    /// edges, with characters past ASCII among them: as the rule writes them, through
    /// both ways in (an array, a byte output).
    @Test func stringsDenseWithEscapesAreWrittenAsTheRuleSays() {
        let pieces = ["\"", "\\", "\n", "\u{01}", "\u{1F}", "a", "b", "c", "xyz", " ", "é", "👋", "\u{7F}", "{", ":"]
        var state: UInt64 = 0x5EED  // SplitMix64: replayable
        func next() -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int(truncatingIfNeeded: (z ^ (z >> 31)) >> 1)
        }
        for _ in 0..<20_000 {
            let text = (0..<(next() % 40)).map { _ in pieces[next() % pieces.count] }.joined()
            var written: [UInt8] = []
            JSON.writeString(text, to: &written)
            #expect(written == Self.reference(text), "\(Array(text.utf8))")
            var output = ByteOutput()
            output.appendJSONString(text)
            #expect(output.bytes == written, "\(Array(text.utf8))")
            #expect(JSON.serializedSize(of: text) == written.count)
        }
    }

    /// `ByteWord.none(in:)` asks every word, the tail's padded with spaces: a flagged byte
    /// at any place of any length is found, and a buffer with none passes.
    @Test func noWordIsFlaggedExactlyWhenNoByteIs() {
        for length in 0...19 {
            let plain = [UInt8](repeating: UInt8(ascii: "a"), count: length)
            #expect(plain.withUnsafeBufferPointer { ByteWord.none(in: $0) { $0.hasHighByte } }, "length \(length)")
            for offset in 0..<length {
                for byte: UInt8 in [0x0D, 0x80, 0xFF] {
                    var bytes = plain
                    bytes[offset] = byte
                    let none = bytes.withUnsafeBufferPointer {
                        ByteWord.none(in: $0) { $0.hasHighByte || $0.contains(0x0D) }
                    }
                    #expect(!none, "byte \(byte) at \(offset) of \(length)")
                }
            }
        }
    }

    @Test func appendingKeepsWhatTheOutputAlreadyHeld() {
        // Plain text takes one path and text with an escape another: both append.
        let texts = ["plain", "line\nbreak", "", "\"quoted\" and long enough to span words"]
        var written = Array("[".utf8)
        for text in texts {
            JSON.writeString(text, to: &written)
            written.append(UInt8(ascii: ","))
        }
        let expected = texts.reduce(Array("[".utf8)) { $0 + Self.reference($1) + [UInt8(ascii: ",")] }
        #expect(written == expected)
        // Given as bytes in place, the same text writes the same.
        var fromBytes = Array("[".utf8)
        for text in texts {
            Array(text.utf8).withUnsafeBufferPointer { JSON.writeString(utf8: $0, to: &fromBytes) }
            fromBytes.append(UInt8(ascii: ","))
        }
        #expect(fromBytes == expected)
    }

    @Test func multiByteTextIsCopiedUnchanged() {
        let text = "Réservation confirmée — 予約 🎫 \"quoted\"\n\u{1}"
        var written: [UInt8] = []
        JSON.writeString(text, to: &written)
        #expect(written == Self.reference(text))
    }
}
