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
        let count = secret.count
        if count >= 16 { return "[redacted: \(count) characters, ending …\(secret.suffix(4))]" }
        return "[redacted: \(count) characters]"
    }

    /// A JWT with its signature redacted, its header and claims kept as sent; nil when
    /// `text` is not three base64url parts.
    ///
    /// Read as bytes in one pass: a stream of the log redacts every push's provider token,
    /// and splitting it into `Character`s cost more than the rest of the entry.
    public static func jwt(_ text: String) -> String? {
        var copy = text
        return copy.withUTF8 { bytes -> String? in
            // Every byte base64url but exactly two dots; all ASCII, so a byte is a character.
            var dots = (first: -1, second: -1)
            for index in bytes.indices {
                let byte = bytes[index]
                if byte == UInt8(ascii: ".") {
                    if dots.first < 0 {
                        dots.first = index
                    } else if dots.second < 0 {
                        dots.second = index
                    } else {
                        return nil
                    }
                } else if !isBase64URL(byte) {
                    return nil
                }
            }
            // A JWT's header is a base64url JSON object: it starts `eyJ` (`{"`).
            guard dots.second > 0, dots.first >= 3, bytes[0] == UInt8(ascii: "e"), bytes[1] == UInt8(ascii: "y"),
                bytes[2] == UInt8(ascii: "J"), dots.second - dots.first > 2
            else { return nil }
            let signature = bytes.count - dots.second - 1
            if signature == 0 { return text }
            var shown = Array(bytes[...dots.second])
            shown += "[redacted signature: \(signature) characters]".utf8
            return String(decoding: shown, as: UTF8.self)
        }
    }

    /// A secret whatever its kind: a JWT keeps its header and claims, anything else is opaque.
    public static func secret(_ text: String) -> String {
        jwt(text) ?? opaque(text)
    }

    /// A header's value as the log shows it.
    public static func header(name: String, value: String) -> String {
        // HTTP/2's names are lowercase already: no lowercase copy of each one.
        let lowercase =
            name.utf8.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") } ? name.lowercased() : name
        guard secretHeaders.contains(lowercase) else { return value }
        // `Bearer <token>`, `Basic <…>`, FCM's legacy `key=<key>`: the scheme stays.
        if let space = value.firstIndex(of: " ") {
            let scheme = value[..<space]
            let credential = value[value.index(after: space)...].drop { $0 == " " }
            if !scheme.isEmpty, !credential.isEmpty { return "\(scheme) \(secret(String(credential)))" }
        }
        if value.lowercased().hasPrefix("key=") { return "key=" + secret(String(value.dropFirst(4))) }
        return secret(value)
    }

    /// A request target with the secret members of its query redacted.
    public static func path(_ path: String) -> String {
        guard let mark = path.utf8.firstIndex(of: UInt8(ascii: "?")) else { return path }
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

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "="):
            true
        default: false
        }
    }

    /// Pieces of every secret field's name (`api_key`, `"key"`, `access_token`, …) and of a
    /// PEM private key, lowercase: a body holding none of them has no secret.
    private static let needles = [
        "pass", "secret", "private", "_key", "apikey", "\"key\"", "assertion", "_token", "auth",
    ]

    /// Whether any of `needles` appears in the bytes, without regard to case: most bodies
    /// (a push's payload) are passed by this alone: one lowercase copy, NUL-terminated
    /// (a NUL inside becomes 0x01, so the search sees every byte), and a `strstr` each.
    static func mayHoldSecret(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 4 else { return false }
        var lowered = [CChar](repeating: 0, count: bytes.count + 1)
        for index in bytes.indices {
            let byte = bytes[index]
            lowered[index] = CChar(bitPattern: byte >= 65 && byte <= 90 ? byte | 0x20 : byte == 0 ? 1 : byte)
        }
        return needles.contains { needle in strstr(lowered, needle) != nil }
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
