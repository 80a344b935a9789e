import Foundation
import OrderedJSON
import Testing

@testable import ShellKit

/// Secrets a request carries never leave the world through its log (inspector.md,
/// "Secrets"): the redacted forms as pure functions, then every read path of a real
/// `cxshell serve` searched for each secret a backend would send.
@Suite(.serialized) struct SecretRedactionTests {
    typealias Shell = FrontDoorTests.Shell

    @Test func aJWTKeepsItsHeaderAndClaimsAndLosesItsSignature() {
        let jwt = "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJURUFNIn0.c2lnbmF0dXJlLWJ5dGVzLWhlcmUtYW5kLW1vcmU"
        #expect(
            Redaction.header(name: "authorization", value: "bearer " + jwt)
                == "bearer eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJURUFNIn0.[redacted signature: 39 characters]")
        #expect(
            Redaction.header(name: "Authorization", value: "Bearer ya29.c.opaque-access-token-1234")
                == "Bearer [redacted: 31 characters, ending …1234]")
        #expect(Redaction.header(name: "x-appwrite-key", value: "k1") == "[redacted: 2 characters]")
        #expect(
            Redaction.header(name: "authorization", value: "key=AAAAlegacyserverkey0000")
                == "key=[redacted: 23 characters, ending …0000]")
        #expect(Redaction.header(name: "apns-topic", value: "com.example.app") == "com.example.app")
    }

    /// `Redaction.jwt` reads bytes; the reference splits the text into `Character`s, as it
    /// once did. They agree on chosen edges and 20,000 seeded strings of JWT-like pieces
    /// (dots, base64url, a CR LF that is one character, non-ASCII, a space).
    @Test func theJWTRedactionReadAsBytesAgreesWithTheCharacterReference() {
        func reference(_ text: String) -> String? {
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0].hasPrefix("eyJ"), parts[1].count > 1,
                parts.allSatisfy({
                    $0.unicodeScalars.allSatisfy { scalar in
                        scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar))
                            || "-_=".unicodeScalars.contains(scalar)
                    }
                })
            else { return nil }
            if parts[2].isEmpty { return text }
            return "\(parts[0]).\(parts[1]).[redacted signature: \(parts[2].count) characters]"
        }
        let edges = [
            "", ".", "..", "...", "eyJ..", "eyJ.a.", "eyJ.ab.", "eyJ.ab.c", "eyJ.ab.c.", "eyJab.cd.ef", "eyj.ab.cd",
            "ey.ab.cd", "eyJ.ab.c=d", "eyJ.a\r\nb.c", "eyJ.ab.cé", "eyJ .ab.c", "xeyJ.ab.cd", "eyJ.ab.c/d",
            "eyJ.ab.c+d",
        ]
        var random = SplitMix(seed: 40)
        let pieces = ["eyJ", "e", "y", "J", ".", ".", "a", "Zz9", "-", "_", "=", "\r\n", "é", " ", "+", "/", "ab"]
        func joined(_ most: Int) -> String {
            (0..<Int.random(in: 0...most, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
        }
        // Half free-form, half shaped as a JWT whose parts may still hold anything.
        let generated = (0..<20_000).map { index in
            index % 2 == 0 ? joined(9) : "eyJ" + joined(2) + "." + joined(3) + "." + joined(3)
        }
        var disagreements: [String] = []
        for text in edges + generated where Redaction.jwt(text) != reference(text) { disagreements.append(text) }
        #expect(disagreements.isEmpty, "\(disagreements.count) disagree, such as \(disagreements.prefix(5))")
        // The generator reaches real JWTs too, with and without a signature.
        #expect(generated.filter { reference($0) != nil }.count > 500)
    }

    /// A header and a path are split, and an opaque secret counted and cut, by their bytes
    /// when those are its characters; the reference works in `Character`s, as all once
    /// did. They agree on 20,000 seeded values of schemes, spaces, JWT pieces, a CR LF, a
    /// space that a combining mark joins, and queries.
    @Test func headersAndPathsSplitAsBytesAgreeWithTheCharacterReference() {
        func referenceOpaque(_ secret: String) -> String {
            let count = secret.count
            if count >= 16 { return "[redacted: \(count) characters, ending …\(secret.suffix(4))]" }
            return "[redacted: \(count) characters]"
        }
        func referenceSecret(_ text: String) -> String { Redaction.jwt(text) ?? referenceOpaque(text) }
        func referenceHeader(name: String, value: String) -> String {
            guard Redaction.secretHeaders.contains(name.lowercased()) else { return value }
            if let space = value.firstIndex(of: " ") {
                let scheme = value[..<space]
                let credential = value[value.index(after: space)...].drop { $0 == " " }
                if !scheme.isEmpty, !credential.isEmpty { return "\(scheme) \(referenceSecret(String(credential)))" }
            }
            if value.lowercased().hasPrefix("key=") { return "key=" + referenceSecret(String(value.dropFirst(4))) }
            return referenceSecret(value)
        }
        func referencePath(_ path: String) -> String {
            guard let mark = path.firstIndex(of: "?") else { return path }
            guard let redacted = Redaction.form(Array(path[path.index(after: mark)...].utf8)) else { return path }
            return String(path[...mark]) + String(decoding: redacted, as: UTF8.self)
        }
        var random = SplitMix(seed: 0x4845_4144)
        let pieces = [
            "Bearer", "bearer", "key=", " ", " ", "  ", "eyJ", "hbGc", ".", "sig-_=", "\r\n", "\u{301}", "é", "x", "?",
            "&", "=", "secret", "token", "/3/device/ab", "KeY=", "key\u{1D}", "0123456789abcdef",
        ]
        func joined(_ most: Int) -> String {
            (0..<Int.random(in: 0...most, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
        }
        let names = ["authorization", "Authorization", "x-api-key", "apns-topic", "cookie"]
        var disagreements: [String] = []
        for _ in 0..<20_000 {
            let value = joined(8)
            let name = names.randomElement(using: &random)!
            if Redaction.header(name: name, value: value) != referenceHeader(name: name, value: value) {
                disagreements.append("\(name): \(value)")
            }
            if Redaction.path(value) != referencePath(value) { disagreements.append("path \(value)") }
            if Redaction.opaque(value) != referenceOpaque(value) { disagreements.append("opaque \(value)") }
        }
        #expect(disagreements.isEmpty, "\(disagreements.count) disagree, such as \(disagreements.prefix(5))")
    }

    /// The one-pass scan finds a secret field's name where a lowercase copy searched for
    /// each piece finds it (the check it replaced): over 20,000 seeded bodies of pieces in
    /// any case, their prefixes and overlaps, NULs and bytes that are not ASCII.
    @Test func theScanFindsWhatASearchForEachPieceFinds() {
        func reference(_ bytes: [UInt8]) -> Bool {
            let lowered = bytes.map { (65...90).contains($0) ? $0 + 32 : $0 }
            return SecretNameScan.pieces.contains { piece in
                let needle = Array(piece.utf8)
                guard lowered.count >= needle.count else { return false }
                return (0...(lowered.count - needle.count)).contains {
                    Array(lowered[$0..<($0 + needle.count)]) == needle
                }
            }
        }
        var random = SplitMix(seed: 0x5343_414E)
        let fragments: [[UInt8]] =
            SecretNameScan.pieces.flatMap { piece in
                [
                    Array(piece.utf8), Array(piece.uppercased().utf8), Array(piece.utf8.dropLast()),
                    Array(piece.utf8.dropFirst()),
                ]
            } + [
                [0], [0xC3, 0xA9], [0xFF], Array("a".utf8), Array("p".utf8), Array("{\"aps\":".utf8), [0x41], [0x5B],
                [0x60], [0x7B],
            ]
        var disagreements: [[UInt8]] = []
        for _ in 0..<20_000 {
            let body = (0..<Int.random(in: 0...6, using: &random)).flatMap { _ in
                fragments.randomElement(using: &random)!
            }
            let found = body.withUnsafeBufferPointer { SecretNameScan.shared.appears(in: $0) }
            if found != reference(body) { disagreements.append(body) }
        }
        #expect(disagreements.count == 0, "such as \(disagreements.prefix(3))")
        #expect(Redaction.mayHoldSecret(Array(#"{"aps":{"alert":"bench"},"n":1}"#.utf8)) == false)
        #expect(Redaction.mayHoldSecret(Array(#"{"Client_Secret":"x"}"#.utf8)))
    }

    @Test func bodiesLoseTheirSecretMembersAndKeepEverythingElseAsSent() throws {
        let push = Array(#"{"aps":{"alert":"hi"},"key":"not a secret in a payload"}"#.utf8)
        #expect(Redaction.body(push) == push)
        let project = Redaction.body(
            Array(
                #"{"op":"appwrite_project","project":"p1","key":"standard_0123456789abcdef","admin":{"username":"admin","password":"broker-admin-pw"}}"#
                    .utf8))
        #expect(
            String(decoding: project, as: UTF8.self)
                == #"{"op":"appwrite_project","project":"p1","key":"[redacted: 25 characters, ending …cdef]","admin":{"username":"admin","password":"[redacted: 15 characters]"}}"#
        )
        let form = Redaction.body(
            Array(
                "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=eyJhbGci.Y2xhaW1z.c2ln".utf8
            ))
        #expect(
            String(decoding: form, as: UTF8.self)
                == "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=eyJhbGci.Y2xhaW1z.[redacted%20signature:%204%20characters]"
        )
        let pem = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49\n-----END PRIVATE KEY-----\n"
        let account = Redaction.body(
            Array(JSON.object(JSONObject([("type", "service_account"), ("pk", .string(pem))])).compactBytes))
        #expect(!String(decoding: account, as: UTF8.self).contains("MIGHAgEAMBMGByqGSM49"))
        #expect(
            Redaction.path("/v2/push/sub-key/sub-c-1/devices/abc?type=apns2&auth=secret-token-123456789")
                == "/v2/push/sub-key/sub-c-1/devices/abc?type=apns2&auth=[redacted:%2022%20characters,%20ending%20%E2%80%A66789]"
        )
    }

    /// Each secret a backend sends, through each door, then every place the log is read:
    /// none shows it whole, and a search for it finds nothing; with `--log-secrets` the
    /// same requests show it, so the searches below can fail.
    @Test(arguments: [false, true]) func noReadPathShowsASecretUnlessTheOwnerAsks(shown: Bool) throws {
        let shell = try Shell(arguments: shown ? ["--log-secrets"] : [])
        let port = shell.port
        let stream = try InspectorTests.StreamReader(["http://127.0.0.1:\(port)/api/v1/stream"])
        #expect(stream.read(until: "log stream").contains("log stream"))
        let signer = ProviderTokenSigner()
        let apnsJWT = signer.authorization(issuedAt: Date().timeIntervalSince1970)
        let apnsSignature = String(apnsJWT.split(separator: ".").last!)
        let made = try shell.curl([
            "-X", "POST", "-H", "content-type: application/json", "--data-binary",
            #"{"service":"fcm","project":"demo"}"#,
            "http://127.0.0.1:\(port)/api/v1/credentials",
        ])
        let bearer = try #require(made.split(separator: "\"").first { $0.hasPrefix("Bearer ") }).dropFirst(7)
        let assertionSignature = "QXNzZXJ0aW9uU2lnbmF0dXJlMDEyMzQ1Njc4OQ"
        let secrets = [
            String(apnsSignature), String(bearer), assertionSignature, "standard_appwrite_api_key_0123456789",
            "broker-admin-password-77", "user-password-9876543210",
        ]
        _ = try shell.curl([
            "--http2-prior-knowledge", "-H", "apns-topic: com.example.app", "-H", "authorization: \(apnsJWT)", "-d",
            #"{"aps":{"alert":"x"}}"#, "http://127.0.0.1:\(port)/3/device/\(String(repeating: "ab", count: 32))",
        ])
        _ = try shell.curl([
            "--http2-prior-knowledge", "-H", "authorization: Bearer \(bearer)", "-H", "content-type: application/json",
            "-d", #"{"message":{"token":"t","data":{"a":"b"}}}"#,
            "http://127.0.0.1:\(port)/v1/projects/demo/messages:send",
        ])
        _ = try shell.curl([
            "-d",
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=eyJhbGciOiJSUzI1NiJ9.e30.\(assertionSignature)",
            "http://127.0.0.1:\(port)/token",
        ])
        _ = try shell.curl([
            "-H", "x-appwrite-project: p1", "-H", "x-appwrite-key: \(secrets[3])", "-H",
            "content-type: application/json",
            "-d", #"{"userId":"u1","email":"u1@example.com","password":"\#(secrets[5])"}"#,
            "http://127.0.0.1:\(port)/v1/users",
        ])
        let line = try shell.send(
            #"{"op":"appwrite_project","project":"p1","key":"\#(secrets[3])","endpoint":"mqtt://127.0.0.1:1","admin":{"username":"admin","password":"\#(secrets[4])"}}"#
        )
        let log = try shell.curl(["http://127.0.0.1:\(port)/api/v1/log?limit=100"])
        let entries =
            try JSON.parse(text: String(log[log.range(of: "\r\n\r\n")!.upperBound...]))["entries"]?.arrayValue ?? []
        #expect(entries.count >= 6)
        var read = log + line.joined(separator: "\n") + shell.linesWritten().joined(separator: "\n")
        for entry in entries {
            let seq = try #require(entry["seq"]?.integerValue)
            read += try shell.curl(["http://127.0.0.1:\(port)/api/v1/log/\(seq)"])
        }
        read += stream.read(until: "\"op\":\"appwrite_project\"")
        stream.stop()
        for secret in secrets {
            #expect(read.contains(secret) == shown, "\(secret) \(shown ? "hidden" : "shown")")
            let search = try shell.curl([
                "http://127.0.0.1:\(port)/api/v1/log?q=\(secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"
            ])
            #expect(search.contains(#""entries":[]"#) != shown, "a search for \(secret): \(search)")
        }
        // What helps a person stays: the JWT's header and claims, the scheme, the key's end.
        if !shown {
            #expect(read.contains(String(apnsJWT.split(separator: ".")[1])))
            #expect(read.contains("[redacted signature: \(apnsSignature.count) characters]"))
            #expect(read.contains("ending …6789"))
        }
        let world = try shell.curl(["http://127.0.0.1:\(port)/api/v1/world"])
        #expect(world.contains(shown ? #""secrets":"shown""# : #""secrets":"redacted""#))
        #expect(shell.stop() == 0)
    }
}
