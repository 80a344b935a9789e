import Foundation
import FrontDoor

/// `cxshell ca DIR`: the front door's test CA, without serving.
enum CACommand {
    static let help = """
        usage: cxshell ca DIR

        Makes the front door's private test CA in DIR (kept if it is already there) and a
        server certificate it signed for localhost, 127.0.0.1, ::1 and every service host
        (api.push.apple.com, api.development.push.apple.com, api.sandbox.push.apple.com,
        fcm.googleapis.com, oauth2.googleapis.com, ps.pndsn.com, *.pndsn.com). Prints one
        JSON line with the files: point a client's CA bundle at "ca". Keys stay in DIR
        (0600); nothing is trusted system-wide.
        """

    static func run(_ arguments: [String]) -> Int32 {
        guard arguments.count == 1, let directory = arguments.first else {
            FileHandle.standardError.write(Data((help + "\n").utf8))
            return 2
        }
        do {
            let ca = try TestCA.ensure(in: directory)
            let fields = [
                ("ca", ca.certificate), ("ca_key", ca.privateKey), ("server", ca.serverCertificate),
                ("server_key", ca.serverKey),
            ]
            print("{" + fields.map { #""\#($0.0)":"\#($0.1)""# }.joined(separator: ",") + "}")
            return 0
        } catch {
            FileHandle.standardError.write(Data("cxshell ca: \(error)\n".utf8))
            return 1
        }
    }
}
