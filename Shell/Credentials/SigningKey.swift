import COpenSSL

/// A fresh EC P-256 private key that signs ES256 JWTs, as a backend signs its APNs
/// provider tokens: the world's own credentials for benchmarks and hand tests, so
/// their requests are checked as a real backend's are. It never leaves the process.
public final class SigningKey: @unchecked Sendable {
    /// Immutable after init; OpenSSL's signing does not mutate the key.
    private let key: OpaquePointer

    /// A new key; nil only when OpenSSL cannot make one.
    public init?() {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1,
            EVP_PKEY_CTX_set_ec_paramgen_curve_nid(context, NID_X9_62_prime256v1) == 1,
            EVP_PKEY_keygen(context, &key) == 1, let key
        else { return nil }
        self.key = key
    }

    deinit { EVP_PKEY_free(key) }

    /// The public half in PEM, as `apns_key` takes it.
    public var publicKeyPEM: String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        PEM_write_bio_PUBKEY(bio, key)
        var bytes = [UInt8](repeating: 0, count: 1024)
        let count = BIO_read(bio, &bytes, Int32(bytes.count))
        return String(decoding: bytes.prefix(Int(max(count, 0))), as: UTF8.self)
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
