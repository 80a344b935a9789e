/// Why a text is not acceptable JSON, and where.
///
/// `line` and `column` are 1-based and point at (or just past) the offending
/// character, as jansson reports them; `description` always names both.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The input is empty (or only white space).
        case empty
        /// The input is longer than the limit the caller set.
        case tooLarge(bytes: Int, limit: Int)
        /// Nesting deeper than the limit the caller set.
        case tooDeep
        /// Bytes that are not UTF-8.
        case invalidUTF8
        /// The input ends inside a value.
        case truncated
        /// A complete value is followed by more than white space.
        case trailingGarbage
        /// An object names the same key twice.
        case duplicateKey
        /// Anything else jansson rejects.
        case syntax
    }

    public let kind: Kind
    public let line: Int
    public let column: Int
    /// jansson's own words (or ours, for checks made before jansson runs).
    public let reason: String

    public init(kind: Kind, line: Int, column: Int, reason: String) {
        self.kind = kind
        self.line = line
        self.column = column
        self.reason = reason
    }

    public var description: String {
        "invalid JSON at line \(line), column \(column): \(reason)"
    }
}
