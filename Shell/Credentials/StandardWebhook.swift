import COpenSSL
import Foundation

/// Standard Webhooks verification (XM-3): `webhook-id`, `webhook-timestamp` (Unix
/// seconds) and `webhook-signature` (space-separated `v1,<base64>` entries), where a
/// `v1` signature is base64 of HMAC-SHA256(key, "<id>.<timestamp>.<exact body>").
/// A pure function of its inputs: it never parses the body.
public enum StandardWebhook {
    /// How far a timestamp may be from the receiver's clock, in seconds.
    public static let tolerance: Int64 = 5 * 60

    /// Why a delivery is not authentic, in words (the answer is 401).
    public struct Refusal: Error, Sendable, Equatable {
        public let message: String
        init(_ message: String) { self.message = message }
    }

    /// Verifies a delivery at `now` (Unix seconds); returns its timestamp. One
    /// matching `v1` entry suffices; entries of other versions are ignored; every
    /// comparison takes the same time whatever the bytes.
    public static func verify(
        key: [UInt8], id: String?, timestamp: String?, signatures: String?, body: [UInt8], now: Int64
    ) -> Result<Int64, Refusal> {
        guard let id, !id.isEmpty else { return .failure(Refusal("the webhook-id header is missing")) }
        guard let timestamp, !timestamp.isEmpty else {
            return .failure(Refusal("the webhook-timestamp header is missing"))
        }
        guard let signatures, !signatures.isEmpty else {
            return .failure(Refusal("the webhook-signature header is missing"))
        }
        guard timestamp.utf8.count <= 18, timestamp.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let seconds = Int64(timestamp)
        else {
            return .failure(Refusal("webhook-timestamp must be Unix seconds, not '\(timestamp.prefix(40))'"))
        }
        guard abs(now - seconds) <= tolerance else {
            return .failure(
                Refusal(
                    "webhook-timestamp \(seconds) is \(abs(now - seconds)) s from this clock (\(now)); at most \(tolerance) s is accepted"
                ))
        }
        let expected = signature(key: key, id: id, timestamp: timestamp, body: body)
        var matched = false
        for entry in signatures.split(separator: " ", omittingEmptySubsequences: true) {
            guard entry.hasPrefix("v1,"), let given = Data(base64Encoded: String(entry.dropFirst(3))),
                given.count == expected.count
            else { continue }
            let equal = given.withUnsafeBytes { given in
                expected.withUnsafeBytes { CRYPTO_memcmp(given.baseAddress, $0.baseAddress, $0.count) == 0 }
            }
            // Every entry is compared, even after a match, so the time taken does not
            // say which entry matched.
            matched = matched || equal
        }
        guard matched else { return .failure(Refusal("no v1 signature in webhook-signature matches")) }
        return .success(seconds)
    }

    /// HMAC-SHA256(key, "<id>.<timestamp>.<body>") through OpenSSL.
    public static func signature(key: [UInt8], id: String, timestamp: String, body: [UInt8]) -> [UInt8] {
        let message = Array("\(id).\(timestamp).".utf8) + body
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        _ = key.withUnsafeBytes { key in
            message.withUnsafeBytes { message in
                HMAC(
                    EVP_sha256(), key.baseAddress, Int32(key.count),
                    message.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    message.count, &digest, &length)
            }
        }
        return Array(digest.prefix(Int(length)))
    }
}
