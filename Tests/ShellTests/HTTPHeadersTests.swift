import HTTPMessage
import Testing

/// `HTTPHeaders` keeps every field in one buffer of bytes; held here to a plain list of
/// decoded pairs, which is what it replaced: what is read, in what order, which is first.
@Suite struct HTTPHeadersTests {
    /// Names a service looks up, with some of the same length as others, and the empty one.
    static let names: [StaticString] = [
        ":path", ":method", ":authority", "apns-id", "apns-topic", "apns-priority", "authorization", "host", "x",
        "", "apns-ix",
    ]

    /// Pieces a name is made of: the names above', a colon, a multi-byte character. Names
    /// are UTF-8: both transports refuse a name that is not a token.
    static let namePieces: [[UInt8]] = [
        Array(":path".utf8), Array("apns-id".utf8), Array("x".utf8), Array("host".utf8), [0x3A], Array("é".utf8),
        Array("authorization".utf8),
    ]
    /// A value's, besides: spaces and bytes that are not UTF-8 (a lone continuation byte,
    /// a truncated sequence), which read as U+FFFD.
    static let valuePieces: [[UInt8]] = namePieces + [[0x20], [0x80], [0xE2, 0x82], [0xFF], Array("value".utf8)]

    /// Every sequence here, read every way it is made: from bytes in place, apart (a
    /// field at a time), laid out in one block as the C transport keeps them (each name
    /// and value followed by a NUL: copied whole), and in a block with a gap somewhere (a
    /// field at a time again); and from decoded pairs.
    @Test func readsAsAListOfDecodedPairsDoes() {
        var random = SplitMix(seed: 0x4854_5450)
        for _ in 0..<400 {
            let fields: [(name: [UInt8], value: [UInt8])] = (0..<Int.random(in: 0...9, using: &random)).map { _ in
                (name: Self.bytes(Self.namePieces, &random), value: Self.bytes(Self.valuePieces, &random))
            }
            let model = fields.map {
                (name: String(decoding: $0.name, as: UTF8.self), value: String(decoding: $0.value, as: UTF8.self))
            }
            let fromBytes = HTTPHeaders(count: fields.count) { index in
                fields[index].name.withUnsafeBytes { name in
                    fields[index].value.withUnsafeBytes { value in (name, value) }
                }
            }
            let gap = fields.isEmpty ? nil : Int.random(in: 0..<(2 * fields.count), using: &random)
            let inBlocks = [nil, gap].map { Self.laidOut(fields, gapAfter: $0) }
            // Values in place are the bytes sent; the pairs' are their decoded text's.
            let made =
                [(fromBytes, fields.map(\.value)), (HTTPHeaders(model), model.map { Array($0.value.utf8) })]
                + inBlocks.map { ($0, fields.map(\.value)) }
            for (headers, valueBytes) in made {
                #expect(headers.count == model.count)
                #expect(headers.map(\.name) == model.map(\.name))
                #expect(headers.map(\.value) == model.map(\.value))
                for name in Self.names {
                    let text = name.description
                    #expect(headers.firstIndex(named: name) == model.firstIndex { $0.name == text }, "\(text)")
                    #expect(headers.value(named: name) == model.first { $0.name == text }?.value, "\(text)")
                }
                for index in model.indices {
                    #expect(headers.isPseudoHeader(at: index) == model[index].name.hasPrefix(":"))
                    #expect(headers.withValueBytes(at: index) { Array($0) } == valueBytes[index])
                }
                #expect(headers.repeatedName == Self.repeatedName(model))
            }
        }
    }

    /// Two requests' fields have the same regular fields (all but the pseudo-headers) when
    /// their lists of those are equal, name for name and value for value: whatever
    /// pseudo-headers lie among them, and with NULs in names and values that would move a
    /// boundary the bytes as they lie (each name and value followed by a NUL) do not show.
    @Test func comparesItsRegularFieldsAsTheirListsDo() {
        var random = SplitMix(seed: 0x5245_4755)
        let pieces = [Array("a".utf8), [0], Array("ab".utf8), Array("é".utf8)]
        func field() -> (name: [UInt8], value: [UInt8]) {
            let pseudo = Int.random(in: 0..<4, using: &random) == 0
            return ((pseudo ? [0x3A] : []) + Self.bytes(pieces, &random), Self.bytes(pieces, &random))
        }
        func headers(_ fields: [(name: [UInt8], value: [UInt8])]) -> HTTPHeaders {
            HTTPHeaders(count: fields.count) { index in
                fields[index].name.withUnsafeBytes { name in
                    fields[index].value.withUnsafeBytes { value in (name, value) }
                }
            }
        }
        func regular(_ fields: [(name: [UInt8], value: [UInt8])]) -> [[UInt8]] {
            fields.filter { $0.name.first != 0x3A }.flatMap { [$0.name, $0.value] }
        }
        var equalSeen = 0
        for _ in 0..<3_000 {
            let fields = (0..<Int.random(in: 0...6, using: &random)).map { _ in field() }
            var other = fields
            switch (Int.random(in: 0..<5, using: &random), other.isEmpty) {
            case (0, _): break
            case (1, _): other.insert(field(), at: Int.random(in: 0...other.count, using: &random))
            case (2, false): other.remove(at: Int.random(in: 0..<other.count, using: &random))
            case (3, false): other[Int.random(in: 0..<other.count, using: &random)] = field()
            default:
                // The same bytes as they lie (each name and value, then a NUL), cut at a NUL.
                other = other.map { field in
                    let joined = field.name + [0] + field.value
                    let cut = joined.indices.filter { joined[$0] == 0 }.randomElement(using: &random)!
                    return (Array(joined[..<cut]), Array(joined[(cut + 1)...]))
                }
            }
            let same = regular(fields) == regular(other)
            equalSeen += same ? 1 : 0
            #expect(headers(fields).sameRegularFields(as: headers(other)) == same, "\(fields) \(other)")
            #expect(headers(other).sameRegularFields(as: headers(fields)) == same, "\(other) \(fields)")
        }
        #expect(equalSeen > 500 && equalSeen < 2_500)
    }

    @Test func noFieldsReadAsNone() {
        let headers = HTTPHeaders([])
        #expect(headers.isEmpty)
        #expect(headers.value(named: ":path") == nil)
        #expect(headers.repeatedName == nil)
    }

    /// `fields` as the C transport lays them out in one block: each name and value, then a
    /// NUL; with a byte more after the piece `gapAfter` counts to (names and values in
    /// turn), when given.
    static func laidOut(_ fields: [(name: [UInt8], value: [UInt8])], gapAfter: Int?) -> HTTPHeaders {
        var block: [UInt8] = []
        var spans: [(name: Range<Int>, value: Range<Int>)] = []
        for (index, field) in fields.enumerated() {
            var ranges: [Range<Int>] = []
            for (piece, bytes) in [(2 * index, field.name), (2 * index + 1, field.value)] {
                ranges.append(block.count..<(block.count + bytes.count))
                block += bytes + [0]
                if piece == gapAfter { block.append(0x2A) }
            }
            spans.append((ranges[0], ranges[1]))
        }
        return block.withUnsafeBytes { bytes in
            HTTPHeaders(count: spans.count) { index in
                (
                    UnsafeRawBufferPointer(rebasing: bytes[spans[index].name]),
                    UnsafeRawBufferPointer(rebasing: bytes[spans[index].value])
                )
            }
        }
    }

    /// A request reads its fields by name, `:path` the first one sent.
    @Test func aRequestReadsItsFieldsByName() {
        let request = HTTPRequest(
            headers: [(":method", "POST"), (":path", "/3/device/ab"), ("apns-id", "1"), (":path", "/other")],
            body: [], serverName: nil, tls: true, http2: true)
        #expect(request.path == "/3/device/ab")
        #expect(request.method == "POST")
        #expect(request.header("apns-id") == "1")
        #expect(request.header("apns-topic") == nil)
    }

    /// The list's own rule: the first name, other than a pseudo-header, seen before.
    static func repeatedName(_ pairs: [(name: String, value: String)]) -> String? {
        for (index, pair) in pairs.enumerated() where !pair.name.hasPrefix(":") {
            if pairs[..<index].contains(where: { $0.name == pair.name }) { return pair.name }
        }
        return nil
    }

    static func bytes(_ pieces: [[UInt8]], _ random: inout SplitMix) -> [UInt8] {
        (0..<Int.random(in: 0...3, using: &random)).flatMap { _ in pieces.randomElement(using: &random)! }
    }
}
