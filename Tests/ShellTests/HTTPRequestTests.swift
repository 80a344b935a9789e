import HTTPMessage
import Testing

/// The host a request names, as routing and the log read it.
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

    @Test func theAuthorityComesBeforeTheHostHeaderAndNeitherIsNil() {
        #expect(Self.request([(":authority", "a.example:1"), ("host", "b.example")]).authorityHost == "a.example")
        #expect(Self.request([(":method", "POST")]).authorityHost == nil)
        #expect(Self.request([]).serverHost == nil)
    }
}
