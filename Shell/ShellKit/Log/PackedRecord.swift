import HTTPMessage

/// The parts of a log record that its request lent it (the request's fields, its body,
/// the answer's fields and body), copied into bytes its entry owns and reuses, and made
/// into values again only when the entry is read.
///
/// Why: an entry that kept the request itself held the door's allocations for as long
/// as the log kept it (10,000 requests by default), and then freed them cold. That cost
/// the shell a fifth of its time a push (`cxbench logcost`: 13.7 µs of CPU a push
/// logged against 11.0 unlogged, where a build that dropped those parts was at 11.6).
/// Copied here, the request's own memory goes back while it is still warm, and a slot of
/// the ring writes over bytes it already has.
///
/// Layout: a flags byte; for a network request, its field count, each field's name and
/// value lengths, their bytes, then the server name; the body; the answer's field count,
/// each field's lengths and bytes, and its body. Lengths are 32-bit, in the machine's order.
struct PackedRecord: Sendable {
    /// The bytes, of which `used` hold the record: the slot keeps the rest for its next one.
    private var storage: [UInt8] = []
    private var used = 0

    private struct Flags: OptionSet {
        let rawValue: UInt8
        static let network = Flags(rawValue: 1)
        static let body = Flags(rawValue: 2)
        static let exchange = Flags(rawValue: 4)
        static let tls = Flags(rawValue: 8)
        static let http2 = Flags(rawValue: 16)
        static let serverName = Flags(rawValue: 32)
        static let exchangeTLS = Flags(rawValue: 64)
        static let exchangeHTTP2 = Flags(rawValue: 128)
    }

    var isEmpty: Bool { used == 0 }

    /// Forgets the record, keeping the bytes for the next.
    mutating func clear() { used = 0 }

    /// Takes `record`'s network request, body and answer into the bytes, and leaves them
    /// out of `record`; a record with none of them is left as it is. A network request's
    /// body is kept once, as the record's (the network door logs it so), and comes back
    /// as both.
    mutating func take(from record: inout RequestLog.Record) {
        // The request's parts, not the request: an optional copy of it was ~0.6k
        // instructions in reference counting.
        if case .network(let request) = record.request {
            take(
                request.headers, serverName: request.serverName, tls: request.tls, http2: request.http2,
                body: record.body, exchange: record.exchange)
            record.request = .members { _ in }
        } else if record.body != nil || record.exchange != nil {
            take(nil, serverName: nil, tls: false, http2: false, body: record.body, exchange: record.exchange)
        } else {
            return
        }
        record.body = nil
        record.exchange = nil
    }

    private mutating func take(
        _ headers: HTTPHeaders?, serverName: String?, tls: Bool, http2: Bool, body: [UInt8]?,
        exchange: RequestLog.Record.Exchange?
    ) {
        var flags: Flags = []
        var size = 1
        if let headers {
            flags.insert(.network)
            if tls { flags.insert(.tls) }
            if http2 { flags.insert(.http2) }
            size += 4 + headers.packedSize
            if let serverName {
                flags.insert(.serverName)
                size += 4 + serverName.utf8.count
            }
        }
        if let body {
            flags.insert(.body)
            size += 4 + body.count
        }
        if let exchange {
            flags.insert(.exchange)
            if exchange.tls { flags.insert(.exchangeTLS) }
            if exchange.http2 { flags.insert(.exchangeHTTP2) }
            size += 8 + exchange.responseBody.count
            for (name, value) in exchange.responseHeaders { size += 8 + name.utf8.count + value.utf8.count }
        }
        reserve(size)
        storage.withUnsafeMutableBytes { raw in
            var writer = Writer(at: raw.baseAddress!)
            writer.put(flags.rawValue)
            if let headers {
                writer.put(UInt32(headers.count))
                writer.at = headers.pack(into: writer.at)
                if let serverName { writer.put(text: serverName) }
            }
            if let body { body.withUnsafeBytes { writer.put(counted: $0) } }
            if let exchange {
                writer.put(UInt32(exchange.responseHeaders.count))
                for (name, value) in exchange.responseHeaders {
                    writer.put(text: name)
                    writer.put(text: value)
                }
                exchange.responseBody.withUnsafeBytes { writer.put(counted: $0) }
            }
            precondition(writer.at == raw.baseAddress! + size, "a packed record was measured wrong")
        }
        used = size
    }

    /// `record` with the parts this holds put back.
    func restore(into record: RequestLog.Record) -> RequestLog.Record {
        guard used > 0 else { return record }
        var record = record
        storage.withUnsafeBytes { raw in
            var reader = Reader(at: raw.baseAddress!)
            let flags = Flags(rawValue: reader.take())
            var headers: HTTPHeaders?
            var serverName: String?
            if flags.contains(.network) {
                let count = Int(reader.take() as UInt32)
                let fields = HTTPHeaders(count: count, packed: raw.baseAddress! + reader.offset)
                reader.skip(fields.packedSize)
                headers = fields
                serverName = flags.contains(.serverName) ? reader.takeText() : nil
            }
            if flags.contains(.body) { record.body = Array(reader.takeCounted()) }
            if let headers {
                record.request = .network(
                    HTTPRequest(
                        headers: headers, body: record.body ?? [], serverName: serverName, tls: flags.contains(.tls),
                        http2: flags.contains(.http2)))
            }
            if flags.contains(.exchange) {
                let count = Int(reader.take() as UInt32)
                var headers: [(name: String, value: String)] = []
                headers.reserveCapacity(count)
                for _ in 0..<count { headers.append((reader.takeText(), reader.takeText())) }
                record.exchange = .init(
                    tls: flags.contains(.exchangeTLS), http2: flags.contains(.exchangeHTTP2),
                    responseHeaders: headers, responseBody: Array(reader.takeCounted()))
            }
        }
        return record
    }

    /// Room for `size` bytes, in what the slot has when it is enough: a slot that once
    /// held a large record gives its room back when the next is under half of it.
    private mutating func reserve(_ size: Int) {
        if storage.count > 4096 && size < storage.count / 2 {
            storage = [UInt8](repeating: 0, count: size)
        } else if storage.count < size {
            storage.append(contentsOf: repeatElement(0, count: size - storage.count))
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
