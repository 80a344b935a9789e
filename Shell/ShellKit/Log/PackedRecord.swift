import HTTPMessage

/// What a network request's log record borrowed from the request (its fields and body)
/// and from its answer (fields and body), copied into bytes the entry owns and reuses, and
/// made into values again only when the entry is read.
///
/// Why: an entry that kept the request itself held the door's allocations for as long
/// as the log kept it (10,000 requests by default), and then freed them cold; the log
/// cost a push 2.2 µs of CPU over an unlogged one, and 1.5 µs packed (`cxbench logcost`,
/// three alternating pairs; 1.6k more instructions a push). The request's own memory
/// goes back while it is still warm, and a slot of the ring writes over bytes it has.
/// Requests from the other doors keep their few values as they are.
///
/// Layout: a flags byte; the request's field count, each field's name and value lengths,
/// their bytes, then the server name and the body when there are; the answer's field count,
/// each field's lengths and bytes, and its body. Lengths are 32-bit, in the machine's order.
struct PackedRecord: Sendable {
    /// The bytes, of which `used` hold the record (none: no record is packed); the slot
    /// keeps the rest for its next one.
    private var storage: [UInt8] = []
    private var used = 0

    private struct Flags: OptionSet {
        let rawValue: UInt8
        static let tls = Flags(rawValue: 1)
        static let http2 = Flags(rawValue: 2)
        static let serverName = Flags(rawValue: 4)
        static let body = Flags(rawValue: 8)
    }

    /// Whether a record is packed here (`restore` has something to put back).
    var holdsRecord: Bool { used > 0 }

    /// The bytes the slot holds, the record's and those kept for the next.
    var bytesHeld: Int { storage.count }

    /// Forgets the record, keeping the bytes for the next.
    mutating func clear() { used = 0 }

    /// Takes a network request and its answer as the network door logs them, the request's
    /// body as the record's: straight from them, with no copy of the request made.
    mutating func take(network request: HTTPRequest, answer response: HTTPResponse) {
        var flags: Flags = []
        if request.tls { flags.insert(.tls) }
        if request.http2 { flags.insert(.http2) }
        var size = 1 + 4 + request.headers.packedSize
        if let serverName = request.serverName {
            flags.insert(.serverName)
            size += 4 + serverName.utf8.count
        }
        if !request.body.isEmpty {
            flags.insert(.body)
            size += 4 + request.body.count
        }
        size += 8 + response.body.count
        for (name, value) in response.headers { size += 8 + name.utf8.count + value.utf8.count }
        reserve(size)
        storage.withUnsafeMutableBytes { raw in
            var writer = Writer(at: raw.baseAddress!)
            writer.put(flags.rawValue)
            writer.put(UInt32(request.headers.count))
            writer.at = request.headers.pack(into: writer.at)
            if let serverName = request.serverName { writer.put(text: serverName) }
            if !request.body.isEmpty { request.body.withUnsafeBytes { writer.put(counted: $0) } }
            writer.put(UInt32(response.headers.count))
            for (name, value) in response.headers {
                writer.put(text: name)
                writer.put(text: value)
            }
            response.body.withUnsafeBytes { writer.put(counted: $0) }
            precondition(writer.at == raw.baseAddress! + size, "a packed record was measured wrong")
        }
        used = size
    }

    /// `record` with the request and answer this holds put back, when it holds them.
    func restore(into record: RequestLog.Record) -> RequestLog.Record {
        guard holdsRecord else { return record }
        var record = record
        storage.withUnsafeBytes { raw in
            var reader = Reader(at: raw.baseAddress!)
            let flags = Flags(rawValue: reader.take())
            let count = Int(reader.take() as UInt32)
            let headers = HTTPHeaders(count: count, packed: raw.baseAddress! + reader.offset)
            reader.skip(headers.packedSize)
            let serverName = flags.contains(.serverName) ? reader.takeText() : nil
            if flags.contains(.body) { record.body = Array(reader.takeCounted()) }
            record.request = .network(
                HTTPRequest(
                    headers: headers, body: record.body ?? [], serverName: serverName, tls: flags.contains(.tls),
                    http2: flags.contains(.http2)))
            let answerCount = Int(reader.take() as UInt32)
            var answerHeaders: [(name: String, value: String)] = []
            answerHeaders.reserveCapacity(answerCount)
            for _ in 0..<answerCount { answerHeaders.append((reader.takeText(), reader.takeText())) }
            record.exchange = .init(
                tls: flags.contains(.tls), http2: flags.contains(.http2), responseHeaders: answerHeaders,
                responseBody: Array(reader.takeCounted()))
        }
        return record
    }

    /// Room for `size` bytes, in what the slot has when it is enough. New bytes are half
    /// again as many as the record needs, so that a slot a smaller record sized takes the
    /// next service's larger one (a shell's FCM message after an APNs push) without new
    /// bytes again; a slot that once held a large record gives its room back when the next
    /// is under half of that record.
    private mutating func reserve(_ size: Int) {
        // Made anew, not grown: growing copied the last record's bytes, soon written over,
        // and zeroed the rest a byte at a time.
        if storage.count < size || (storage.count > 4096 && size < storage.count / 3) {
            storage = [UInt8](repeating: 0, count: size + size / 2)
        }
    }

    private struct Writer {
        var at: UnsafeMutableRawPointer

        mutating func put(_ byte: UInt8) {
            at.storeBytes(of: byte, as: UInt8.self)
            at += 1
        }

        mutating func put(_ value: UInt32) {
            at.storeBytes(of: value, as: UInt32.self)
            at += 4
        }

        mutating func put(_ bytes: UnsafeRawBufferPointer) {
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
            at.copyMemory(from: base, byteCount: bytes.count)
            at += bytes.count
        }

        mutating func put(counted bytes: UnsafeRawBufferPointer) {
            put(UInt32(bytes.count))
            put(bytes)
        }

        mutating func put(text: String) {
            var text = text
            text.withUTF8 { put(counted: UnsafeRawBufferPointer($0)) }
        }
    }

    private struct Reader {
        let base: UnsafeRawPointer
        var offset = 0

        init(at base: UnsafeRawPointer) { self.base = base }

        mutating func take() -> UInt8 {
            defer { offset += 1 }
            return base.load(fromByteOffset: offset, as: UInt8.self)
        }

        mutating func take() -> UInt32 {
            defer { offset += 4 }
            return base.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
        }

        mutating func skip(_ count: Int) { offset += count }

        mutating func takeCounted() -> UnsafeRawBufferPointer {
            let count = Int(take() as UInt32)
            defer { offset += count }
            return UnsafeRawBufferPointer(start: base + offset, count: count)
        }

        mutating func takeText() -> String {
            String(decoding: takeCounted(), as: UTF8.self)
        }
    }
}
