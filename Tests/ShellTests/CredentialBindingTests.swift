import Credentials
import Foundation
import HTTPMessage
import OrderedJSON
import ShellKit
import Testing

/// Credentials that bind (front-door.md, "Provider tokens" and "OAuth 2 token
/// endpoint"): each refusal beside the success it is the other side of, on the world's
/// own clock, through the services as the front door reaches them.
@Suite struct CredentialBindingTests {
    /// The world's clock, moved by hand (milliseconds since 1970).
    final class Clock: @unchecked Sendable {
        var now = Int64(Date().timeIntervalSince1970) * 1000
        var seconds: Double { Double(now) / 1000 }
    }

    /// A session on `clock`, with an Android app in each of the projects `demo` and
    /// `other`, launched, registered and subscribed; their tokens.
    func world(_ clock: Clock) throws -> (Session, demo: String, other: String) {
        let session = Session(clock: { clock.now })
        func app(_ project: String) throws -> String {
            _ = session.handle(line: Array(#"{"op":"device","platform":"android","fcm_project":"\#(project)"}"#.utf8))
            _ = session.handle(line: Array(#"{"op":"launch"}"#.utf8))
            let reply = try #require(
                session.handle(line: Array(#"{"op":"call","plugin":"push","method":"register","input":""}"#.utf8)).last)
            _ = session.handle(
                line: Array(#"{"op":"subscribe","key":"push","plugin":"push","stream":"events","input":""}"#.utf8))
            let output = try #require(try JSON.parse(text: reply)["output"]?.stringValue)
            return try #require(try JSON.parse(text: output)["token"]?.stringValue)
        }
        return (session, try app("demo"), try app("other"))
    }

    func request(_ host: String, _ path: String, _ headers: [(String, String)] = [], body: String) -> HTTPRequest {
        HTTPRequest(
            headers: [(":method", "POST"), (":path", path), (":authority", host)] + headers, body: Array(body.utf8),
            serverName: host, tls: true, http2: true)
    }

    /// Asks the token endpoint; the access token, or the answer's `error_description`.
    func token(_ session: Session, _ form: String) throws -> Result<String, Refused> {
        let exchange = session.handle(network: request("oauth2.googleapis.com", "/token", body: form))
        let body = try JSON.parse(exchange.response.body)
        if let token = body["access_token"]?.stringValue { return .success(token) }
        return .failure(Refused(status: exchange.response.status, words: body["error_description"]?.stringValue ?? ""))
    }

    struct Refused: Error, Equatable {
        let status: Int
        let words: String
    }

    /// Sends an FCM message to `token` in `project`; the status and the lines written.
    func send(_ session: Session, bearer: String, project: String, to token: String) -> (Int, [String]) {
        let exchange = session.handle(
            network: request(
                "fcm.googleapis.com", "/v1/projects/\(project)/messages:send", [("authorization", "Bearer \(bearer)")],
                body: #"{"message":{"token":"\#(token)","data":{"n":"1"}}}"#))
        return (exchange.response.status, exchange.lines)
    }

    @Test func onceAnyKeyIsRegisteredEveryAssertionNeedsItsIssuersKey() throws {
        let clock = Clock()
        let (session, demo, _) = try world(clock)
        let account = ServiceAccountSigner()
        let stranger = ServiceAccountSigner(email: "attacker@elsewhere.iam.gserviceaccount.com")
        // No key registered: nothing is checked, and the token may send anywhere.
        let open = try token(session, stranger.tokenRequest(issuedAt: clock.seconds)).get()
        _ = session.handle(line: Array(account.registration.utf8))
        // Now an issuer with no key is refused, however well its own key signed.
        let refused = try token(session, stranger.tokenRequest(issuedAt: clock.seconds))
        #expect(
            refused
                == .failure(
                    Refused(
                        status: 400,
                        words: "Invalid grant: account not found (no key is registered for \(stranger.email))")))
        // The registered account's own assertion passes, and sends.
        let bound = try token(session, account.tokenRequest(issuedAt: clock.seconds)).get()
        let (status, lines) = send(session, bearer: bound, project: "demo", to: demo)
        #expect(status == 200 && lines.first?.hasPrefix(#"{"delivery""#) == true, "\(lines)")
        // A token issued while no key was registered belongs to no project.
        #expect(send(session, bearer: open, project: "demo", to: demo).0 == 200)
    }

    @Test func anAssertionFromTheFutureIsABadGrant() throws {
        let clock = Clock()
        let (session, _, _) = try world(clock)
        let account = ServiceAccountSigner()
        _ = session.handle(line: Array(account.registration.utf8))
        #expect(try token(session, account.tokenRequest(issuedAt: clock.seconds + 299)).get().hasPrefix("ya29."))
        let ahead = try token(session, account.tokenRequest(issuedAt: clock.seconds + 301))
        #expect(
            ahead
                == .failure(
                    Refused(status: 400, words: "the assertion's iat is more than 5 minutes ahead of the clock")))
        let farAhead = try token(session, account.tokenRequest(issuedAt: clock.seconds + 100_000_000))
        #expect(farAhead.map { _ in "issued" } != .success("issued"))
    }

    /// A token belongs to its service account's project: another project's send is 403
    /// `PERMISSION_DENIED` and delivers nothing; it expires with the world's clock.
    @Test func anAccessTokenSendsToItsOwnProjectOnlyUntilItExpires() throws {
        let clock = Clock()
        let (session, demo, other) = try world(clock)
        let account = ServiceAccountSigner()
        _ = session.handle(line: Array(account.registration.utf8))
        let bound = try token(session, account.tokenRequest(issuedAt: clock.seconds)).get()
        let (denied, deniedLines) = send(session, bearer: bound, project: "other", to: other)
        #expect(denied == 403)
        #expect(deniedLines.count == 1 && deniedLines[0].contains(#""error":"PERMISSION_DENIED""#), "\(deniedLines)")
        #expect(send(session, bearer: bound, project: "demo", to: demo).0 == 200)
        // An explicit project in google_key binds to it instead of the email's.
        let named = ServiceAccountSigner(email: "pusher@tools.iam.gserviceaccount.com")
        let line = named.registration.replacingOccurrences(
            of: #"{"op":"google_key","#, with: #"{"op":"google_key","project":"other","#)
        _ = session.handle(line: Array(line.utf8))
        let otherToken = try token(session, named.tokenRequest(issuedAt: clock.seconds)).get()
        #expect(send(session, bearer: otherToken, project: "other", to: other).0 == 200)
        #expect(send(session, bearer: otherToken, project: "demo", to: demo).0 == 403)
        // 3,599 s later the token is gone.
        clock.now += 3_599_000
        #expect(send(session, bearer: bound, project: "demo", to: demo).0 == 401)
    }

    /// A session on `clock` with an iOS app launched and registered, and `signer`'s key
    /// registered with `apns_key`: a push to that device over the network with an
    /// `authorization`, answered with its status and reason.
    func apnsWorld(_ clock: Clock, _ signer: ProviderTokenSigner) throws -> (String) -> (Int, String?) {
        let session = Session(clock: { clock.now })
        _ = session.handle(line: Array(#"{"op":"device","platform":"ios"}"#.utf8))
        _ = session.handle(line: Array(#"{"op":"launch"}"#.utf8))
        let reply = try #require(
            session.handle(line: Array(#"{"op":"call","plugin":"push","method":"register","input":""}"#.utf8)).last)
        let output = try #require(try JSON.parse(text: reply)["output"]?.stringValue)
        let device = try #require(try JSON.parse(text: output)["token"]?.stringValue)
        _ = session.handle(
            line: Array(
                #"{"op":"apns_key","key_id":"ABC123DEFG","team":"TEAM000001","public_key":\#(JSON.string(signer.publicKeyPEM).compactText)}"#
                    .utf8))
        return { authorization in
            let exchange = session.handle(
                network: self.request(
                    "api.push.apple.com", "/3/device/\(device)",
                    [("apns-topic", "com.example.app"), ("authorization", authorization)],
                    body: #"{"aps":{"alert":"x"}}"#))
            return (exchange.response.status, try? JSON.parse(exchange.response.body)["reason"]?.stringValue)
        }
    }

    /// An APNs provider token from more than 5 minutes ahead is refused, and one that
    /// passed is not trusted forever from the cache: the rule is checked again.
    @Test func aProviderTokenFromTheFutureIsRefusedEvenFromTheCache() throws {
        let clock = Clock()
        let signer = ProviderTokenSigner()
        let push = try apnsWorld(clock, signer)
        #expect(push(signer.authorization(issuedAt: clock.seconds + 301)) == (403, "InvalidProviderToken"))
        #expect(push(signer.authorization(issuedAt: clock.seconds + 315_360_000)) == (403, "InvalidProviderToken"))
        let soon = signer.authorization(issuedAt: clock.seconds + 200)
        #expect(push(soon).0 == 200)
        // Real time stepping back (an NTP correction) does not take the world's clock with
        // it (chaos.md, "The world's clock"), so the cached token is not 400 s ahead now.
        clock.now -= 200_000
        #expect(push(soon).0 == 200)
    }

    /// The token that passed last is trusted again from its bytes alone only when they
    /// are the same bytes, for the same team, while it is still valid; anything else is
    /// left to the whole check.
    @Test func theLastProviderTokenIsTrustedAgainOnlyAsTheSameBytesForItsTeamWhileValid() throws {
        var tokens = APNsProviderTokens()
        let signer = ProviderTokenSigner()
        let now = 1_700_000_000.0
        let token = signer.authorization(issuedAt: now, signed: false)
        func last(_ text: String, team: String = "TEAM000001", at time: Double = now) -> APNsProviderTokens.Accepted? {
            Array(text.utf8).withUnsafeBufferPointer { tokens.lastAccepted(authorization: $0, team: team, now: time) }
        }
        #expect(last(token) == nil, "nothing has passed yet")
        guard case .success(let accepted) = tokens.check(authorization: token, team: "TEAM000001", now: now) else {
            Issue.record("an unsigned token passes while no key is registered")
            return
        }
        #expect(last(token) == accepted)
        #expect(last(token, at: now + 3_600) == accepted)
        #expect(last(token, team: "TEAM000002") == nil)
        #expect(last(token, at: now + 3_601) == nil, "expired an hour after it was issued")
        #expect(last(token, at: now - 301) == nil, "from more than 5 minutes ahead of the clock")
        #expect(last(String(token.dropLast())) == nil)
        #expect(last(token + "A") == nil)
        #expect(last("") == nil)
        var changed = Array(token.utf8)
        changed[changed.count - 5] ^= 0x01
        #expect(last(String(decoding: changed, as: UTF8.self)) == nil)
        // Through the network: the same token twice passes, then the same bytes with one
        // changed are checked whole, and refused.
        let clock = Clock()
        let push = try apnsWorld(clock, signer)
        let signed = signer.authorization(issuedAt: clock.seconds)
        #expect(push(signed) == (200, nil))
        #expect(push(signed) == (200, nil))
        var forged = Array(signed.utf8)
        forged[forged.count - 5] = forged[forged.count - 5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(push(String(decoding: forged, as: UTF8.self)) == (403, "InvalidProviderToken"))
        #expect(push(signed) == (200, nil))
        clock.now += 3_601_000
        #expect(push(signed) == (403, "ExpiredProviderToken"))
    }

    @Test func accessTokensAreForgottenWhenExpiredAndAtMostACapacityLive() {
        var tokens = AccessTokens()
        #expect(tokens.capacity == 100_000)
        for index in 0...100_000 { tokens.issue("t\(index)", .init(expires: 10_000, project: nil), now: 0) }
        #expect(tokens.count == 100_000)
        #expect(tokens.grant(for: "t0", now: 0) == nil, "the oldest goes first")
        #expect(tokens.grant(for: "t1", now: 0) != nil && tokens.grant(for: "t100000", now: 0) != nil)
        // Once expired, a token is refused and forgotten; the next issue sweeps the rest.
        #expect(tokens.grant(for: "t1", now: 10_000) == nil)
        tokens.issue("late", .init(expires: 20_000, project: "demo"), now: 10_000)
        #expect(tokens.count == 1)
        #expect(tokens.grant(for: "late", now: 10_000) == .init(expires: 20_000, project: "demo"))
    }

    /// A token asked for as bytes is granted exactly as the same token as text, though the
    /// last one granted is only compared: never past its expiry, never once it is forgotten
    /// or issued again, never for other bytes.
    @Test func anAccessTokenAskedForAsBytesIsGrantedAsTheSameTokenAsText() {
        func grant(_ tokens: inout AccessTokens, _ token: String, now: Int64) -> AccessTokens.Grant? {
            Array(token.utf8).withUnsafeBufferPointer { tokens.grant(forBytes: $0, now: now) }
        }
        let hour = AccessTokens.Grant(expires: 3_600, project: "demo")
        var tokens = AccessTokens(capacity: 2)
        #expect(grant(&tokens, "ya29.a", now: 0) == nil, "nothing issued")
        tokens.issue("ya29.a", hour, now: 0)
        for _ in 0..<2 { #expect(grant(&tokens, "ya29.a", now: 0) == hour) }
        for other in ["ya29.b", "ya29.", "ya29.aa", "", "YA29.A", "ya29.a\u{0}"] {
            #expect(grant(&tokens, other, now: 0) == nil, "\(other)")
        }
        #expect(grant(&tokens, "ya29.a", now: 3_600) == nil, "expired")
        #expect(tokens.grant(for: "ya29.a", now: 0) == nil, "and forgotten")

        // Issued again for another project: the new grant, not the one compared last.
        tokens.issue("ya29.a", hour, now: 0)
        #expect(grant(&tokens, "ya29.a", now: 0) == hour)
        let other = AccessTokens.Grant(expires: 7_200, project: "other")
        tokens.issue("ya29.a", other, now: 0)
        #expect(grant(&tokens, "ya29.a", now: 0) == other)

        // Pushed out by capacity while it was the last one granted.
        tokens.issue("ya29.b", hour, now: 0)
        #expect(grant(&tokens, "ya29.b", now: 0) == hour)
        tokens.issue("ya29.c", hour, now: 0)
        tokens.issue("ya29.d", hour, now: 0)
        #expect(grant(&tokens, "ya29.b", now: 0) == nil, "the oldest went first")
        #expect(grant(&tokens, "ya29.d", now: 0) == hour)
    }
}
