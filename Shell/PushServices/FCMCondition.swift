/// FCM topic conditions: `'a' in topics && ('b' in topics || !('c' in topics))`,
/// with at most five topics.
///
/// The parser recurses once per parenthesis or `!`, so both are bounded before they
/// can exhaust a stack: a sixth topic or a nesting past `maxNesting` stops it at once.
public enum FCMCondition {
    /// Five topics need no more than a handful of levels; 32 leaves room for any
    /// honest spelling (`!(!('a' in topics))`) and is shallow on the smallest stack.
    public static let maxNesting = 32
    public static let maxTopics = 5

    /// A parsed condition, evaluated per device against the topics its token holds.
    public indirect enum Expression: Sendable, Hashable {
        case topic(String)
        case not(Expression)
        case and(Expression, Expression)
        case or(Expression, Expression)

        /// Topics of which a device must hold at least one to match, so that a send need
        /// ask only their subscribers; nil when a device with none could match (under a
        /// `!`, every device is a candidate).
        public var requiredTopics: Set<String>? {
            switch self {
            case .topic(let name): [name]
            case .not: nil
            case .and(let left, let right): left.requiredTopics ?? right.requiredTopics
            case .or(let left, let right):
                left.requiredTopics.flatMap { left in right.requiredTopics.map { left.union($0) } }
            }
        }

        /// Whether a device subscribed to `topics` receives the message.
        public func matches(_ topics: Set<String>) -> Bool {
            switch self {
            case .topic(let name): topics.contains(name)
            case .not(let inner): !inner.matches(topics)
            case .and(let left, let right): left.matches(topics) && right.matches(topics)
            case .or(let left, let right): left.matches(topics) || right.matches(topics)
            }
        }
    }

    /// The expression of a well-formed condition, or an error that says what is wrong.
    public static func parse(_ condition: String) -> Result<Expression, FCMError> {
        var parser = Parser(bytes: Array(condition.utf8))
        do throws(FCMError) {
            let expression = try parser.expression()
            parser.skipSpace()
            guard parser.index == parser.bytes.count else { throw parser.error("unexpected text") }
            return .success(expression)
        } catch {
            return .failure(error)
        }
    }

    struct Parser {
        let bytes: [UInt8]
        var index = 0
        var topics: [String] = []
        var nesting = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        func error(_ what: String) -> FCMError {
            .invalidArgument("Invalid condition: \(what) at character \(index + 1)")
        }

        mutating func skipSpace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
        }

        mutating func take(_ text: String) -> Bool {
            skipSpace()
            let token = Array(text.utf8)
            guard bytes.count - index >= token.count, Array(bytes[index..<index + token.count]) == token else {
                return false
            }
            index += token.count
            return true
        }

        mutating func expression() throws(FCMError) -> Expression {
            var result = try conjunction()
            while take("||") { result = .or(result, try conjunction()) }
            return result
        }

        mutating func conjunction() throws(FCMError) -> Expression {
            var result = try unary()
            while take("&&") { result = .and(result, try unary()) }
            return result
        }

        mutating func unary() throws(FCMError) -> Expression {
            if take("!") { return .not(try nested { parser throws(FCMError) in try parser.unary() }) }
            if take("(") {
                let inner = try nested { parser throws(FCMError) in try parser.expression() }
                guard take(")") else { throw error("missing )") }
                return inner
            }
            return .topic(try topic())
        }

        mutating func nested(_ body: (inout Parser) throws(FCMError) -> Expression) throws(FCMError) -> Expression {
            nesting += 1
            guard nesting <= FCMCondition.maxNesting else {
                throw error("nesting is deeper than \(FCMCondition.maxNesting) levels")
            }
            let result = try body(&self)
            nesting -= 1
            return result
        }

        mutating func topic() throws(FCMError) -> String {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "'") || bytes[index] == UInt8(ascii: "\"") else {
                throw error("expected a quoted topic name")
            }
            let quote = bytes[index]
            index += 1
            let start = index
            while index < bytes.count, bytes[index] != quote { index += 1 }
            guard index < bytes.count else { throw error("unterminated topic name") }
            let name = String(decoding: bytes[start..<index], as: UTF8.self)
            index += 1
            guard FCMRequest.isTopicName(name) else { throw error("malformed topic name '\(name)'") }
            guard take("in"), take("topics") else { throw error("expected 'in topics'") }
            topics.append(name)
            guard topics.count <= FCMCondition.maxTopics else {
                throw .invalidArgument(
                    "Invalid condition: at most \(FCMCondition.maxTopics) topics are allowed; topic \(topics.count) is '\(name)'"
                )
            }
            return name
        }
    }
}
