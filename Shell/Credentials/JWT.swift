import COpenSSL
import Foundation
import OrderedJSON

/// A JSON Web Token as the services receive one: its header and claims (parsed with
/// the project's JSON, so numbers keep their text), the signing input and the
/// signature. Checking the signature is `verify`'s job, with a key.
public struct JWT: Sendable {
    public let header: JSONObject
    public let claims: JSONObject
    /// `base64url(header) "." base64url(claims)`: what the signature covers.
    public let signingInput: [UInt8]
    public let signature: [UInt8]

    public enum Malformed: Error, Equatable, CustomStringConvertible {
        case notThreeParts
        case notBase64URL(String)
        case notAJSONObject(String)
        public var description: String {
            switch self {
            case .notThreeParts: "a JWT has three parts separated by dots"
            case .notBase64URL(let part): "the \(part) is not base64url"
            case .notAJSONObject(let part): "the \(part) is not a JSON object"
            }
        }
    }

    public init(_ text: String) throws(Malformed) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .notThreeParts }
        guard let header = Self.base64URLDecode(parts[0]) else { throw .notBase64URL("header") }
        guard let claims = Self.base64URLDecode(parts[1]) else { throw .notBase64URL("claims") }
        guard let signature = Self.base64URLDecode(parts[2]) else { throw .notBase64URL("signature") }
        guard let headerObject = (try? JSON.parse(header))?.objectValue else { throw .notAJSONObject("header") }
        guard let claimsObject = (try? JSON.parse(claims))?.objectValue else { throw .notAJSONObject("claims") }
        self.header = headerObject
        self.claims = claimsObject
        self.signingInput = Array(parts[0].utf8) + [UInt8(ascii: ".")] + Array(parts[1].utf8)
        self.signature = signature
    }

    /// A number claim (`iat`, `exp`) in seconds; fractions allowed, as some clients send.
    /// A string of decimal seconds (`"1700000000"`) counts too: a Python APNs client in use
    /// (kalyke) sends `iat` that way, and a backend's own client must not fail here for it.
    public func seconds(_ claim: String) -> Double? {
        if let number = claims[claim]?.numberValue { return number.doubleValue }
        guard let text = claims[claim]?.stringValue, !text.isEmpty, text.utf8.count <= 32 else { return nil }
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { (48...57).contains($0) } }) else { return nil }
        return Double(text)
    }

    /// RFC 7515's base64url, without padding (padding is tolerated).
    static func base64URLDecode(_ text: Substring) -> [UInt8]? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.hasSuffix("=") { standard.removeLast() }
        guard standard.utf8.allSatisfy({ $0 != UInt8(ascii: "=") }) else { return nil }
        standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
        return Data(base64Encoded: standard).map(Array.init)
    }

    public static func base64URLEncode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}

/// A public key from PEM, held for signature checks (OpenSSL's `EVP_PKEY`).
public final class PublicKey: @unchecked Sendable {
    /// Immutable after init; OpenSSL's verification does not mutate the key.
    let key: OpaquePointer

    public enum Kind: Sendable { case ecP256, rsa }

    public let kind: Kind

    /// Reads a PEM public key (`-----BEGIN PUBLIC KEY-----`); nil when it is not one,
    /// or not of a kind the services use (EC P-256 for APNs, RSA for Google).
    public init?(pem: String) {
        // The BIO reads the text in place, so the read happens while the text is lent.
        let read = pem.withCString { text -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(text, Int32(strlen(text))) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PUBKEY(bio, nil, nil, nil)
        }
        guard let key = read else {
            ERR_clear_error()
            return nil
        }
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_EC where EVP_PKEY_get_bits(key) == 256: kind = .ecP256
        case EVP_PKEY_RSA: kind = .rsa
        default:
            EVP_PKEY_free(key)
            return nil
        }
        self.key = key
    }

    deinit { EVP_PKEY_free(key) }

    /// The key in PEM (`-----BEGIN PUBLIC KEY-----`), as `init(pem:)` reads it back.
    public var pem: String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PUBKEY(bio, key) == 1 else { return "" }
        var text: [UInt8] = []
        var bytes = [UInt8](repeating: 0, count: 1024)
        while case let count = BIO_read(bio, &bytes, Int32(bytes.count)), count > 0 { text += bytes[..<Int(count)] }
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether `jwt`'s signature is this key's over its signing input: ES256 (the JWT's
    /// raw r‖s turned into DER for OpenSSL) or RS256 (PKCS #1 v1.5), both SHA-256.
    public func verifies(_ jwt: JWT) -> Bool {
        var signature = jwt.signature
        if kind == .ecP256 {
            guard signature.count == 64, let der = Self.derECDSASignature(signature) else { return false }
            signature = der
        }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { return false }
        let result = jwt.signingInput.withUnsafeBufferPointer { input in
            signature.withUnsafeBufferPointer { signature in
                EVP_DigestVerify(context, signature.baseAddress, signature.count, input.baseAddress, input.count)
            }
        }
        ERR_clear_error()
        return result == 1
    }

    /// JOSE's fixed-size r‖s as the DER `ECDSA-Sig-Value` OpenSSL verifies.
    static func derECDSASignature(_ raw: [UInt8]) -> [UInt8]? {
        guard let sig = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(sig) }
        let r = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 32, nil) }
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + 32, 32, nil) }
        guard let r, let s, ECDSA_SIG_set0(sig, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_ECDSA_SIG(sig, &out)
        guard length > 0, let out else { return nil }
        defer { CRYPTO_free(out, #file, #line) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }
}
