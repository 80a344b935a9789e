import Credentials
import OrderedJSON

/// The ops that register a backend's keys with the world's services: APNs provider-token
/// keys, Google service accounts and Appwrite projects.
extension LineProtocol {
    func apnsKey(_ request: Request, _ reply: inout JSONObject) throws {
        let keyID = try request.string("key_id")
        let team = try request.string("team")
        let pem = try request.string("public_key")
        guard let key = PublicKey(pem: pem), key.kind == .ecP256 else {
            throw request.invalid("\"public_key\" must be an EC P-256 public key in PEM (-----BEGIN PUBLIC KEY-----)")
        }
        apns.keys.register(APNsProviderTokens.Key(keyID: keyID, team: team, publicKey: key))
        reply["keys"] = .array(apns.keys.keys.keys.sorted().map(JSON.string))
    }

    func googleKey(_ request: Request, _ reply: inout JSONObject) throws {
        let email = try request.string("client_email")
        let pem = try request.string("public_key")
        guard let key = PublicKey(pem: pem), key.kind == .rsa else {
            throw request.invalid("\"public_key\" must be an RSA public key in PEM (-----BEGIN PUBLIC KEY-----)")
        }
        guard let project = try request.optionalString("project") ?? OAuthService.serviceAccountProject(email) else {
            throw request.invalid("\"project\" is needed: '\(email)' is not <name>@<project>.iam.gserviceaccount.com")
        }
        oauth.register(email: email, key: key, project: project)
        reply["keys"] = .array(oauth.googleKeys.keys.sorted().map(JSON.string))
    }
}

extension LineProtocol {
    /// APW-9: an Appwrite project's API key, its broker, and that broker's
    /// dynamic-security admin (optional: without one, nothing is enforced).
    func appwriteProject(_ request: Request, _ reply: inout JSONObject) throws {
        let project = try request.string("project")
        let key = try request.string("key")
        let endpoint = try request.string("endpoint")
        var admin: (username: String, password: String)?
        if let value = request.fields["admin"], value != .null {
            guard case .string(let username)? = value["username"], case .string(let password)? = value["password"]
            else {
                throw request.invalid(
                    "\"admin\" must be {\"username\": …, \"password\": …}, the broker's dynamic-security admin")
            }
            admin = (username, password)
        }
        guard !project.isEmpty, !key.isEmpty else { throw request.invalid("\"project\" and \"key\" must not be empty") }
        reply["effect"] = .string(try appwrite.register(project: project, key: key, endpoint: endpoint, admin: admin))
    }
}
