import CJansson

/// Limits on what `JSON.parse` accepts. Depth is bounded by jansson itself (2048).
public struct JSONLimits: Sendable, Equatable {
    /// The largest input, in bytes.
    public var maxBytes: Int

    public init(maxBytes: Int) {
        self.maxBytes = maxBytes
    }

    /// 16 MiB: far above any push payload, low enough that a hostile input cannot
    /// make the parser allocate without bound.
    public static let `default` = JSONLimits(maxBytes: 16 << 20)
}

extension JSON {
    /// Parses one JSON value (any type at the root) from UTF-8 bytes.
    ///
    /// Rejects, with the line and column: empty input, input over `limits.maxBytes`,
    /// invalid UTF-8, truncated input, trailing garbage, nesting past 2048,
    /// integers outside 64 bits (never rounded), and duplicate object keys
    /// (which would otherwise lose a value silently). `\u0000` is accepted.
    public static func parse(
        _ bytes: some Collection<UInt8>, limits: JSONLimits = .default
    ) throws(JSONError) -> JSON {
        if let result = bytes.withContiguousStorageIfAvailable({ buffer -> Result<JSON, JSONError> in
            do throws(JSONError) {
                return .success(try parseContiguous(buffer, limits: limits))
            } catch {
                return .failure(error)
            }
        }) {
            return try result.get()
        }
        let copy = Array(bytes)
        return try copy.withUnsafeBufferPointer { buffer throws(JSONError) -> JSON in
            try parseContiguous(buffer, limits: limits)
        }
    }

    /// Parses one JSON value from text; see `parse(_:limits:)`.
    public static func parse(text: String, limits: JSONLimits = .default) throws(JSONError) -> JSON {
        try parse(text.utf8, limits: limits)
    }

    private static func parseContiguous(
        _ buffer: UnsafeBufferPointer<UInt8>, limits: JSONLimits
    ) throws(JSONError) -> JSON {
        if buffer.count > limits.maxBytes {
            throw JSONError(
                kind: .tooLarge(bytes: buffer.count, limit: limits.maxBytes), line: 1, column: 1,
                reason: "the input is \(buffer.count) bytes; the limit is \(limits.maxBytes)")
        }
        if buffer.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            throw JSONError(kind: .empty, line: 1, column: 1, reason: "the input is empty")
        }
        var error = json_error_t()
        let flags = Int(JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL)
        let root = buffer.withMemoryRebound(to: CChar.self) { chars in
            json_loadb(chars.baseAddress, chars.count, flags, &error)
        }
        guard let root else { throw JSONError(jansson: error) }
        defer { cx_json_release(root) }
        return JSON(borrowing: root)
    }

    /// Converts a jansson tree (borrowed: the caller keeps its reference).
    init(borrowing node: UnsafeMutablePointer<json_t>) {
        switch cx_json_type(node) {
        case JSON_OBJECT:
            var object = JSONObject()
            var iterator = json_object_iter(node)
            while let current = iterator {
                let key = String(
                    decoding: UnsafeRawBufferPointer(
                        start: json_object_iter_key(current), count: json_object_iter_key_len(current)),
                    as: UTF8.self)
                object.appendUnique(key, JSON(borrowing: json_object_iter_value(current)))
                iterator = json_object_iter_next(node, current)
            }
            self = .object(object)
        case JSON_ARRAY:
            let count = json_array_size(node)
            var elements: [JSON] = []
            elements.reserveCapacity(count)
            for index in 0..<count {
                elements.append(JSON(borrowing: json_array_get(node, index)))
            }
            self = .array(elements)
        case JSON_STRING:
            self = .string(
                String(
                    decoding: UnsafeRawBufferPointer(start: json_string_value(node), count: json_string_length(node)),
                    as: UTF8.self))
        case JSON_INTEGER:
            self = .integer(Int64(json_integer_value(node)))
        case JSON_REAL:
            self = .real(json_real_value(node))
        case JSON_TRUE:
            self = .bool(true)
        case JSON_FALSE:
            self = .bool(false)
        default:
            self = .null
        }
    }
}

extension JSONError {
    init(jansson error: json_error_t) {
        var error = error
        let reason = String(cString: cx_json_error_text(&error))
        let kind: Kind
        switch json_error_code(rawValue: UInt32(cx_json_error_code(&error))) {
        case json_error_invalid_utf8: kind = .invalidUTF8
        case json_error_premature_end_of_input: kind = .truncated
        case json_error_end_of_input_expected: kind = .trailingGarbage
        case json_error_duplicate_key: kind = .duplicateKey
        case json_error_numeric_overflow:
            kind = reason.contains("integer") ? .integerOverflow : .syntax
        case json_error_stack_overflow: kind = .tooDeep
        default: kind = reason.contains("maximum parsing depth") ? .tooDeep : .syntax
        }
        let friendly =
            switch kind {
            case .integerOverflow: "an integer does not fit in 64 bits (\(reason))"
            case .tooDeep: "nesting is deeper than 2048 levels (\(reason))"
            default: reason
            }
        self.init(kind: kind, line: Int(error.line), column: Int(error.column), reason: friendly)
    }
}
