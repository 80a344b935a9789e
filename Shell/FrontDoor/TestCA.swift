import CTestCA
import Foundation

/// The front door's private test CA (front-door.md, "Starting it"): a CA certificate
/// that clients trust, and a server certificate it signed whose names cover
/// `localhost`, `127.0.0.1`, `::1` and every service host. Made once in a directory
/// and kept, so a client's trust survives restarts. Nothing is trusted system-wide.
public struct TestCA: Sendable, Equatable {
    /// The CA certificate (PEM): what a client's CA bundle setting points at.
    public let certificate: String
    public let privateKey: String
    /// The server certificate followed by the CA's (PEM), and its key.
    public let serverCertificate: String
    public let serverKey: String

    /// The names the server certificate covers, as `DNS:…` / `IP:…`.
    public static var serverNames: [String] {
        var names: [String] = []
        var index = 0
        while let name = cx_test_ca_server_name(index) {
            names.append(String(cString: name))
            index += 1
        }
        return names
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The CA in `directory`, made (or its server certificate renewed) as needed.
    public static func ensure(in directory: String) throws(Failure) -> TestCA {
        // Its parents may be missing (the default is .cxshell/ca); the C side makes the last.
        let parent = (directory as NSString).deletingLastPathComponent
        if !parent.isEmpty {
            try? FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        }
        var message = [CChar](repeating: 0, count: 512)
        guard cx_test_ca_ensure(directory, &message, message.count) == 0 else {
            let text = message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            throw Failure(description: String(decoding: text, as: UTF8.self))
        }
        func file(_ name: String) -> String { (directory as NSString).appendingPathComponent(name) }
        return TestCA(
            certificate: file("ca.pem"), privateKey: file("ca-key.pem"), serverCertificate: file("server.pem"),
            serverKey: file("server-key.pem"))
    }
}
