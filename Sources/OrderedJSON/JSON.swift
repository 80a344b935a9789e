/// A JSON value that keeps what the contract promises to keep: object keys in their
/// original order, numbers as their exact text (any size, any spelling: `1.50`,
/// `1E2`, `-0`, 2^64−1), and strings byte for byte (NUL and non-ASCII included).
public enum JSON: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(JSONNumber)
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

    /// A number made from a 64-bit integer.
    public static func integer(_ value: Int64) -> JSON { .number(JSONNumber(value)) }

    /// A number made from a double, in its shortest round-trip text.
    public static func real(_ value: Double) -> JSON { .number(JSONNumber(value)) }

    /// The number, when this value is a number.
    public var numberValue: JSONNumber? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The integer, when this value is a number written as an integer that fits in 64 bits.
    public var integerValue: Int64? {
        numberValue?.int64Value
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
        case .number(let number): number.isInteger ? "integer" : "number"
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
