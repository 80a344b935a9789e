import OrderedJSON
import PushServices

/// A protocol request line, with field access that turns every mistake into a
/// sentence naming the field.
struct Request {
    let op: String
    let id: JSON
    let fields: JSONObject

    struct Invalid: Error {
        let id: JSON
        let message: String
    }

    init(line: [UInt8], maxBytes: Int) throws(Invalid) {
        guard line.count <= maxBytes else {
            throw Invalid(
                id: Self.salvageID(line), message: "the line is \(line.count) bytes; the limit is \(maxBytes)")
        }
        let value: JSON
        do {
            value = try JSON.parse(line)
        } catch {
            throw Invalid(id: Self.salvageID(line), message: "the line is not JSON: \(error)")
        }
        guard let fields = value.objectValue else {
            throw Invalid(id: nil, message: "a request must be a JSON object, not \(value.typeName)")
        }
        let id = fields["id"] ?? .null
        guard let op = fields["op"] else { throw Invalid(id: id, message: "the request has no \"op\"") }
        guard let name = op.stringValue else {
            throw Invalid(id: id, message: "\"op\" must be a string, not \(op.typeName)")
        }
        self.op = name
        self.id = id
        self.fields = fields
    }

    /// A request the shell makes itself (the inspector's bulk devices): `op` and the
    /// other fields, as a line would carry them, without a line to parse.
    init(op: String, fields: JSONObject) {
        var fields = fields
        fields["op"] = .string(op)
        self.op = op
        self.id = fields["id"] ?? .null
        self.fields = fields
    }

    func invalid(_ message: String) -> Invalid { Invalid(id: id, message: message) }

    func string(_ name: String) throws(Invalid) -> String {
        guard let value = fields[name] else { throw invalid("\(op) needs a string field \"\(name)\"") }
        guard let text = value.stringValue else {
            throw invalid("\"\(name)\" must be a string, not \(value.typeName)")
        }
        return text
    }

    func optionalString(_ name: String) throws(Invalid) -> String? {
        guard let value = fields[name], value != .null else { return nil }
        guard let text = value.stringValue else { throw invalid("\"\(name)\" must be a string, not \(value.typeName)") }
        return text
    }

    func bool(_ name: String) throws(Invalid) -> Bool {
        guard case .bool(let value)? = fields[name] else { throw invalid("\(op) needs \"\(name)\": true or false") }
        return value
    }

    /// The members a body comes in, each with its exact-text form: names made once,
    /// where each request made its `_text` name by interpolation (~0.25k instructions).
    enum BodyName: String {
        case body, file

        var textName: String {
            switch self {
            case .body: "body_text"
            case .file: "file_text"
            }
        }
    }

    func optionalBool(_ name: String) throws(Invalid) -> Bool? {
        guard let value = fields[name], value != .null else { return nil }
        guard case .bool(let flag) = value else {
            throw invalid("\"\(name)\" must be true or false, not \(value.typeName)")
        }
        return flag
    }

    /// One of the value `name` holds (a JSON value, sent as its compact text) or its
    /// `_text` form (`body_text`: exact text): the bytes sent, and the value when the
    /// request already holds it parsed.
    func body(_ name: BodyName) throws(Invalid) -> (bytes: [UInt8], value: JSON?) {
        let (name, textName) = (name.rawValue, name.textName)
        switch (fields[name], fields[textName]) {
        case (nil, nil): throw invalid("\(op) needs \"\(name)\" (a JSON value) or \"\(textName)\" (exact text)")
        case (_?, _?): throw invalid("\(op) takes \"\(name)\" or \"\(textName)\", not both")
        case (let value?, nil): return (value.compactBytes, value)
        case (nil, let text?):
            guard let text = text.stringValue else {
                throw invalid("\"\(textName)\" must be a string, not \(text.typeName)")
            }
            return (Array(text.utf8), nil)
        }
    }

    /// The headers APNs reads, from `headers`: an object whose values are strings (or
    /// integers, sent as their digits), names in any case. One pass, no dictionary.
    func apnsHeaders() throws(Invalid) -> APNsHeaders {
        var headers = APNsHeaders.empty
        guard let value = fields["headers"], value != .null else { return headers }
        guard let object = value.objectValue else {
            throw invalid("\"headers\" must be an object, not \(value.typeName)")
        }
        for (name, value) in object {
            switch value {
            case .string(let text): headers.take(name: name.lowercased(), value: text)
            case .number(let number) where number.isInteger: headers.take(name: name.lowercased(), value: number.text)
            default: throw invalid("header \"\(name)\" must be a string, not \(value.typeName)")
            }
        }
        return headers
    }

    /// The `"id"` of a line that could not be parsed, when it can still be read: a
    /// top-level `"id"` member whose value is itself valid JSON. Lets a driver match
    /// the refusal to its request. `null` when there is none.
    static func salvageID(_ line: [UInt8]) -> JSON {
        let bytes = Array(line.prefix(maxSalvageBytes))
        var index = 0
        var depth = 0
        func skipString() {
            index += 1
            while index < bytes.count && bytes[index] != UInt8(ascii: "\"") {
                index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
            }
            index += 1
        }
        func skipSpace() {
            while index < bytes.count, JSONSpace.isSpace(bytes[index]) { index += 1 }
        }
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                index += 1
            case UInt8(ascii: "\""):
                let start = index
                skipString()
                guard depth == 1, bytes[start..<min(index, bytes.count)].elementsEqual(#""id""#.utf8) else { continue }
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { continue }
                index += 1
                skipSpace()
                return value(startingAt: index, in: bytes) ?? .null
            default:
                index += 1
            }
        }
        return .null
    }

    /// An id is small; a refused line is not searched past this.
    static let maxSalvageBytes = 64 << 10

    /// The shortest prefix of `bytes[start...]` that parses as one JSON value.
    private static func value(startingAt start: Int, in bytes: [UInt8]) -> JSON? {
        var end = start
        var depth = 0
        var inString = false
        while end < bytes.count {
            let byte = bytes[end]
            end += 1
            if inString {
                if byte == UInt8(ascii: "\\") {
                    end += 1
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    if depth == 0 { break }
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth <= 0 {
                    if depth < 0 { end -= 1 }
                    return try? JSON.parse(bytes[start..<end])
                }
            case UInt8(ascii: ","):
                if depth == 0 { return try? JSON.parse(bytes[start..<end - 1]) }
            default: break
            }
        }
        return try? JSON.parse(bytes[start..<min(end, bytes.count)])
    }
}
