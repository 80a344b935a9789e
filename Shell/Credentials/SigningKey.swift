import COpenSSL

/// A fresh private key the world makes and registers with one of its services: EC
/// P-256 signs ES256 JWTs, as a backend signs its APNs provider tokens; RSA 2048 is a
/// Google service account's. The world's own credentials for benchmarks and hand tests,
/// and the key files it hands to real SDKs (`POST /api/v1/credentials` with a `format`).
public final class SigningKey: @unchecked Sendable {
    public enum Kind: Sendable {
        /// EC P-256: an APNs signing key (`.p8`).
        case ecP256
        /// RSA 2048: a Google service account's key.
        case rsa2048
    }

    /// Immutable after init; OpenSSL's signing does not mutate the key.
    private let key: OpaquePointer

    /// A new key; nil only when OpenSSL cannot make one.
    public init?(_ kind: Kind = .ecP256) {
        guard let context = EVP_PKEY_CTX_new_id(kind == .ecP256 ? EVP_PKEY_EC : EVP_PKEY_RSA, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1,
            kind == .ecP256
                ? EVP_PKEY_CTX_set_ec_paramgen_curve_nid(context, NID_X9_62_prime256v1) == 1
                : EVP_PKEY_CTX_set_rsa_keygen_bits(context, 2048) == 1,
            EVP_PKEY_keygen(context, &key) == 1, let key
        else { return nil }
        self.key = key
    }

    deinit { EVP_PKEY_free(key) }

    /// The public half in PEM, as `apns_key` and `google_key` take it.
    public var publicKeyPEM: String { Self.pem { PEM_write_bio_PUBKEY($0, key) } }

    /// The private key in PKCS #8 PEM (`-----BEGIN PRIVATE KEY-----`): an APNs `.p8`
    /// file's text, or a service-account JSON's `private_key`.
    public var privateKeyPEM: String {
        Self.pem { PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) }
    }

    /// What `write` puts into a memory BIO, as text; empty when it fails.
    private static func pem(_ write: (OpaquePointer) -> Int32) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { return "" }
        var text: [UInt8] = []
        var bytes = [UInt8](repeating: 0, count: 1024)
        while true {
            let count = BIO_read(bio, &bytes, Int32(bytes.count))
            guard count > 0 else { break }
            text += bytes[..<Int(count)]
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// `header.claims.signature`, each part base64url, signed ES256 (JOSE's raw r‖s);
    /// nil when OpenSSL fails.
    public func es256JWT(header: String, claims: String) -> String? {
        let input = JWT.base64URLEncode(Array(header.utf8)) + "." + JWT.base64URLEncode(Array(claims.utf8))
        guard let context = EVP_MD_CTX_new() else { return nil }
        defer { EVP_MD_CTX_free(context) }
        let bytes = Array(input.utf8)
        var length = 0
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1,
            EVP_DigestSign(context, nil, &length, bytes, bytes.count) == 1
        else { return nil }
        var der = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &der, &length, bytes, bytes.count) == 1 else { return nil }
        // OpenSSL writes DER's ECDSA-Sig-Value; a JWT carries r and s as 32 bytes each.
        let signature = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var pointer = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &pointer, length)
        }
        guard let signature else { return nil }
        defer { ECDSA_SIG_free(signature) }
        var raw = [UInt8](repeating: 0, count: 64)
        guard BN_bn2binpad(ECDSA_SIG_get0_r(signature), &raw, 32) == 32,
            raw.withUnsafeMutableBufferPointer({ BN_bn2binpad(ECDSA_SIG_get0_s(signature), $0.baseAddress! + 32, 32) })
                == 32
        else { return nil }
        return input + "." + JWT.base64URLEncode(raw)
    }
}
