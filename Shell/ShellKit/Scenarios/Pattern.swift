import Foundation
import OrderedJSON

/// Matching a scenario's expected JSON against what the shell wrote.
struct Pattern {
    /// Values remembered by `{{name}}`.
    var captures: [String: JSON] = [:]

    /// `"*"` matches any value, `"text*"` any string that starts with `text`,
    /// `"{{name}}"` any value (remembered), `"a{{name}}b"` a string between `a` and `b`.
    /// `subset`: an expected object's keys must be present (others are ignored);
    /// otherwise the keys must be the same, in the same order, unless the expected object
    /// has a member `"*": "*"`, which stands for any other keys. A string value
    /// matches an expected object or array when it is that JSON's text.
    mutating func matches(_ expected: JSON, _ actual: JSON, subset: Bool) -> Bool {
        if case .string(let text) = expected {
            if text == "*" { return true }
            if text.hasSuffix("*"), case .string(let value) = actual, value.hasPrefix(String(text.dropLast())) {
                return true
            }
            if let name = Self.captureName(text) {
                if let known = captures[name] { return known == actual }
                captures[name] = actual
                return true
            }
            // `prefix{{name}}suffix`: the part of a string between them.
            if let open = text.range(of: "{{"),
                let close = text.range(of: "}}", range: open.upperBound..<text.endIndex),
                case .string(let value) = actual
            {
                let prefix = text[..<open.lowerBound]
                let suffix = text[close.upperBound...]
                let name = String(text[open.upperBound..<close.lowerBound])
                guard value.hasPrefix(prefix), value.hasSuffix(suffix), value.count >= prefix.count + suffix.count
                else { return false }
                let middle = JSON.string(String(value.dropFirst(prefix.count).dropLast(suffix.count)))
                if let known = captures[name] { return known == middle }
                captures[name] = middle
                return true
            }
        }
        switch (expected, actual) {
        case (.object(var pattern), .object(let value)):
            let anyOthers = pattern["*"] == .string("*")
            pattern["*"] = nil
            let open = subset || anyOthers
            if !open && pattern.orderedKeys != value.orderedKeys { return false }
            for (key, item) in pattern {
                guard let other = value[key], matches(item, other, subset: false) else { return false }
            }
            return true
        case (.array(let pattern), .array(let value)):
            guard pattern.count == value.count else { return false }
            for (item, other) in zip(pattern, value) where !matches(item, other, subset: false) { return false }
            return true
        case (.object, .string(let text)), (.array, .string(let text)):
            guard let parsed = try? JSON.parse(text: text) else { return false }
            return matches(expected, parsed, subset: false)
        default:
            return expected == actual
        }
    }

    /// Fills `{{name}}` in a request line with the remembered values' text.
    func fill(_ text: String) -> String {
        var result = text
        for (name, value) in captures {
            let replacement = value.stringValue.map { Self.escapedForJSONString($0) } ?? value.compactText
            result = result.replacingOccurrences(of: "{{\(name)}}", with: replacement)
        }
        return result
    }

    static func captureName(_ text: String) -> String? {
        guard text.hasPrefix("{{"), text.hasSuffix("}}"), text.count > 4 else { return nil }
        return String(text.dropFirst(2).dropLast(2))
    }

    /// The string as it appears between quotes in JSON.
    static func escapedForJSONString(_ text: String) -> String {
        var bytes: [UInt8] = []
        JSON.writeString(text, to: &bytes)
        return String(decoding: bytes.dropFirst().dropLast(), as: UTF8.self)
    }
}
