import CXHost
import Foundation
import FrontDoor
import HTTPMessage
import OrderedJSON
import ShellKit
import Testing

/// Header values made for one answer alone (`HTTPResponse.uniqueHeaders`, APNs's ids) go
/// out over HTTP/2 as literals never indexed: in HPACK's table they would push out the
/// values that repeat, and nghttp2 compares every entry of a name on each later lookup.
@Suite(.serialized) struct UniqueHeaderTests {
    /// The transport: a marked header arrives never indexed, an unmarked one indexed as
    /// before, on answers sent one after the other on one connection (where a table fills).
    @Test func aMarkedHeaderIsSentNeverIndexed() throws {
        let scratch = ScratchDirectory("cx-unique")
        defer { scratch.remove() }
        let ca = try TestCA.ensure(in: scratch.path)
        let answered = Monitor(0)
        let door = try FrontDoor(
            address: "127.0.0.1", port: 0, ca: ca, tunnelHosts: { _ in false },
            batches: { batch in
                batch.map { request in
                    let number = answered.withLock {
                        $0 += 1
                        return $0
                    }
                    var response = HTTPResponse(status: 200)
                    response.appendHeader("x-answer-id", "id-\(number)", unique: request.path == "/unique")
                    response.appendHeader("content-type", "text/plain")
                    return response
                }
            })
        defer { door.stop() }
        let client = try #require(HTTP2TestClient(port: door.port))
        var streams: [(id: Int32, unique: Bool)] = []
        for unique in [true, true, false, true, false] {
            let stream = client.request("GET", "127.0.0.1", unique ? "/unique" : "/plain", body: 0)
            client.pump { client.statuses[stream] != nil }
            streams.append((stream, unique))
        }
        var seen: Set<String> = []
        for stream in streams {
            let headers = try #require(client.headers[stream.id])
            let id = try #require(headers.first { $0.name == "x-answer-id" })
            #expect(id.neverIndexed == stream.unique, "\(headers)")
            #expect(id.value.hasPrefix("id-") && seen.insert(id.value).inserted)
            #expect(headers.filter { $0.name != "x-answer-id" }.allSatisfy { !$0.neverIndexed }, "\(headers)")
            #expect(headers.contains { $0.name == "content-type" && $0.value == "text/plain" })
        }
    }

    /// The service: every APNs answer marks its `apns-id`, and from the development
    /// environment its `apns-unique-id`, and nothing else.
    @Test func apnsMarksItsIdsAndNothingElse() throws {
        let session = Session()
        session.inspector = InspectorSettings()
        func network(_ method: String, _ host: String, _ path: String, _ headers: [(String, String)], _ body: String)
            -> HTTPResponse
        {
            session.handle(
                network: HTTPRequest(
                    headers: [(":method", method), (":path", path), (":authority", host)] + headers,
                    body: Array(body.utf8), serverName: host, tls: true, http2: true)
            ).response
        }
        let made = try JSON.parse(
            network(
                "POST", "127.0.0.1", "/api/v1/devices", [("content-type", "application/json")],
                #"{"platform":"ios","ready":true,"apns_environment":"development"}"#
            ).body)
        let token = try #require(made["devices"]?.arrayValue?.first?["token"]?.stringValue)
        let authorization = ProviderTokenSigner().authorization(issuedAt: Date().timeIntervalSince1970, signed: false)
        func push(_ host: String) -> HTTPResponse {
            network(
                "POST", host, "/3/device/\(token)",
                [("apns-topic", "com.example.app"), ("authorization", authorization)], #"{"aps":{"alert":"x"}}"#)
        }
        /// The names of the marked headers.
        func marked(_ response: HTTPResponse) -> [String] {
            response.headers.indices.filter { response.uniqueHeaders & (1 << $0) != 0 }.map {
                response.headers[$0].name
            }
        }
        let accepted = push("api.sandbox.push.apple.com")
        #expect(accepted.status == 200 && marked(accepted) == ["apns-id", "apns-unique-id"], "\(accepted.headers)")
        let refused = push("api.push.apple.com")  // a development token at production
        #expect(refused.status == 400 && marked(refused) == ["apns-id"], "\(refused.headers)")
        #expect(refused.headers.map(\.name) == ["apns-id", "content-type"])
        let busy = Session.busyAnswer(
            HTTPRequest(
                headers: [(":method", "POST"), (":path", "/3/device/\(token)"), (":authority", "api.push.apple.com")],
                body: [], serverName: "api.push.apple.com", tls: true, http2: true))
        #expect(busy.status == 503 && marked(busy) == ["apns-id"])
        // Nothing beyond its headers is marked.
        for response in [accepted, refused, busy] {
            #expect(response.uniqueHeaders >> response.headers.count == 0)
        }
    }
}
