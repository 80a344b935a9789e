/// A JSON value that keeps what the contract promises to keep: object keys in their
/// original order, integers as exact 64-bit values, and strings byte for byte
/// (NUL and non-ASCII included).
///
/// Reals are IEEE doubles; they serialize in the shortest form that reads back as
/// the same double (so `9.99` stays `9.99`, while `1E2` becomes `100.0`).
public enum JSON: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case real(Double)
    case string(String)
    case array([JSON])
    case object(JSONObject)
}

extension JSON {
    /// The string, when this value is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The object, when this value is an object.
    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The integer, when this value is an integer.
    public var integerValue: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The elements, when this value is an array.
    public var arrayValue: [JSON]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The JSON type's name as people write it ("object", "string", …), for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer: "integer"
        case .real: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// The member `key` when this value is an object that has it.
    public subscript(key: String) -> JSON? {
        objectValue?[key]
    }
}

extension JSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral,
    ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .real(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(nilLiteral: ()) { self = .null }
    /// Keys keep the order they are written in.
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(JSONObject(elements))
    }
}
