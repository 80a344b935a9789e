import Foundation
import HTTPMessage

/// What a renderer of many entries (a stream, a backlog) keeps from one entry to the next.
/// A client sends the same header fields with every request, which is why HTTP/2 compresses
/// them against the last ones: writing them again, field by field, was a third of rendering
/// a streamed APNs push's entry.
struct RenderMemo {
    /// The last secret header value redacted, whatever its field's place.
    var secret = Redaction.Memo()
    /// The second (since 1970) an entry's time was last written for, and that time's
    /// text up to its milliseconds (`2026-11-30T12:00:00.`, 20 bytes).
    private(set) var second = Int64.min
    private(set) var secondText: (UInt64, UInt64, UInt32) = (0, 0, 0)
    /// The header fields last written, by their place among the fields written: what was
    /// sent, and what the writer wrote for it.
    private var fields: [Field] = []
    /// The header fields last written, and the object written for them: a client that
    /// sends the same fields again (most do: its credentials, topic and agent) has the
    /// object copied whole, its fields compared in one block rather than one by one.
    private var headers: (sent: HTTPHeaders, redacted: Bool, written: [UInt8])?

    private struct Field {
        var nameCount = 0
        /// The name's bytes, then the value's, as sent.
        var sent: [UInt8] = []
        /// `"name":"value"` as written, redacted when `redacted`.
        var written: [UInt8] = []
        var redacted = false
    }

    /// What was written for the field at `place` when it was sent as `name` and `value`
    /// and written with the same redaction; nil when that is not what the place holds.
    func written(
        at place: Int, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, redacted: Bool
    ) -> [UInt8]? {
        guard place < fields.count else { return nil }
        let field = fields[place]
        guard field.redacted == redacted, field.nameCount == name.count, field.sent.count == name.count + value.count
        else { return nil }
        let same = field.sent.withUnsafeBufferPointer { sent in
            Self.equal(sent.baseAddress, name) && Self.equal(sent.baseAddress.map { $0 + name.count }, value)
        }
        return same ? field.written : nil
    }

    /// The `headers` object written for fields whose regular fields (all but the
    /// pseudo-headers) are `headers`' and that were written with the same redaction; nil
    /// when the last ones written were not those.
    func written(_ headers: HTTPHeaders, redacted: Bool) -> [UInt8]? {
        guard let kept = self.headers, kept.redacted == redacted, headers.sameRegularFields(as: kept.sent) else {
            return nil
        }
        return kept.written
    }

    /// Keeps the `headers` object written for `headers`.
    mutating func keep(_ headers: HTTPHeaders, redacted: Bool, written: UnsafeBufferPointer<UInt8>) {
        var bytes = self.headers?.written ?? []
        self.headers = nil
        bytes.removeAll(keepingCapacity: true)
        bytes.append(contentsOf: written)
        self.headers = (headers, redacted, bytes)
    }

    /// Keeps what was written for the field at `place`: a place kept before, or the next.
    mutating func keep(
        at place: Int, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, redacted: Bool,
        written: UnsafeBufferPointer<UInt8>
    ) {
        precondition(place <= fields.count, "a writer keeps its fields in the order it writes them")
        if place == fields.count { fields.append(Field()) }
        fields[place].nameCount = name.count
        fields[place].redacted = redacted
        fields[place].sent.removeAll(keepingCapacity: true)
        fields[place].sent.append(contentsOf: name)
        fields[place].sent.append(contentsOf: value)
        fields[place].written.removeAll(keepingCapacity: true)
        fields[place].written.append(contentsOf: written)
    }

    /// Keeps `text`, the 20 bytes of a time up to its milliseconds, for `second`.
    mutating func keepSecond(_ second: Int64, text: UnsafeBufferPointer<UInt8>) {
        precondition(text.count == 20, "a time's text up to its milliseconds is 20 bytes")
        self.second = second
        withUnsafeMutableBytes(of: &secondText) { $0.copyMemory(from: UnsafeRawBufferPointer(text)) }
    }

    private static func equal(_ kept: UnsafePointer<UInt8>?, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let kept, let base = bytes.baseAddress, !bytes.isEmpty else { return bytes.isEmpty }
        return memcmp(kept, base, bytes.count) == 0
    }
}
