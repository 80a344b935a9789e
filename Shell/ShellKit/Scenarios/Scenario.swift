import Foundation
import OrderedJSON

/// A scenario file: requests to play and what each must produce.
///
/// ```
/// # TAP-1: tapping the older of two entries delivers the older payload
/// device {"platform":"android"}
/// launch
/// subscribe {"key":"push","plugin":"push","stream":"events"}
/// fcm {"body":{"message":{"token":"{{token}}","data":{"n":"1"}}}}
/// < delivery push {"n":"1","mobiler_push":"received"}
/// < reply {"effect":"*"}
/// ```
///
/// A request line is an op, optionally followed by a JSON object with the rest of its
/// fields, or a whole protocol line starting with `{`. Expectation lines start with
/// `<` and belong to the request above them:
/// - `< reply {…}`: the reply has these fields (others are not checked). Without
///   one, the reply must be `ok: true`.
/// - `< delivery KEY {…}` (or `[…]`, or `"text"`): an `ok: true` item on KEY whose
///   output is this JSON (same keys, same order) or this exact text.
/// - `< delivery KEY failed "text"`: an `ok: false` item.
/// - `< end KEY`: the stream on KEY ended.
/// - `KEY@DEVICE` in a delivery or an end (`< delivery push@d2 {…}`): from that
///   device only; a bare KEY matches a delivery from any device.
/// - `< nothing`: no deliveries (the same as listing none).
/// - `< report {…}`: a `{"network":…}` report line with these fields (after `await`).
/// The deliveries listed must be exactly the request's deliveries, in order.
///
/// Steps the runner plays itself, for channels (Docs/Channels.md):
/// - `broker`: starts a real `mosquitto` on a free loopback port; `{{broker}}` is
///   then its `mqtt://127.0.0.1:PORT`. `broker_stop` and `broker_start` stop it and
///   start it again on the same port, keeping what it queued.
/// - `publish {"topic":…,"qos":1,"message":{…}}` (or `"text"` for raw bytes): a
///   backend publishes through its own MQTT client and waits for the broker's ack.
/// - `await` (or `await {"count":N}`): waits (at most 10 s) until N channel messages
///   arrived, and handles them; its expectations are their deliveries and report
///   lines, in order.
/// - `front_door` (or `front_door {"address":…}`): the address the http channel's
///   URLs name (no socket is opened).
/// - `http {"method","path","headers","body" or "body_text","sign"}`: a request handed
///   to the front door's services; its reply line has `status` and `body`. `sign`
///   (a webhook signing key) adds Standard Webhooks headers signed now.
/// In patterns `"*"` matches any value, `"text*"` any string starting with `text`, and `"{{name}}"` matches any value the first
/// time and remembers it; later it must be equal. Request lines may use `{{name}}`
/// to send a remembered value (`{{token}}` is always the device's current token).
public struct Scenario: Sendable {
    public struct Step: Sendable {
        public let line: Int
        /// The request as written, `{{name}}` not yet filled in.
        public let request: String
        /// Comment lines just above the request.
        public let notes: [String]
        public var expectations: [Expectation] = []
    }

    public enum Expectation: Sendable, Equatable {
        case reply(JSON, line: Int)
        case delivery(key: String, device: String?, ok: Bool, output: JSON, line: Int)
        case end(key: String, device: String?, line: Int)
        case report(JSON, line: Int)
        case nothing(line: Int)
    }

    public struct SyntaxError: Error, Sendable, CustomStringConvertible {
        public let line: Int
        public let message: String
        public var description: String { "line \(line): \(message)" }
    }

    public let name: String
    public var steps: [Step] = []
    /// Comments after the last request.
    public var trailingNotes: [String] = []

    public init(name: String, text: String) throws(SyntaxError) {
        self.name = name
        var notes: [String] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = index + 1
            let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if text.isEmpty { continue }
            if text.hasPrefix("#") {
                notes.append(text.dropFirst().trimmingCharacters(in: .whitespaces))
            } else if text.hasPrefix("<") {
                guard !steps.isEmpty else {
                    throw SyntaxError(line: line, message: "an expectation before any request")
                }
                steps[steps.count - 1].expectations.append(try Self.expectation(String(text.dropFirst()), line: line))
            } else {
                steps.append(Step(line: line, request: text, notes: notes))
                notes = []
            }
        }
        trailingNotes = notes
    }

    static func expectation(_ text: String, line: Int) throws(SyntaxError) -> Expectation {
        let text = text.trimmingCharacters(in: .whitespaces)
        let (word, rest) = text.splitFirstWord()
        switch word {
        case "nothing":
            return .nothing(line: line)
        case "end":
            guard !rest.isEmpty else { throw SyntaxError(line: line, message: "end needs a key") }
            let (key, device) = Self.keyAndDevice(rest)
            return .end(key: key, device: device, line: line)
        case "reply", "report":
            let pattern = try json(rest, line: line)
            guard pattern.objectValue != nil else {
                throw SyntaxError(line: line, message: "\(word) needs a JSON object")
            }
            return word == "reply" ? .reply(pattern, line: line) : .report(pattern, line: line)
        case "delivery":
            let (word, after) = rest.splitFirstWord()
            guard !word.isEmpty, !after.isEmpty else {
                throw SyntaxError(line: line, message: "delivery needs a key and an output")
            }
            let (key, device) = Self.keyAndDevice(word)
            let (flag, failedText) = after.splitFirstWord()
            if flag == "failed" {
                return .delivery(
                    key: key, device: device, ok: false, output: try json(failedText, line: line), line: line)
            }
            return .delivery(key: key, device: device, ok: true, output: try json(after, line: line), line: line)
        default:
            throw SyntaxError(
                line: line, message: "unknown expectation '\(word)'; use reply, delivery, end, report or nothing")
        }
    }

    /// `push@d2` → ("push", "d2"); `push` → ("push", nil).
    static func keyAndDevice(_ word: String) -> (String, String?) {
        guard let at = word.lastIndex(of: "@"), at != word.startIndex else { return (word, nil) }
        return (String(word[..<at]), String(word[word.index(after: at)...]))
    }

    static func json(_ text: String, line: Int) throws(SyntaxError) -> JSON {
        do {
            return try JSON.parse(text: text)
        } catch {
            throw SyntaxError(line: line, message: "\(error)")
        }
    }
}

extension String {
    /// The first word and the rest, both without surrounding spaces.
    func splitFirstWord() -> (String, String) {
        guard let space = firstIndex(of: " ") else { return (self, "") }
        return (String(self[..<space]), String(self[index(after: space)...]).trimmingCharacters(in: .whitespaces))
    }
}
