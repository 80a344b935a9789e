import HTTPMessage
import Testing

@testable import ShellKit

/// The host a request names, its headers and path, as routing and the log read them.
@Suite struct HTTPRequestTests {
    static func request(_ headers: [(String, String)], serverName: String? = nil) -> HTTPRequest {
        HTTPRequest(
            headers: headers.map { (name: $0.0, value: $0.1) }, body: [], serverName: serverName, tls: false,
            http2: true)
    }

    @Test(arguments: [
        ("api.push.apple.com", "api.push.apple.com"),
        ("api.push.apple.com:443", "api.push.apple.com"),
        ("API.Push.Apple.COM:443", "api.push.apple.com"),
        ("FCM.googleapis.com", "fcm.googleapis.com"),
        ("127.0.0.1:8443", "127.0.0.1"),
        ("[::1]:8443", "::1"),
        ("[::1]", "::1"),
        ("[::FFFF:127.0.0.1]", "::ffff:127.0.0.1"),
        ("[::1", "::1"),
        ("localhost:", "localhost"),
        (":443", ""),
        ("", ""),
        ("Bücher.example:80", "bücher.example"),
    ])
    func theAuthorityNamesItsHostWithoutPortLowercased(authority: String, host: String) {
        #expect(Self.request([(":authority", authority)]).authorityHost == host)
        #expect(Self.request([("host", authority)]).authorityHost == host)
        #expect(Self.request([], serverName: authority).serverHost == host)
    }

    /// The scheme in any case, then one space; anything else is another scheme.
    @Test(
        arguments: [
            ("Bearer abc.def", "abc.def"), ("bearer abc", "abc"), ("BEARER abc", "abc"), ("bEaReR  two", " two"),
            ("bearer ", ""), ("Bearer ünï", "ünï"), ("Bearer", nil), ("Bearerabc", nil), ("Bearer\tabc", nil),
            ("Bearer\u{0}abc", nil), ("Basic abc", nil), ("", nil), ("BEARE", nil), ("Bearer\u{301} x", nil),
        ] as [(String, String?)])
    func aBearerTokenIsReadWhateverTheSchemesCase(authorization: String, token: String?) {
        #expect(Self.request([("authorization", authorization)]).bearerToken == token)
    }

    @Test func noAuthorizationHasNoBearerToken() {
        #expect(Self.request([(":path", "/")]).bearerToken == nil)
    }

    /// Methods are case-sensitive (RFC 9110): `post` is not `POST`, nor is a prefix of it.
    @Test(arguments: [
        ("POST", true), ("post", false), ("POS", false), ("POSTS", false), ("GET", false), ("", false),
    ])
    func theMethodIsComparedAsSent(method: String, isPost: Bool) {
        #expect(Self.request([(":method", method)]).hasMethod("POST") == isPost)
    }

    @Test func noMethodIsNoMethod() {
        #expect(!Self.request([(":path", "/")]).hasMethod("POST"))
        #expect(!Self.request([(":path", "POST")]).hasMethod("POST"))
    }

    @Test func theAuthorityComesBeforeTheHostHeaderAndNeitherIsNil() {
        #expect(Self.request([(":authority", "a.example:1"), ("host", "b.example")]).authorityHost == "a.example")
        #expect(Self.request([(":method", "POST")]).authorityHost == nil)
        #expect(Self.request([]).serverHost == nil)
    }

    /// Names are compared by length first: names of one length must still be told apart.
    @Test func headersOfTheSameLengthAreToldApartAndOnlyARepeatIsNamed() {
        let request = Self.request([
            (":method", "POST"), (":path", "/3/device/ab"), ("apns-id", "X"), ("apns-topic", "t"),
            ("authorization", "a"),
            ("apns-priority", "10"),
        ])
        #expect(request.header("apns-id") == "X")
        #expect(request.header(":method") == "POST")
        #expect(request.header("authorization") == "a")
        #expect(request.header("apns-priority") == "10")
        #expect(request.header("apns-ix") == nil)
        #expect(request.repeatedHeaderName == nil)
        #expect(
            Self.request([("apns-id", "1"), ("apns-topic", "t"), ("apns-id", "2")]).repeatedHeaderName == "apns-id")
        #expect(Self.request([(":path", "/a"), (":path", "/b")]).repeatedHeaderName == nil, "pseudo-headers are not")
    }

    @Test(
        arguments: [
            ("/3/device/ab", "/3/device/", true), ("/3/device/", "/3/device/", true),
            ("/3/device", "/3/device/", false),
            ("/3/devices", "/3/device/", false), ("", "/", false), ("/x", "", true), ("/TOKEN", "/token", false),
            // Bytes, not characters: a combining accent after the prefix is still after it.
            ("/token\u{301}", "/token", true),
        ] as [(String, StaticString, Bool)])
    func aPrefixIsTheTextsFirstBytes(text: String, prefix: StaticString, expected: Bool) {
        #expect(text.hasBytePrefix(prefix) == expected)
    }

    @Test(
        arguments: [
            ("x.pndsn.com", ".pndsn.com", true), ("pndsn.com", ".pndsn.com", false),
            ("x.pndsn.cox", ".pndsn.com", false),
            ("", ".com", false), ("a", "", true), ("bücher.cloud.appwrite.io", ".cloud.appwrite.io", true),
        ] as [(String, StaticString, Bool)])
    func aSuffixIsTheTextsLastBytes(text: String, suffix: StaticString, expected: Bool) {
        #expect(text.hasByteSuffix(suffix) == expected)
    }

    /// Where no host names a service, the path does, by its first bytes.
    /// FCM's `{project}`: one path segment, not empty, between the prefix and the suffix,
    /// which may not overlap.
    @Test(
        arguments: [
            ("/v1/projects/p/messages:send", "p"), ("/v1/projects/my-app-1/messages:send", "my-app-1"),
            ("/v1/projects/ünï/messages:send", "ünï"), ("/v1/projects//messages:send", nil),
            ("/v1/projects/messages:send", nil), ("/v1/projects/a/b/messages:send", nil),
            ("/v1/projects/p/messages:sen", nil), ("/v1/project/p/messages:send", nil), ("", nil),
        ] as [(String, String?)])
    func aMessagesPathNamesItsProject(path: String, project: String?) {
        #expect(FCMService.project(path) == project)
    }

    @Test func aPathNamesItsService() {
        typealias Service = NetworkDoor.Service
        func service(_ path: String) -> Service? { Service(Self.request([(":path", path)])) }
        #expect(service("/3/device/0a1b") == .apns(nil))
        #expect(service("/v1/projects/p/messages:send") == .fcm)
        #expect(service("/token") == .oauth)
        #expect(service("/webhooks/xmtp") == .webhook)
        for path in ["/publish/k/k/0/c/0", "/v1/push/sub-key/k/devices/t", "/v2/push/sub-key/k/devices-apns2/t"] {
            #expect(service(path) == .pubnub)
        }
        #expect(service("/3/devices") == nil)
        #expect(service("/") == nil)
        #expect(Service(Self.request([(":method", "GET")])) == nil)
        #expect(Service(host: "ps.pndsn.com") == .pubnub)
        #expect(Service(host: "eu.pndsn.com") == .pubnub)
        #expect(Service(host: "pndsn.com") == nil)
        #expect(Service(host: "x.cloud.appwrite.io") == .appwrite)
        #expect(Service(host: "api.push.apple.com") == .apns(.production))
        #expect(Service(host: "api.development.push.apple.com") == .apns(.development))
        #expect(Service(host: "api.sandbox.push.apple.com") == .apns(.development))
        #expect(Service(host: "fcm.googleapis.com") == .fcm)
        #expect(Service(host: "oauth2.googleapis.com") == .oauth)
        #expect(Service(host: "cloud.appwrite.io") == .appwrite)
        // A host's name in any case (DNS compares names so); the letters only.
        #expect(Service(host: "API.PUSH.APPLE.COM") == .apns(.production))
        #expect(Service(host: "Eu.PNDSN.com") == .pubnub)
        #expect(Service(host: "X.Cloud.Appwrite.IO") == .appwrite)
        // Same length as a service's name, another name; a byte that only folds to a name's
        // letter past ASCII; a suffix alone, or with no dot before it.
        for host in [
            "api.push.apple.org", "fcm.googleapis.net", "127.0.0.1", "", "api\u{0E}push.apple.com",
            "xpndsn.com", ".pndsn.co", "mycloud.appwrite.io", "cloud.appwrite.i",
        ] {
            #expect(Service(host: host) == nil, "\(host)")
        }
    }

    /// By `:authority` (or `Host`) in any case and with a port; with SNI, both must agree,
    /// and a misdirected request names both hosts lowercased, without ports.
    @Test func aRequestIsRoutedByItsHostsInAnyCaseOrByItsPath() {
        typealias Route = NetworkDoor.Route
        #expect(
            NetworkDoor.route(Self.request([(":authority", "API.Push.Apple.com:443")])) == .service(.apns(.production)))
        #expect(NetworkDoor.route(Self.request([("host", "fcm.googleapis.COM")])) == .service(.fcm))
        #expect(
            NetworkDoor.route(Self.request([(":authority", "fcm.googleapis.com")], serverName: "FCM.googleapis.com"))
                == .service(.fcm))
        #expect(
            NetworkDoor.route(
                Self.request([(":authority", "FCM.googleapis.com:443")], serverName: "api.push.apple.com"))
                == .misdirected(connection: "api.push.apple.com", authority: "fcm.googleapis.com"))
        #expect(
            NetworkDoor.route(Self.request([(":authority", "127.0.0.1:8443")], serverName: "oauth2.googleapis.com"))
                == .service(.oauth))
        #expect(
            NetworkDoor.route(Self.request([(":authority", "127.0.0.1:8443"), (":path", "/3/device/ab")]))
                == .unknownHost)
        #expect(
            NetworkDoor.route(Self.request([(":authority", "localhost"), (":path", "/api/v1/log?q=x")])) == .inspector)
    }

    /// The inspector's paths, a query after them or not; nothing that only starts like one.
    @Test(
        arguments: [
            ("/", true), ("/?x=1", true), ("/api/v1/", true), ("/api/v1/log?q=a?b", true), ("/metrics", true),
            ("/metrics?", true), ("/livez", true), ("/readyz?verbose", true), ("/favicon.ico", true),
            ("", false), ("/x", false), ("/api/v1", false), ("/api/v1?x=/", false), ("/metricsx", false),
            ("/metrics/", false), ("/livez/x?", false), ("/3/device/ab?/", false), ("?/", false),
        ] as [(String, Bool)])
    func theInspectorClaimsItsPathsWhateverTheirQuery(path: String, claimed: Bool) {
        #expect(InspectorResource.claims(Self.request([(":path", path)])) == claimed)
    }
}
