import HTTPMessage
import OrderedJSON
import Testing

@testable import PushServices
@testable import ShellKit
@testable import SimulatedDevice

/// Answers that say what happened, and only that: a bulk creation is whole or nothing,
/// a log entry names the devices a request reached, FCM answers as FCM with no device
/// in the world, and an unknown device's sentence stays short in a large world.
@Suite struct HonestAnswerTests {
    final class World {
        let session = Session()

        init() { session.inspector = InspectorSettings() }

        func line(_ text: String) throws -> JSONObject {
            let last = try #require(session.handle(text).last)
            return try #require(try JSON.parse(text: last).objectValue)
        }

        func api(_ method: String, _ path: String, _ body: String = "") throws -> (status: Int, body: JSON) {
            var headers = [(":method", method), (":path", path), (":authority", "127.0.0.1")]
            if method != "GET" { headers.append(("content-type", "application/json")) }
            let exchange = session.handle(
                network: HTTPRequest(headers: headers, body: Array(body.utf8), serverName: nil, tls: false, http2: true)
            )
            let json = exchange.response.body.isEmpty ? JSON.null : try JSON.parse(exchange.response.body)
            return (exchange.response.status, json)
        }

        /// The newest log entry.
        func lastEntry() throws -> JSON {
            try #require(try api("GET", "/api/v1/log?order=desc&limit=1").body["entries"]?.arrayValue?.first)
        }
    }

    @Test func aBulkCreationIsWholeOrNothingAndLoggedEitherWay() throws {
        let world = World()
        let web = try world.api("POST", "/api/v1/devices", #"{"platform":"web","ready":true,"count":3}"#)
        #expect(web.status == 400 && web.body["error"]?.stringValue?.contains("a web app cannot register") == true)
        #expect(try world.api("GET", "/api/v1/devices").body["devices"] == .array([]))
        let refused = try world.lastEntry()
        #expect(refused["status"] == 400 && refused["effect"]?.stringValue?.hasPrefix("nothing made") == true)
        // A refusal past the first device takes the devices made with it.
        let bad = try world.api("POST", "/api/v1/devices", #"{"platform":"ios","count":2,"bundle":7}"#)
        #expect(bad.status == 400)
        #expect(try world.api("GET", "/api/v1/devices").body["devices"] == .array([]))
        let made = try world.api("POST", "/api/v1/devices", #"{"platform":"android","ready":true,"count":3}"#)
        #expect(made.status == 201 && made.body["devices"]?.arrayValue?.count == 3)
    }

    @Test func aPushByTokenIsLoggedForTheDeviceItReachedOnly() throws {
        let world = World()
        let made = try world.api("POST", "/api/v1/devices", #"{"platform":"android","ready":true,"count":2}"#)
        let tokens = try #require(made.body["devices"]?.arrayValue).map { $0["token"]?.stringValue ?? "" }
        _ = try world.line(#"{"op":"state","device":"d1"}"#)  // d2 is current; d1 named last
        let sent = try world.line(
            #"{"op":"fcm","device":"d1","body":{"message":{"token":"\#(tokens[1])","data":{"k":"v"}}}}"#)
        #expect(sent["ok"] == true, "\(sent)")
        let entry = try world.lastEntry()
        #expect(entry["device"] == "d2" && entry["devices"] == nil, "\(entry)")
        let forD1 = try world.api("GET", "/api/v1/log?device=d1&source=line").body["entries"]?.arrayValue ?? []
        #expect(!forD1.contains { $0["request"]?["op"] == "fcm" })
        // The same for APNs: a token names the device, whichever is current.
        let ios = try world.api("POST", "/api/v1/devices", #"{"platform":"ios","ready":true}"#)
        let iosToken = try #require(ios.body["devices"]?.arrayValue?.first?["token"]?.stringValue)
        _ = try world.line(#"{"op":"state","device":"d1"}"#)
        let apns = try world.line(
            #"{"op":"apns","token":"\#(iosToken)","headers":{"apns-topic":"com.example.app"},"body":{"aps":{"alert":"x"}}}"#
        )
        #expect(apns["ok"] == true, "\(apns)")
        #expect(try world.lastEntry()["device"] == "d3")
    }

    /// A token's registry entry leads to the device it was issued to, with no lookup by
    /// id; an entry read back from a state document names no device and is found by its id.
    @Test func aTokenLeadsToTheDeviceItWasIssuedTo() throws {
        let world = World()
        let made = try world.api("POST", "/api/v1/devices", #"{"platform":"android","ready":true}"#)
        let token = try #require(made.body["devices"]?.arrayValue?.first?["token"]?.stringValue)
        let shell = world.session.world
        let device = try #require(shell.devicesByID["d1"])
        let entry = try #require(shell.registry.entry(token: token))
        #expect(entry.device === device && shell.device(for: entry) === device)
        let restored = TokenRegistry.Entry(
            deviceID: "d1", platform: .android, bundleID: entry.bundleID, environment: entry.environment,
            project: entry.project, team: entry.team, retiredAt: nil)
        #expect(restored.device == nil && shell.device(for: restored) === device)
        let sent = try world.line(#"{"op":"fcm","body":{"message":{"token":"\#(token)","data":{"k":"v"}}}}"#)
        #expect(sent["ok"] == true && sent["device"] == "d1", "\(sent)")
    }

    @Test func FCMAnswersAsFCMWithNoDeviceInTheWorld() throws {
        let world = World()
        let made = try world.api("POST", "/api/v1/devices", #"{"platform":"android","ready":true}"#)
        let token = try #require(made.body["devices"]?.arrayValue?.first?["token"]?.stringValue)
        #expect(try world.api("DELETE", "/api/v1/devices/d1").status == 204)
        let sent = try world.line(#"{"op":"fcm","body":{"message":{"token":"\#(token)","data":{"k":"v"}}}}"#)
        #expect(sent["ok"] == false && sent["error"]?["code"] == 404, "\(sent)")
        #expect(sent["error"]?["status"] == "NOT_FOUND")
        #expect("\(sent)".contains("UNREGISTERED"))
        let apns = try world.line(
            #"{"op":"apns","token":"\#(String(repeating: "ab", count: 32))","headers":{"apns-topic":"com.example.app"},"body":{"aps":{"alert":"x"}}}"#
        )
        #expect(apns["ok"] == false && apns["status"] == 400 && apns["reason"] == "BadDeviceToken", "\(apns)")
    }

    /// The sentence for an unknown device names the count and five ids, however many there
    /// are: at 10,000 devices it is as long as at 10.
    @Test func anUnknownDevicesSentenceStaysShortInALargeWorld() throws {
        let world = World()
        var lengths: [Int] = []
        for count in [10, 10_000] {
            let have = try world.api("GET", "/api/v1/world").body["devices"]?.integerValue ?? 0
            let made = try world.api("POST", "/api/v1/devices", #"{"platform":"ios","count":\#(count - Int(have))}"#)
            #expect(made.status == 201)
            let reply = try world.line(#"{"op":"state","device":"nope"}"#)
            let error = try #require(reply["error"]?.stringValue)
            #expect(error.hasPrefix("there is no device 'nope'; there are \(count) devices: d1, d2, d3, d4, d5, …"))
            lengths.append(error.utf8.count)
        }
        #expect(lengths[1] - lengths[0] <= 3, "\(lengths)")  // the count's digits, nothing more
    }

    /// A request the world cannot take gets its service's own 503, decided from its route
    /// alone on the door's thread (FrontDoor's `busy`).
    @Test func aBusyAnswerIsTheServicesOwn() throws {
        func request(_ host: String, _ path: String) -> HTTPRequest {
            HTTPRequest(
                headers: [(":method", "POST"), (":path", path), (":authority", host)], body: [], serverName: host,
                tls: true, http2: true)
        }
        let apns = Session.busyAnswer(request("api.push.apple.com", "/3/device/abc"))
        #expect(apns.status == 503 && String(decoding: apns.body, as: UTF8.self) == #"{"reason":"ServiceUnavailable"}"#)
        // Its own apns-id, a canonical UUID and a new one each time, as APNs gives.
        let ids = [apns, Session.busyAnswer(request("api.push.apple.com", "/3/device/abc"))].map { answer in
            answer.headers.first { $0.name == "apns-id" }?.value ?? ""
        }
        #expect(
            ids.allSatisfy { APNsRequest.isCanonicalUUID($0) && $0 == $0.uppercased() } && ids[0] != ids[1], "\(ids)")
        let fcm = Session.busyAnswer(request("fcm.googleapis.com", "/v1/projects/p/messages:send"))
        #expect(fcm.status == 503 && fcm.headers.contains { $0 == ("retry-after", "1") })
        #expect(try JSON.parse(fcm.body)["error"]?["status"] == "UNAVAILABLE")
        #expect(Session.busyAnswer(request("127.0.0.1", "/api/v1/world")).status == 503)
    }

    /// The front door's thread asks `handshakeFaults` on every TLS handshake instead of
    /// taking the world's lock: it must follow the rules as they come and go.
    @Test func theHandshakeFaultsFollowTheRules() throws {
        let world = World()
        let faults = world.session.handshakeFaults
        #expect(!faults.mayFail(serverName: "api.push.apple.com"))
        _ = try world.line(#"{"op":"chaos","rule":{"service":"fcm","then":{"answer":"UNAVAILABLE"}}}"#)
        #expect(!faults.mayFail(serverName: "fcm.googleapis.com"))
        _ = try world.line(#"{"op":"chaos","rule":{"service":"apns","count":1,"then":{"fault":"tls_fail"}}}"#)
        #expect(faults.mayFail(serverName: "API.push.apple.com") && !faults.mayFail(serverName: "fcm.googleapis.com"))
        _ = world.session.handshake(serverName: "api.push.apple.com")  // spends its one count
        #expect(!faults.mayFail(serverName: "api.push.apple.com"))
        _ = try world.line(#"{"op":"chaos","rule":{"service":"fcm","then":{"fault":"tls_fail"}}}"#)
        #expect(faults.mayFail(serverName: "fcm.googleapis.com"))
        _ = try world.line(#"{"op":"chaos","remove":"all"}"#)
        #expect(!faults.mayFail(serverName: "fcm.googleapis.com"))
    }

    /// Paging and deletion find a device by halving the fleet (ids are `d<n>` in order):
    /// every id is found where it is, a deleted one is not, and its neighbours page on.
    @Test func pagingAndDeletionFindDevicesByTheirNumber() throws {
        let world = World()
        #expect(try world.api("POST", "/api/v1/devices", #"{"platform":"android","count":1000}"#).status == 201)
        for id in ["d500", "d1", "d1000", "d2"] {
            #expect(try world.api("DELETE", "/api/v1/devices/\(id)").status == 204)
        }
        #expect(try world.api("DELETE", "/api/v1/devices/d500").status == 404)
        var after = "d3"
        var listed = ["d3"]
        while true {
            let page = try world.api("GET", "/api/v1/devices?after=\(after)&limit=97").body
            listed += (page["devices"]?.arrayValue ?? []).compactMap { $0["device"]?.stringValue }
            guard let next = page["next"]?.stringValue else { break }
            after = next
        }
        #expect(listed == (3...999).filter { $0 != 500 }.map { "d\($0)" })
        for gone in ["d500", "d1000", "d0", "x7", "d"] {
            #expect(try world.api("GET", "/api/v1/devices?after=\(gone)").status == 400, "\(gone)")
        }
    }

    /// A topic or condition send reaches the topics' subscribers through the world's
    /// index, kept as apps subscribe, leave, are uninstalled and removed; a condition
    /// under `!` still considers every device.
    @Test func topicSendsReachTheSubscribersTheIndexKeeps() throws {
        let world = World()
        #expect(
            try world.api("POST", "/api/v1/devices", #"{"platform":"android","ready":true,"count":2000}"#).status == 201
        )
        for (device, topic) in [("d1500", "news"), ("d5", "news"), ("d7", "sports"), ("d9", "news")] {
            #expect(try world.line(#"{"op":"fcm_topic","device":"\#(device)","topic":"\#(topic)"}"#)["ok"] == true)
        }
        _ = try world.line(#"{"op":"fcm_topic","device":"d9","topic":"news","subscribe":false}"#)
        func reached(_ message: String) throws -> [String] {
            let reply = try world.line(#"{"op":"fcm","body":{"message":{\#(message),"data":{"k":"v"}}}}"#)
            #expect(reply["ok"] == true, "\(reply)")
            return (reply["devices"]?.arrayValue ?? []).compactMap { $0["device"]?.stringValue }
        }
        #expect(try reached(#""topic":"news""#) == ["d5", "d1500"])
        #expect(try reached(#""condition":"'news' in topics || 'sports' in topics""#) == ["d5", "d7", "d1500"])
        #expect(try reached(#""condition":"!('news' in topics) && 'sports' in topics""#) == ["d7"])
        #expect(try reached(#""condition":"!('news' in topics)""#).count == 1998)
        _ = try world.line(#"{"op":"uninstall","device":"d5"}"#)
        #expect(try world.api("DELETE", "/api/v1/devices/d1500").status == 204)
        #expect(try reached(#""topic":"news""#) == [])
        #expect(try reached(#""condition":"'news' in topics || 'sports' in topics""#) == ["d7"])
    }

    /// A request to APNs' host whose path does not start `/3/device/` is answered, not a
    /// crash, even when ten bytes in falls inside a character (the Network fuzzer's find).
    @Test func anAPNsPathCutInsideACharacterIsAnsweredNotACrash() throws {
        let world = World()
        for path in ["/3/\u{FFFD}\u{FFFD}\u{FFFD}device/00ff", "/3/dévice/00ff", "/é"] {
            let exchange = world.session.handle(
                network: HTTPRequest(
                    headers: [(":method", "POST"), (":path", path), (":authority", "api.push.apple.com")], body: [],
                    serverName: "api.push.apple.com", tls: true, http2: true))
            #expect((400...499).contains(exchange.response.status), "\(path): \(exchange.response.status)")
        }
    }
}
