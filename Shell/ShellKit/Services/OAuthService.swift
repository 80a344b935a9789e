import Credentials
import Foundation
import HTTPMessage
import OrderedJSON

/// Google's OAuth 2 token endpoint (`oauth2.googleapis.com/token`): service accounts'
/// public keys (`google_key`), the access tokens it issued for them, and what FCM checks.
final class OAuthService {
    let world: World
    /// Service accounts' public keys and projects, by client email. Once there is one,
    /// every assertion must be signed by its issuer's key.
    private(set) var googleKeys: [String: (key: PublicKey, project: String)] = [:]
    /// The access tokens issued, each bound to its project (nil: any project).
    var accessTokens = AccessTokens()

    init(world: World) { self.world = world }

    /// Registers a service account's key; its tokens send to `project` only.
    func register(email: String, key: PublicKey, project: String) { googleKeys[email] = (key, project) }

    /// An access token, as the token endpoint issues it, valid for 3599 s.
    func issue(project: String?) -> String {
        accessTokens.issue(project: project, lifetime: 3_599_000, now: world.clock())
    }

    /// The `<project>` of a service account's `<name>@<project>.iam.gserviceaccount.com`.
    static func serviceAccountProject(_ email: String) -> String? {
        let suffix = ".iam.gserviceaccount.com"
        guard email.hasSuffix(suffix), let at = email.lastIndex(of: "@") else { return nil }
        let project = email[email.index(after: at)...].dropLast(suffix.count)
        return project.isEmpty ? nil : String(project)
    }

    /// Google's token URL: what an assertion's `aud` must be.
    static let tokenAudiences: Set = [
        "https://oauth2.googleapis.com/token", "https://www.googleapis.com/oauth2/v4/token",
    ]

    /// `POST /token`, `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` and an
    /// RS256 `assertion`, as Google's libraries send for a service account.
    func answer(_ request: HTTPRequest) -> ServiceAnswer {
        var report = JSONObject([("network", "oauth")])
        func refuse(_ error: String, _ description: String) -> ServiceAnswer {
            report["status"] = 400
            report["error"] = .string(error)
            report["effect"] = .string("refused: \(description)")
            let body = JSON.object(
                JSONObject([("error", .string(error)), ("error_description", .string(description))])
            ).compactBytes
            return (Report(report), HTTPResponse.json(status: 400, body: body))
        }
        guard request.hasMethod("POST"), (request.path ?? "").hasPrefix("/token") else {
            return refuse("invalid_request", "the token endpoint takes POST /token")
        }
        let form = HTTPRequest.formFields(request.body)
        guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer" else {
            return refuse("unsupported_grant_type", "grant_type must be urn:ietf:params:oauth:grant-type:jwt-bearer")
        }
        guard let assertion = form["assertion"] else { return refuse("invalid_request", "no assertion") }
        let jwt: JWT
        do { jwt = try JWT(assertion) } catch { return refuse("invalid_grant", "the assertion is not a JWT: \(error)") }
        guard jwt.header["alg"] == "RS256" else { return refuse("invalid_grant", "the assertion's alg must be RS256") }
        guard let issuer = jwt.claims["iss"]?.stringValue, jwt.claims["scope"]?.stringValue != nil,
            let audience = jwt.claims["aud"]?.stringValue
        else {
            return refuse("invalid_grant", "the assertion needs iss, scope and aud")
        }
        guard Self.tokenAudiences.contains(audience) else {
            return refuse("invalid_grant", "the assertion's aud must be the token URL, not \(audience)")
        }
        guard let issuedAt = jwt.seconds("iat"), let expires = jwt.seconds("exp") else {
            return refuse("invalid_grant", "the assertion needs numeric iat and exp")
        }
        let now = Double(world.clock()) / 1000
        guard expires > issuedAt, expires - issuedAt <= 3600 else {
            return refuse("invalid_grant", "iat and exp must be at most 3600 s apart")
        }
        guard expires >= now else { return refuse("invalid_grant", "the assertion has expired") }
        guard issuedAt - now <= 300 else {
            return refuse("invalid_grant", "the assertion's iat is more than 5 minutes ahead of the clock")
        }
        var checked = "its signature was not checked (no key is registered with google_key)"
        var project: String?
        if !googleKeys.isEmpty {
            // Once any key is registered, every assertion must be signed by its issuer's.
            guard let account = googleKeys[issuer] else {
                return refuse("invalid_grant", "Invalid grant: account not found (no key is registered for \(issuer))")
            }
            guard account.key.verifies(jwt) else { return refuse("invalid_grant", "Invalid JWT Signature.") }
            checked = "its signature matches the registered key; the token sends to project \(account.project) only"
            project = account.project
        }
        let token = issue(project: project)
        report["status"] = 200
        report["effect"] = .string("issued an access token to \(issuer) for 3599 s; \(checked)")
        let body = JSON.object(
            JSONObject([("access_token", .string(token)), ("expires_in", 3599), ("token_type", "Bearer")])
        ).compactBytes
        return (Report(report), HTTPResponse.json(status: 200, body: body))
    }

    /// Google's token endpoint's own error for a chaos rule's answer name.
    static func chaosAnswer(_ name: String) -> ServiceAnswer {
        let status = name == "temporarily_unavailable" ? 503 : 400
        let description =
            name == "temporarily_unavailable"
            ? "The service is temporarily unavailable; try again later." : "Invalid grant: account not found"
        let report = JSONObject([
            ("network", "oauth"), ("status", .integer(Int64(status))), ("error", .string(name)),
        ])
        let body = JSON.object(JSONObject([("error", .string(name)), ("error_description", .string(description))]))
        return (
            Report(report),
            HTTPResponse.json(status: status, body: body.compactBytes)
        )
    }
}

extension OAuthService: WorldService {
    /// Credentials: the service accounts' public keys and the access tokens issued.
    func save(_ part: WorldPart) -> JSONObject {
        guard part == .credentials else { return JSONObject() }
        let accounts = googleKeys.sorted { $0.key < $1.key }.map { email, account in
            JSON.object(
                JSONObject([
                    ("client_email", .string(email)), ("project", .string(account.project)),
                    ("public_key", .string(account.key.pem)),
                ]))
        }
        let tokens = accessTokens.issuedInOrder.map { issued in
            JSON.object(
                JSONObject([
                    ("token", .string(issued.token)), ("expires_ms", .integer(issued.grant.expires)),
                    ("project", issued.grant.project.map(JSON.string) ?? .null),
                ]))
        }
        return JSONObject([("google_keys", .array(accounts)), ("access_tokens", .array(tokens))])
    }

    func restoring(_ part: WorldPart, from saved: WorldSnapshot.Reader) throws(WorldSnapshot.Refusal) -> (() -> Void)? {
        guard part == .credentials else { return nil }
        var accounts: [(email: String, key: PublicKey, project: String)] = []
        for account in try saved.objects("google_keys") {
            guard let key = PublicKey(pem: try account.string("public_key")), key.kind == .rsa else {
                throw account.wrong("public_key", "an RSA public key in PEM")
            }
            accounts.append((try account.string("client_email"), key, try account.string("project")))
        }
        var tokens: [(token: String, grant: AccessTokens.Grant)] = []
        for token in try saved.objects("access_tokens") {
            tokens.append(
                (
                    try token.string("token"),
                    AccessTokens.Grant(
                        expires: try token.integer("expires_ms"), project: try token.optionalString("project"))
                ))
        }
        return { [self] in
            for account in accounts { register(email: account.email, key: account.key, project: account.project) }
            let now = world.clock()
            for token in tokens { accessTokens.issue(token.token, token.grant, now: now) }
        }
    }

    /// Credentials: the service-account keys registered and the access tokens issued.
    func clear(_ part: WorldPart) -> Int {
        guard part == .credentials else { return 0 }
        defer {
            googleKeys.removeAll()
            accessTokens = AccessTokens(capacity: accessTokens.capacity)
        }
        return googleKeys.count + accessTokens.count
    }
}
