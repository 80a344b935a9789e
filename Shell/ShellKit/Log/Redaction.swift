import Foundation
import OrderedJSON

/// How the log shows a secret a request carried (inspector.md, "Secrets"): bearer tokens,
/// API keys, passwords, private keys, JWT signatures and OAuth assertions become a form
/// that keeps what helps a person (a JWT's header and claims, the scheme, the length, the
/// last four characters of a long secret) and loses what would let a reader use it.
/// Pure functions: the log applies them when an entry is read, every read path alike.
public enum Redaction {
    /// Header names whose whole value (after an `Authorization` scheme) is a secret.
    static let secretHeaders: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie", "x-appwrite-key", "x-appwrite-session",
        "x-appwrite-jwt", "x-api-key", "x-goog-api-key",
    ]

    /// Member names (in a JSON body, a form body or a query) whose value is a secret,
    /// compared without case.
    static let secretFields: Set<String> = [
        "password", "secret", "client_secret", "private_key", "privatekey", "api_key", "apikey", "assertion",
        "access_token", "refresh_token", "id_token", "auth", "authorization",
    ]

    /// The line-protocol ops whose `key` member is a secret (an Appwrite project's API key).
    static let opsWithSecretKey: Set<String> = ["appwrite_project"]

    /// An opaque secret's redacted form: its length, and its last four characters when
    /// that leaves at least twelve unseen.
    public static func opaque(_ secret: String) -> String {
        var copy = secret
        var out: [UInt8] = []
        copy.withUTF8 { bytes in
            if bytesAreCharacters(bytes) {
                appendOpaque(count: bytes.count, ending: UnsafeBufferPointer(rebasing: bytes.suffix(4)), to: &out)
            } else {
                var ending = String(secret.suffix(4))
                ending.withUTF8 { appendOpaque(count: secret.count, ending: $0, to: &out) }
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func appendOpaque(count: Int, ending: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(contentsOf: "[redacted: ".utf8)
        JSON.writeDecimal(Int64(count), to: &out)
        out.append(contentsOf: " characters".utf8)
        if count >= 16 {
            out.append(contentsOf: ", ending …".utf8)
            out.append(contentsOf: ending)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// A JWT with its signature redacted, its header and claims kept as sent; nil when
    /// `text` is not three base64url parts.
    public static func jwt(_ text: String) -> String? {
        var copy = text
        return copy.withUTF8 { bytes -> String? in
            guard let signature = jwtSignature(in: bytes) else { return nil }
            if signature == bytes.count { return text }
            var out: [UInt8] = []
            appendJWT(bytes, signature: signature, to: &out)
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// Where a JWT's signature starts (after its second dot; the end when it has none),
    /// or nil when `bytes` are not three base64url parts with a JSON object's header.
    /// Read as bytes in one pass: a stream of the log redacts every push's provider token.
    private static func jwtSignature(in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        // Every byte base64url but exactly two dots; all ASCII, so a byte is a character.
        var dots = (first: -1, second: -1)
        let scanned = base64URL.withUnsafeBufferPointer { isBase64URL in
            for index in bytes.indices {
                let byte = bytes[index]
                if byte == UInt8(ascii: ".") {
                    if dots.first < 0 {
                        dots.first = index
                    } else if dots.second < 0 {
                        dots.second = index
                    } else {
                        return false
                    }
                } else if !isBase64URL[Int(byte)] {
                    return false
                }
            }
            return true
        }
        // A JWT's header is a base64url JSON object: it starts `eyJ` (`{"`).
        guard scanned, dots.second > 0, dots.first >= 3, bytes[0] == UInt8(ascii: "e"),
            bytes[1] == UInt8(ascii: "y"), bytes[2] == UInt8(ascii: "J"), dots.second - dots.first > 2
        else { return nil }
        return dots.second + 1
    }

    /// A JWT's header and claims as sent, its signature (from `signature`) redacted.
    private static func appendJWT(_ bytes: UnsafeBufferPointer<UInt8>, signature: Int, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[..<signature]))
        guard signature < bytes.count else { return }
        out.append(contentsOf: "[redacted signature: ".utf8)
        JSON.writeDecimal(Int64(bytes.count - signature), to: &out)
        out.append(contentsOf: " characters]".utf8)
    }

    /// A secret whatever its kind: a JWT keeps its header and claims, anything else is opaque.
    public static func secret(_ text: String) -> String {
        jwt(text) ?? opaque(text)
    }

    /// `secret(_:)` of text whose bytes are its characters, appended.
    private static func appendSecret(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        if let signature = jwtSignature(in: bytes) {
            appendJWT(bytes, signature: signature, to: &out)
        } else {
            appendOpaque(count: bytes.count, ending: UnsafeBufferPointer(rebasing: bytes.suffix(4)), to: &out)
        }
    }

    /// Whether each byte is a character of the text: ASCII with no CR (a LF after a CR
    /// joins it into one character). Such text is redacted by its bytes: counted, split
    /// and cut as `Character`s, an authorization header cost ~25 instructions a byte.
    static func bytesAreCharacters(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        ByteWord.none(in: bytes) { $0.hasHighByte || $0.contains(0x0D) }
    }

    /// Whether a header of this name (as bytes, in any case) has a secret value: whether
    /// `header(name:value:)` may change it.
    static func isSecretHeader(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        secretHeaderBytes.contains { secret in
            secret.count == name.count && zip(secret, name).allSatisfy { $0 == asciiLowercased($1) }
        }
    }

    private static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    private static let secretHeaderBytes = secretHeaders.map { Array($0.utf8) }

    /// A header's value as the log shows it.
    public static func header(name: String, value: String) -> String {
        // HTTP/2's names are lowercase already: no lowercase copy of each one.
        let lowercase =
            name.utf8.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") } ? name.lowercased() : name
        guard secretHeaders.contains(lowercase) else { return value }
        var copy = value
        if let redacted = copy.withUTF8({ bytes -> [UInt8]? in
            guard bytesAreCharacters(bytes) else { return nil }
            var out: [UInt8] = []
            appendSecretHeaderValue(bytes, to: &out)
            return out
        }) {
            return String(decoding: redacted, as: UTF8.self)
        }
        // `Bearer <token>`, `Basic <…>`, FCM's legacy `key=<key>`: the scheme stays.
        if let space = value.firstIndex(of: " ") {
            let scheme = value[..<space]
            let credential = value[value.index(after: space)...].drop { $0 == " " }
            if !scheme.isEmpty, !credential.isEmpty { return "\(scheme) \(secret(String(credential)))" }
        }
        if value.lowercased().hasPrefix("key=") { return "key=" + secret(String(value.dropFirst(4))) }
        return secret(value)
    }

    /// `header(name:value:)` of a secret header whose value's bytes are its characters
    /// (`bytesAreCharacters`), appended: the same rule, read and written as bytes.
    static func appendSecretHeaderValue(_ value: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        // `Bearer <token>`, `Basic <…>`, FCM's legacy `key=<key>`: the scheme stays.
        if let space = value.firstIndex(of: UInt8(ascii: " ")) {
            var credential = space + 1
            while credential < value.count, value[credential] == UInt8(ascii: " ") { credential += 1 }
            if space > 0, credential < value.count {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: value[...space]))
                return appendSecret(UnsafeBufferPointer(rebasing: value[credential...]), to: &out)
            }
        }
        if value.count >= 4, zip(value.prefix(4), "key=".utf8).allSatisfy({ asciiLowercased($0) == $1 }) {
            out.append(contentsOf: "key=".utf8)
            return appendSecret(UnsafeBufferPointer(rebasing: value[4...]), to: &out)
        }
        appendSecret(value, to: &out)
    }

    /// The last secret header value redacted and what it showed. A client sends the same
    /// provider token or access token with every push (APNs refuses a new one more often
    /// than every 20 minutes), and redacting it again was two fifths of writing a streamed
    /// entry's headers: a stream's renderer keeps one for all it renders.
    struct Memo {
        /// The value last asked about, none before the first.
        private var value: [UInt8]?
        private var shown: [UInt8]?

        /// `appendSecretHeaderValue` of `value` when its bytes are its characters
        /// (`bytesAreCharacters`), nil when they are not: the last answer when `value` is
        /// the same.
        mutating func shownHeaderValue(_ value: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
            let same =
                self.value?.withUnsafeBufferPointer { memo in
                    memo.count == value.count
                        && (value.isEmpty || memcmp(memo.baseAddress!, value.baseAddress!, value.count) == 0)
                } ?? false
            if !same {
                self.value = Array(value)
                shown = nil
                if bytesAreCharacters(value) {
                    var redacted: [UInt8] = []
                    appendSecretHeaderValue(value, to: &redacted)
                    shown = redacted
                }
            }
            return shown
        }
    }

    /// A request target with the secret members of its query redacted.
    public static func path(_ path: String) -> String {
        // Found in the bytes in place: a search through the `UTF8View` cost ~25
        // instructions a byte, on every request a stream renders.
        var copy = path
        let offset = copy.withUTF8 { bytes -> Int? in
            guard let base = bytes.baseAddress, let found = memchr(base, Int32(UInt8(ascii: "?")), bytes.count) else {
                return nil
            }
            return UnsafeRawPointer(found) - UnsafeRawPointer(base)
        }
        guard let offset else { return path }
        let mark = path.utf8.index(path.utf8.startIndex, offsetBy: offset)
        let query = path[path.index(after: mark)...]
        guard let redacted = form(Array(query.utf8)) else { return path }
        return String(path[...mark]) + String(decoding: redacted, as: UTF8.self)
    }

    /// A request body as the log shows it: a JSON object's secret members, a form's
    /// secret fields and any PEM private key redacted; the bytes as sent when it holds
    /// none (most bodies, found without parsing).
    public static func body(_ bytes: [UInt8]) -> [UInt8] {
        guard mayHoldSecret(bytes) else { return bytes }
        if let value = try? JSON.parse(bytes), case .object = value {
            let redacted = json(value, top: true)
            return redacted == value ? bytes : redacted.compactBytes
        }
        if let redacted = form(bytes) { return redacted }
        return privateKeyRedacted(bytes)
    }

    // MARK: Pieces

    /// Whether each byte is base64url's (or `=`), looked up: a JWT is scanned whole on
    /// every read of an entry that carries one.
    private static let base64URL: [Bool] = (0...255).map { isBase64URL(UInt8($0)) }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "="):
            true
        default: false
        }
    }

    /// Whether the bytes hold a piece of a secret field's name or of a PEM private key,
    /// without regard to case (`SecretNameScan`): most bodies (a push's payload) are passed
    /// by this alone.
    static func mayHoldSecret(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { SecretNameScan.shared.appears(in: $0) }
    }

    /// A JSON value with its secret members redacted; at the top of a line-protocol
    /// request, `key` too when the op's key is a secret.
    static func json(_ value: JSON, top: Bool = false) -> JSON {
        switch value {
        case .object(let object):
            let op = top ? object["op"]?.stringValue : nil
            var out = JSONObject()
            out.reserveCapacity(object.count)
            for (name, member) in object {
                let secretKey = name == "key" && op.map(opsWithSecretKey.contains) == true
                if case .string(let text) = member, secretKey || secretFields.contains(name.lowercased()) {
                    out[name] = .string(secret(text))
                } else if case .string(let text) = member, text.contains("PRIVATE KEY-----") {
                    out[name] = .string(opaque(text))
                } else {
                    out[name] = json(member)
                }
            }
            return .object(out)
        case .array(let items): return .array(items.map { json($0) })
        default: return value
        }
    }

    /// An `application/x-www-form-urlencoded` body or query with its secret fields'
    /// values redacted (the redacted form is percent-free ASCII but for `…`, encoded);
    /// nil when it holds no secret field or is not a form.
    static func form(_ bytes: [UInt8]) -> [UInt8]? {
        guard !bytes.isEmpty, !bytes.contains(UInt8(ascii: "{")), bytes.contains(UInt8(ascii: "=")) else { return nil }
        var changed = false
        let fields = bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false).map { field in
            guard let equals = field.firstIndex(of: UInt8(ascii: "=")) else { return Array(field) }
            let name = String(decoding: field[..<equals], as: UTF8.self).lowercased()
            guard secretFields.contains(name) else { return Array(field) }
            changed = true
            let value = String(decoding: field[(equals + 1)...], as: UTF8.self).removingPercentEncoding ?? ""
            let shown = secret(value).addingPercentEncoding(withAllowedCharacters: formSafe) ?? ""
            return Array(field[...equals]) + Array(shown.utf8)
        }
        guard changed else { return nil }
        return Array(fields.joined(separator: [UInt8(ascii: "&")]))
    }

    /// What a form value keeps unencoded: the redacted form's letters, digits and marks.
    private static let formSafe: CharacterSet = {
        var set = CharacterSet.alphanumerics
        set.insert(charactersIn: "-_.~[]:,")
        return set
    }()

    /// Any PEM private key in text that is neither JSON nor a form, redacted whole.
    static func privateKeyRedacted(_ bytes: [UInt8]) -> [UInt8] {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let begin = text.range(of: "-----BEGIN"), text.range(of: "PRIVATE KEY-----") != nil,
            let end = text.range(of: "PRIVATE KEY-----", options: .backwards, range: begin.upperBound..<text.endIndex),
            end.lowerBound > begin.upperBound
        else { return bytes }
        let key = text[begin.lowerBound..<end.upperBound]
        return Array((text[..<begin.lowerBound] + opaque(String(key)) + text[end.upperBound...]).utf8)
    }
}
