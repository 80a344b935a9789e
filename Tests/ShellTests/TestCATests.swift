import Foundation
import FrontDoor
import Testing

/// The front door's test CA, checked by OpenSSL's own verifier (the code TLS clients
/// run), with the strict X.509 checks that Python 3.13 and Go apply.
@Suite struct TestCATests {
    /// `openssl verify` of the server certificate for one name; its output.
    func verify(_ ca: TestCA, _ option: String, _ name: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "openssl", "verify", "-x509_strict", "-purpose", "sslserver", option, name, "-CAfile", ca.certificate,
            ca.serverCertificate,
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: output, as: UTF8.self) + (process.terminationStatus == 0 ? "" : " (failed)")
    }

    @Test func everyServiceHostVerifiesAgainstTheCAStrictly() throws {
        let scratch = ScratchDirectory("cxshell-ca")
        defer { scratch.remove() }
        let ca = try TestCA.ensure(in: scratch.path)
        #expect(TestCA.serverNames.count == 12)
        for name in TestCA.serverNames {
            let (kind, value) = (name.prefix { $0 != ":" }, String(name.drop { $0 != ":" }.dropFirst()))
            let host = value.hasPrefix("*.") ? "ps2" + value.dropFirst(1) : value
            let output = try verify(ca, kind == "IP" ? "-verify_ip" : "-verify_hostname", host)
            #expect(output.hasSuffix(": OK\n"), "\(name): \(output)")
        }
        #expect(try verify(ca, "-verify_hostname", "example.com").hasSuffix("(failed)"))
    }

    @Test func keysArePrivateAndTheCAIsKeptAcrossRuns() throws {
        let scratch = ScratchDirectory("cxshell-ca")
        defer { scratch.remove() }
        let dir = scratch.path
        let first = try TestCA.ensure(in: dir)
        for key in [first.privateKey, first.serverKey] {
            let mode = try #require(try FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? Int)
            #expect(mode == 0o600, "\(key)")
        }
        let caBytes = try Data(contentsOf: URL(fileURLWithPath: first.certificate))
        let serverBytes = try Data(contentsOf: URL(fileURLWithPath: first.serverCertificate))
        _ = try TestCA.ensure(in: dir)
        #expect(try Data(contentsOf: URL(fileURLWithPath: first.certificate)) == caBytes)
        #expect(try Data(contentsOf: URL(fileURLWithPath: first.serverCertificate)) == serverBytes)
        // A missing server certificate is made again, under the same CA.
        try FileManager.default.removeItem(atPath: first.serverCertificate)
        let again = try TestCA.ensure(in: dir)
        #expect(try Data(contentsOf: URL(fileURLWithPath: again.certificate)) == caBytes)
        #expect(try verify(again, "-verify_hostname", "fcm.googleapis.com").hasSuffix(": OK\n"))
        // A damaged CA is replaced, and the server certificate with it.
        try Data("not a key".utf8).write(to: URL(fileURLWithPath: first.privateKey))
        let fresh = try TestCA.ensure(in: dir)
        #expect(try Data(contentsOf: URL(fileURLWithPath: fresh.certificate)) != caBytes)
        #expect(try verify(fresh, "-verify_hostname", "api.push.apple.com").hasSuffix(": OK\n"))
    }

    @Test func aDirectoryThatCannotBeMadeIsAClearError() {
        #expect {
            _ = try TestCA.ensure(in: "/proc/cxshell-cannot-be-here")
        } throws: { error in
            "\(error)".hasPrefix("cannot make /proc/cxshell-cannot-be-here")
        }
    }
}
