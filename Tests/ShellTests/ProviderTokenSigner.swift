import COpenSSL
import Credentials
import Foundation
import OrderedJSON

/// What a backend does to authenticate to APNs: an EC P-256 key, and ES256 JWTs signed
/// with it (OpenSSL, independent of the code under test's verification).
final class ProviderTokenSigner: @unchecked Sendable {
    /// Immutable after init.
    private let key: OpaquePointer
    let keyID: String
    let team: String

    init(keyID: String = "ABC123DEFG", team: String = "TEAM000001") {
        let context = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil)
        var key: OpaquePointer?
        EVP_PKEY_keygen_init(context)
        EVP_PKEY_CTX_set_ec_paramgen_curve_nid(context, NID_X9_62_prime256v1)
        EVP_PKEY_keygen(context, &key)
        EVP_PKEY_CTX_free(context)
        self.key = key!
        self.keyID = keyID
        self.team = team
    }

    /// A backend holding a `.p8` file: its PKCS #8 PEM, as Apple hands it out.
    init?(p8: String, keyID: String, team: String) {
        // The BIO reads the text in place: it must outlive the read.
        let read = p8.withCString { text -> OpaquePointer? in
            let bio = BIO_new_mem_buf(text, Int32(strlen(text)))
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let key = read else { return nil }
        self.key = key
        self.keyID = keyID
        self.team = team
    }

    deinit { EVP_PKEY_free(key) }

    /// The public key as PEM, for `apns_key`.
    var publicKeyPEM: String { pem(ofPublicKey: key) }

    /// `bearer <JWT>` issued at `issuedAt`, signed by this key (or with 64 zero bytes).
    /// `iatJSON` replaces the `iat` claim's JSON text, for clients that send it otherwise.
    func authorization(issuedAt: Double, team: String? = nil, signed: Bool = true, iatJSON: String? = nil) -> String {
        let header = JWT.base64URLEncode(Array(#"{"alg":"ES256","kid":"\#(keyID)"}"#.utf8))
        let iat = iatJSON ?? "\(issuedAt)"
        let claims = JWT.base64URLEncode(Array(#"{"iss":"\#(team ?? self.team)","iat":\#(iat)}"#.utf8))
        let input = Array("\(header).\(claims)".utf8)
        let signature = signed ? sign(input) : [UInt8](repeating: 0, count: 64)
        return "bearer \(header).\(claims).\(JWT.base64URLEncode(signature))"
    }

    /// ES256: SHA-256 with ECDSA, then DER turned into JOSE's r‖s.
    private func sign(_ input: [UInt8]) -> [UInt8] {
        let context = EVP_MD_CTX_new()
        defer { EVP_MD_CTX_free(context) }
        EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key)
        var length = 0
        EVP_DigestSign(context, nil, &length, input, input.count)
        var der = [UInt8](repeating: 0, count: length)
        EVP_DigestSign(context, &der, &length, input, input.count)
        let sig = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var pointer: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &pointer, length)
        }
        defer { ECDSA_SIG_free(sig) }
        func fixed(_ number: OpaquePointer?) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: 32)
            BN_bn2binpad(number, &bytes, 32)
            return bytes
        }
        return fixed(ECDSA_SIG_get0_r(sig)) + fixed(ECDSA_SIG_get0_s(sig))
    }
}

/// What a Google service account does: an RSA key, and RS256 assertions for the
/// OAuth token endpoint (OpenSSL, independent of the code under test).
final class ServiceAccountSigner: @unchecked Sendable {
    /// Immutable after init.
    private let key: OpaquePointer
    let email: String

    init(email: String = "sa@demo.iam.gserviceaccount.com") {
        self.email = email
        let context = EVP_PKEY_CTX_new_id(EVP_PKEY_RSA, nil)
        var key: OpaquePointer?
        EVP_PKEY_keygen_init(context)
        EVP_PKEY_CTX_set_rsa_keygen_bits(context, 2048)
        EVP_PKEY_keygen(context, &key)
        EVP_PKEY_CTX_free(context)
        self.key = key!
    }

    deinit { EVP_PKEY_free(key) }

    var publicKeyPEM: String { pem(ofPublicKey: key) }

    /// The `google_key` line that registers this account's key.
    var registration: String {
        #"{"op":"google_key","client_email":"\#(email)","public_key":\#(JSON.string(publicKeyPEM).compactText)}"#
    }

    /// The form body Google's libraries post to the token endpoint.
    func tokenRequest(issuedAt: Double, lifetime: Double = 3600, signed: Bool = true) -> String {
        let header = JWT.base64URLEncode(Array(#"{"alg":"RS256","typ":"JWT"}"#.utf8))
        let claims = JWT.base64URLEncode(
            Array(
                #"{"iss":"\#(email)","scope":"https://www.googleapis.com/auth/firebase.messaging","aud":"https://oauth2.googleapis.com/token","iat":\#(Int(issuedAt)),"exp":\#(Int(issuedAt + lifetime))}"#
                    .utf8))
        let input = Array("\(header).\(claims)".utf8)
        var signature = [UInt8](repeating: 7, count: 256)
        if signed {
            let context = EVP_MD_CTX_new()
            defer { EVP_MD_CTX_free(context) }
            EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key)
            var length = signature.count
            EVP_DigestSign(context, &signature, &length, input, input.count)
        }
        let assertion = "\(header).\(claims).\(JWT.base64URLEncode(signature))"
        return "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"
    }
}

/// `key`'s public half as PEM, as `apns_key` and `google_key` take it.
private func pem(ofPublicKey key: OpaquePointer) -> String {
    let bio = BIO_new(BIO_s_mem())
    defer { BIO_free(bio) }
    PEM_write_bio_PUBKEY(bio, key)
    var bytes = [UInt8](repeating: 0, count: 4096)
    let count = BIO_read(bio, &bytes, Int32(bytes.count))
    return String(decoding: bytes.prefix(Int(max(count, 0))), as: UTF8.self)
}
