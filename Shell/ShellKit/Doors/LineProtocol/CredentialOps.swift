import Credentials
import OrderedJSON

/// The ops that register a backend's keys with the world's services: APNs provider-token
/// keys and Google service accounts.
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
