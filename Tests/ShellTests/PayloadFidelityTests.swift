import OrderedJSON
import PushPlugin
import Testing

@testable import SimulatedDevice

@Suite struct PayloadFidelityTests {
    /// The property behind "a shell must not change a payload value": for random
    /// payloads built from awkward values (numbers of every spelling and size, escapes,
    /// nesting), every value in the event is byte-identical to its text in the push.
    @Test func PAY_1_everyValueInTheEventIsByteIdenticalToItsTextInThePush() throws {
        var random = IDGenerator(seed: 0x5EED)
        let numbers = [
            "1.50", "1E2", "-0", "-0.0", "1.5e300", "123456789012345678.0", "18446744073709551615",
            "123456789012345678901234567890", "1e400", "5e-324", "0.1", "9007199254740993", "0",
        ]
        let strings = [#""plain""#, #""é😀\u0000""#, #""\"q\"\\""#, #""\n\t""#, #""""#]
        func value(depth: Int) -> String {
            switch Int.random(in: 0..<(depth > 3 ? 4 : 6), using: &random) {
            case 0, 1: return numbers[Int.random(in: 0..<numbers.count, using: &random)]
            case 2: return strings[Int.random(in: 0..<strings.count, using: &random)]
            case 3: return ["true", "false", "null"][Int.random(in: 0..<3, using: &random)]
            case 4:
                let elements = (0..<Int.random(in: 0..<4, using: &random)).map { _ in value(depth: depth + 1) }
                return "[" + elements.joined(separator: ",") + "]"
            default:
                let members = (0..<Int.random(in: 0..<4, using: &random)).map {
                    #""m\#($0)":\#(value(depth: depth + 1))"#
                }
                return "{" + members.joined(separator: ",") + "}"
            }
        }
        for _ in 0..<500 {
            let members = (0..<(1 + Int.random(in: 0..<6, using: &random))).map { (#""k\#($0)""#, value(depth: 0)) }
            let push =
                "{" + members.map { "\($0.0):\($0.1)" }.joined(separator: ",") + #","aps":{"alert":"x"}}"#
            let payload = try #require(try JSON.parse(text: push).objectValue)
            let event = PushEvent.ios(userInfo: payload, action: .received).compactText
            let expected = "{" + members.map { "\($0.0):\($0.1)" }.joined(separator: ",")
            #expect(event.hasPrefix(expected + ","), "push \(push) became \(event)")
        }
    }
}
