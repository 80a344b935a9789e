import Foundation
import OrderedJSON
import Testing

/// Key files for real SDKs (`POST /api/v1/credentials` with a `format`): the world makes a
/// key, registers it, and hands out the file a backend loads; a provider token signed
/// with the `.p8` is accepted and one signed otherwise is not. (firebase-admin loading the
/// service-account file: Tests/Clients/service_life_test.py.)
@Suite struct KeyFileTests {
    let api = InspectorTests()

    @Test func aP8SignsProviderTokensTheWorldAccepts() throws {
        let shell = try FrontDoorTests.Shell()
        let device = try #require(try api.devices(shell, 1).first)
        let made = try api.call(shell, "POST", "/api/v1/credentials", json: #"{"format":"p8","key_id":"KEYFILE01"}"#)
        #expect(made.status == 201, "\(made.text)")
        let file = try #require(made.json)
        #expect(file["key_id"] == "KEYFILE01" && file["team_id"] == "TEAM000001")
        let p8 = try #require(file["p8"]?.stringValue)
        #expect(p8.hasPrefix("-----BEGIN PRIVATE KEY-----\n") && p8.hasSuffix("-----END PRIVATE KEY-----\n"))
        let now = Date().timeIntervalSince1970
        let backend = try #require(ProviderTokenSigner(p8: p8, keyID: "KEYFILE01", team: "TEAM000001"))
        #expect(
            try api.push(shell, device.token, authorization: backend.authorization(issuedAt: now)).contains(
                "HTTP/2 200"))
        // Another key under the same id: the registered key's signature check refuses it.
        let other = ProviderTokenSigner(keyID: "KEYFILE01", team: "TEAM000001")
        let forged = try api.push(shell, device.token, authorization: other.authorization(issuedAt: now))
        #expect(forged.contains("HTTP/2 403") && forged.contains("InvalidProviderToken"), "\(forged)")
        #expect(shell.stop() == 0)
    }

    @Test func aServiceAccountFileIsGooglesShapeWithItsPrivateKey() throws {
        let shell = try FrontDoorTests.Shell()
        let made = try api.call(
            shell, "POST", "/api/v1/credentials", json: #"{"format":"service_account","project":"demo-app"}"#)
        #expect(made.status == 201, "\(made.text)")
        let file = try #require(made.json)
        #expect(file["type"] == "service_account" && file["project_id"] == "demo-app")
        #expect(file["client_email"] == "cxshell-1@demo-app.iam.gserviceaccount.com")
        #expect(file["token_uri"] == "https://oauth2.googleapis.com/token")
        #expect(file["private_key_id"]?.stringValue?.count == 40)
        #expect(file["private_key"]?.stringValue?.hasPrefix("-----BEGIN PRIVATE KEY-----\n") == true)
        #expect(shell.stop() == 0)
    }

    @Test(arguments: [
        (#"{"format":"service_account"}"#, #"a service account needs "project""#),
        (#"{"format":"service_account","project":"Not A Project"}"#, #"a service account needs "project""#),
        (#"{"format":"pem"}"#, #""format" must be "p8" (an APNs signing key) or "service_account""#),
        (#"{"service":"fcm","format":"p8"}"#, #""format" must be "p8" (an APNs signing key) or "service_account""#),
        (#"{"format":"p8","team":""}"#, "team and key_id must not be empty"),
    ])
    func aBadKeyFileRequestIsRefusedAndRegistersNothing(body: String, sentence: String) throws {
        let shell = try FrontDoorTests.Shell()
        let device = try #require(try api.devices(shell, 1).first)
        let refused = try api.call(shell, "POST", "/api/v1/credentials", json: body)
        #expect(refused.status == 400)
        #expect(refused.json?["error"]?.stringValue?.hasPrefix(sentence) == true, "\(refused.text)")
        // No key was registered: an unsigned provider token is still not checked.
        #expect(try api.push(shell, device.token).contains("HTTP/2 200"))
        #expect(shell.stop() == 0)
    }
}
