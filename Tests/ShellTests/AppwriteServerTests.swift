import CXHost
import Foundation
import HTTPMessage
import MQTTClient
import OrderedJSON
import ShellKit
import Testing

/// Appwrite's Messaging server (APW-9 … APW-15): the API as an Appwrite server SDK calls
/// it, sends that take each user's route, and a real mosquitto whose dynamic security
/// the world administers. The SDK itself drives it in Tests/Clients/appwrite_sdk_test.py.
@Suite(.serialized) struct AppwriteServerTests {
    final class World {
        let session = Session()
        let broker: MQTTBroker
        let enforced: Bool

        /// A broker (with dynamic security when `enforced`) and project `p1`, key `k1`.
        init(enforced: Bool = false) throws {
            self.enforced = enforced
            broker = try MQTTBroker(admin: enforced ? ("admin", "admin-secret") : nil)
            let admin = enforced ? #","admin":{"username":"admin","password":"admin-secret"}"# : ""
            let reply = try self.reply(
                #"{"op":"appwrite_project","project":"p1","key":"k1","endpoint":"\#(broker.endpoint)"\#(admin)}"#)
            #expect(reply["ok"] == true, "\(reply)")
        }

        func send(_ line: String) -> [String] { session.handle(line) }

        func reply(_ line: String) throws -> JSONObject {
            let last = try #require(send(line).last)
            return try #require(try JSON.parse(text: last).objectValue)
        }

        /// One API call as the SDK makes it; the status, the answer's JSON and the lines.
        @discardableResult
        func call(
            _ method: String, _ path: String, _ body: String = "", key: String? = "k1", project: String = "p1",
            host: String = "cloud.appwrite.io"
        ) throws -> (status: Int, body: JSON, lines: [String]) {
            var headers = [
                (":method", method), (":path", "/v1" + path), (":authority", host), ("x-appwrite-project", project),
            ]
            if let key { headers.append(("x-appwrite-key", key)) }
            if !body.isEmpty { headers.append(("content-type", "application/json")) }
            let exchange = session.handle(
                network: HTTPRequest(
                    headers: headers, body: Array(body.utf8), serverName: host, tls: true, http2: false))
            let json = exchange.response.body.isEmpty ? JSON.null : try JSON.parse(exchange.response.body)
            return (exchange.response.status, json, exchange.lines)
        }

        /// A running app on a new device, registered on Appwrite Push as `user`.
        func device(
            user: String = "u1", project: String = "p1", options: String = "", platform: String = "android"
        ) throws -> JSONObject {
            _ = send(#"{"op":"device","platform":"\#(platform)"}"#)
            _ = send(#"{"op":"launch"}"#)
            _ = send(#"{"op":"subscribe","key":"push","plugin":"push","stream":"events"}"#)
            return try register(user: user, project: project, options: options)
        }

        /// Registers the current device's app on Appwrite Push as `user` of `project`.
        func register(user: String = "u1", project: String = "p1", options: String = "") throws -> JSONObject {
            let input =
                #"{"channel":"appwrite","endpoint":"\#(broker.endpoint)","user":"\#(user)","project":"\#(project)"\#(options)}"#
            let line = JSONObject([
                ("op", "call"), ("plugin", "push"), ("method", "register"), ("input", .string(input)),
            ])
            return try reply(JSON.object(line).compactText)
        }

        /// A running app on a new device, registered on its OS channel (APNs, FCM); its token.
        func osDevice(platform: String) throws -> String {
            _ = send(#"{"op":"device","platform":"\#(platform)"}"#)
            _ = send(#"{"op":"launch"}"#)
            _ = send(#"{"op":"subscribe","key":"push","plugin":"push","stream":"events"}"#)
            let registered = try reply(#"{"op":"call","plugin":"push","method":"register"}"#)
            let output = try #require(registered["output"]?.stringValue)
            return try #require(try JSON.parse(text: output)["token"]?.stringValue)
        }

        /// Waits for `count` arrivals and handles them; their report lines.
        func arrivals(_ count: Int = 1) throws -> [JSONObject] {
            #expect(session.hub.waitForArrivals(count: count, timeout: 10))
            return try session.handleArrivals(limit: count).compactMap { try JSON.parse(text: $0).objectValue }
                .filter { $0["network"] == "mqtt" }
        }

        /// The session secret `POST /users/{id}/sessions` gives.
        func session(for user: String) throws -> String {
            let made = try call("POST", "/users/\(user)/sessions")
            #expect(made.status == 201)
            return try #require(made.body["secret"]?.stringValue)
        }
    }

    static func report(_ lines: [String]) throws -> JSONObject {
        let line = try #require(lines.last { $0.contains(#""network":"appwrite""#) })
        return try #require(try JSON.parse(text: line).objectValue)
    }

    @Test func APW9_keysHostsAndRoutes() throws {
        let world = try World()
        let wrong = try world.call("GET", "/users/u1", key: "nope")
        #expect(wrong.status == 401 && wrong.body["type"] == "user_unauthorized" && wrong.body["code"] == 401)
        #expect(wrong.body["version"]?.stringValue != nil && wrong.body["message"]?.stringValue != nil)
        #expect(try world.call("GET", "/users/u1", key: nil).body["type"] == "general_unauthorized_scope")
        #expect(try world.call("GET", "/users/u1", project: "p2").body["type"] == "project_not_found")
        let unknown = try world.call("GET", "/storage/buckets")
        #expect(unknown.status == 404 && unknown.body["type"] == "general_route_not_found")
        // A self-hosted endpoint: any host, by /v1/ and the project header.
        let made = try world.call("POST", "/users", #"{"userId":"u1","name":"Ada"}"#, host: "127.0.0.1")
        #expect(made.status == 201 && made.body["$id"] == "u1" && made.body["name"] == "Ada", "\(made)")
        #expect(made.body["$createdAt"]?.stringValue != nil && made.body["targets"] == .array([]))
        #expect(try world.call("POST", "/users", #"{"userId":"u1"}"#).status == 409)
        // Refusals are logged under source appwrite, and change nothing.
        #expect(try world.call("GET", "/users/u1").body["name"] == "Ada")
    }

    @Test func APW10_providersAndTheirLimits() throws {
        let world = try World()
        let made = try world.call(
            "POST", "/messaging/providers/appwrite", #"{"providerId":"push","name":"Push","qos":1,"expiry":86400}"#)
        #expect(made.status == 201 && made.body["provider"] == "appwrite" && made.body["enabled"] == true, "\(made)")
        #expect(made.body["options"]?["expiry"] == 86400)
        #expect(
            try world.call("POST", "/messaging/providers/appwrite", #"{"providerId":"push","name":"x"}"#).status == 409)
        for body in [#"{"expiry":604801}"#, #"{"expiry":-1}"#, #"{"qos":2}"#] {
            let refused = try world.call("PATCH", "/messaging/providers/appwrite/push", body)
            #expect(refused.status == 400 && refused.body["type"] == "general_argument_invalid", "\(body) \(refused)")
        }
        let updated = try world.call("PATCH", "/messaging/providers/appwrite/push", #"{"expiry":0,"qos":null}"#)
        #expect(
            updated.status == 200 && updated.body["options"]?["expiry"] == 0 && updated.body["options"]?["qos"] == .null
        )
        #expect(try world.call("PATCH", "/messaging/providers/fcm/push", #"{}"#).status == 404)
    }

    @Test func APW12_messageIDsLimitsAndOneSendToAUser() throws {
        let world = try World()
        #expect(try world.device()["ok"] == true)
        for (body, words) in [
            (#"{"messageId":"\#(String(repeating: "a", count: 37))","users":["u1"]}"#, "36 chars"),
            (#"{"messageId":"_m","users":["u1"]}"#, "special char"),
            (#"{"messageId":"m!","users":["u1"]}"#, "Valid chars"),
            (#"{"messageId":"m1","users":["u1"],"title":"\#(String(repeating: "t", count: 257))"}"#, "256"),
            (#"{"messageId":"m1","users":["u1"],"body":"\#(String(repeating: "b", count: 64_231))"}"#, "64230"),
            (#"{"messageId":"m1"}"#, "no recipients"),
            (#"{"messageId":"m1","topics":["nope"]}"#, "Topic with the requested ID"),
        ] {
            let refused = try world.call("POST", "/messaging/messages/push", body)
            #expect(refused.status == 400 || refused.status == 404, "\(refused.body)")
            #expect(refused.body["message"]?.stringValue?.contains(words) == true, "\(refused.body)")
        }
        let sent = try world.call(
            "POST", "/messaging/messages/push",
            #"{"messageId":"m1","title":"Shipped","body":"Track it","users":["u1"],"data":{"orderId":"o1"}}"#)
        #expect(sent.status == 201 && sent.body["$id"] == "m1" && sent.body["status"] == "sent", "\(sent.body)")
        let report = try Self.report(sent.lines)
        #expect(report["messageId"] == "m1" && report["status"] == 201)
        #expect(report["routes"] == .array([.object(JSONObject([("user", "u1"), ("route", .array(["appwrite"]))]))]))
        #expect(report["devices"]?.arrayValue?.first?["device"] == "d1", "\(report)")
        let arrived = try #require(try world.arrivals().first)
        #expect(arrived["messageId"] == "m1" && arrived["topic"] == "users/u1", "\(arrived)")
        let taken = try world.call("POST", "/messaging/messages/push", #"{"messageId":"m1","users":["u1"]}"#)
        #expect(taken.status == 409 && taken.body["type"] == "message_already_exists")
        let read = try world.call("GET", "/messaging/messages/m1")
        #expect(
            read.body["status"] == "sent" && read.body["deliveredTotal"] == 1 && read.body["data"]?["orderId"] == "o1")
    }

    @Test func APW12_aUserWithAnFCMTargetTakesThatRoute() throws {
        let world = try World()
        _ = try world.call("POST", "/messaging/providers/appwrite", #"{"providerId":"push","name":"Push"}"#)
        _ = try world.call("POST", "/messaging/providers/fcm", #"{"providerId":"fcm","name":"FCM"}"#)
        // d1 listens over Appwrite Push; d2 is the user's Android phone with an FCM token.
        #expect(try world.device()["ok"] == true)
        let token = try world.osDevice(platform: "android")
        _ = try world.call("POST", "/users", #"{"userId":"u1"}"#)
        let target = try world.call(
            "POST", "/users/u1/targets",
            #"{"targetId":"t-fcm","providerType":"push","identifier":"\#(token)","providerId":"fcm"}"#)
        #expect(target.status == 201 && target.body["userId"] == "u1" && target.body["providerId"] == "fcm")
        let first = try world.call(
            "POST", "/messaging/messages/push", #"{"messageId":"m1","title":"t","users":["u1"]}"#)
        let report = try Self.report(first.lines)
        #expect(report["routes"]?.arrayValue?.first?["route"] == .array(["fcm"]), "\(report)")
        #expect(
            report["devices"]?.arrayValue?.first?["device"] == "d2"
                && first.lines.contains { $0.contains(#""delivery""#) })
        // Nothing was published to users/u1: the next arrival is m2's, sent once an
        // Appwrite push target keeps the user on Appwrite Push as well.
        _ = try world.call(
            "POST", "/users/u1/targets",
            #"{"targetId":"t-aw","providerType":"push","identifier":"x","providerId":"push"}"#)
        let second = try world.call(
            "POST", "/messaging/messages/push", #"{"messageId":"m2","title":"t","users":["u1"]}"#)
        #expect(try Self.report(second.lines)["routes"]?.arrayValue?.first?["route"] == .array(["appwrite", "fcm"]))
        #expect(try world.arrivals().first?["messageId"] == "m2")
        #expect(try world.call("GET", "/messaging/messages/m2").body["deliveredTotal"] == 2)
    }

    @Test func APW13_theBrokerEnforcesCredentialsTopicsAndReceiveOnly() throws {
        let world = try World(enforced: true)
        _ = try world.call("POST", "/users", #"{"userId":"u1"}"#)
        let noCredential = try world.device()
        #expect(
            noCredential["ok"] == false && noCredential["output"]?.stringValue?.contains("not authorised") == true,
            "\(noCredential)")
        let secret = try world.session(for: "u1")
        #expect(try world.register(options: #","credential":"\#(secret)""#)["ok"] == true)
        // A topic the user's targets do not subscribe to is refused by the broker.
        _ = try world.call("POST", "/messaging/topics", #"{"topicId":"news","name":"News"}"#)
        let refused = try world.register(options: #","credential":"\#(secret)","topics":["users/u1","news"]"#)
        #expect(refused["output"]?.stringValue?.contains("refused the subscription to 'news'") == true, "\(refused)")
        _ = try world.call("POST", "/users/u1/targets", #"{"targetId":"t1","providerType":"push","identifier":"i1"}"#)
        #expect(
            try world.call("POST", "/messaging/topics/news/subscribers", #"{"subscriberId":"s1","targetId":"t1"}"#)
                .status == 201)
        #expect(try world.register(options: #","credential":"\#(secret)","topics":["users/u1","news"]"#)["ok"] == true)
        // Clients only receive: the user's own credential cannot publish to its topic.
        let rogue = try MQTTConnection(clientID: "rogue", cleanSession: true, login: ("p1/u1", secret))
        try rogue.connect(host: "127.0.0.1", port: world.broker.port)
        try? rogue.publish(topic: "users/u1", payload: Array(#"{"messageId":"forged"}"#.utf8), qos: 1)
        rogue.close()
        _ = try world.call("POST", "/messaging/messages/push", #"{"messageId":"m1","title":"t","topics":["news"]}"#)
        #expect(try world.arrivals().first?["messageId"] == "m1")
        // Dropping the subscriber drops the device's right to the topic: the broker no
        // longer delivers what is still published there for another user (u2).
        _ = try world.call("POST", "/users", #"{"userId":"u2"}"#)
        _ = try world.call("POST", "/users/u2/targets", #"{"targetId":"t2","providerType":"push","identifier":"i2"}"#)
        _ = try world.call("POST", "/messaging/topics/news/subscribers", #"{"subscriberId":"s2","targetId":"t2"}"#)
        #expect(try world.call("DELETE", "/messaging/topics/news/subscribers/s1").status == 204)
        _ = try world.call("POST", "/messaging/messages/push", #"{"messageId":"m2","title":"t","topics":["news"]}"#)
        _ = try world.call("POST", "/messaging/messages/push", #"{"messageId":"m3","title":"t","users":["u1"]}"#)
        #expect(try world.arrivals().first?["messageId"] == "m3")
    }

    /// Broker accounts no user id can take (BrokerName): a user called `admin`, one called
    /// after the world's old publisher, and one id in two projects on one broker each get
    /// an account of their own, and the admin's and the publisher's go on working.
    @Test func APW13_noUserIdTakesAnotherAccount() throws {
        let world = try World(enforced: true)
        let admin = #"{"username":"admin","password":"admin-secret"}"#
        let p2 = try world.reply(
            #"{"op":"appwrite_project","project":"p2","key":"k2","endpoint":"\#(world.broker.endpoint)","admin":\#(admin)}"#
        )
        #expect(p2["ok"] == true, "\(p2)")
        for user in ["admin", "appwrite-server", "cxshell", "u1"] {
            #expect(try world.call("POST", "/users", #"{"userId":"\#(user)"}"#).status == 201)
            _ = try world.session(for: user)
        }
        #expect(try world.call("POST", "/users", #"{"userId":"u1"}"#, key: "k2", project: "p2").status == 201)
        let made = try world.call("POST", "/users/u1/sessions", key: "k2", project: "p2")
        let p2Secret = try #require(made.body["secret"]?.stringValue)
        // The admin's password is still the admin's: it still administers the broker.
        #expect(throws: Never.self) {
            _ = try DynamicSecurity(host: "127.0.0.1", port: world.broker.port, admin: ("admin", "admin-secret"))
        }
        // u1 of p1 and u1 of p2 are two accounts: each credential opens its own only.
        let p1Secret = try world.session(for: "u1")
        #expect(try world.device(options: #","credential":"\#(p1Secret)""#)["ok"] == true)
        #expect(try world.device(project: "p2", options: #","credential":"\#(p2Secret)""#)["ok"] == true)
        let crossed = try MQTTConnection(clientID: "crossed", cleanSession: true, login: ("p2/u1", p1Secret))
        #expect(throws: MQTTFailure.self) { try crossed.connect(host: "127.0.0.1", port: world.broker.port) }
        crossed.close()
        // The publisher still publishes: p1's push reaches p1's u1.
        let sent = try world.call("POST", "/messaging/messages/push", #"{"messageId":"m1","title":"t","users":["u1"]}"#)
        #expect(sent.body["status"] == "sent", "\(sent.body)")
        #expect(try world.arrivals().contains { $0["messageId"] == "m1" })
        // Names that would reach into the namespaces are refused, and change nothing.
        for (line, words) in [
            (
                #""project":"p3","key":"k","endpoint":"\#(world.broker.endpoint)","admin":{"username":"p1/u1","password":"x"}"#,
                "hold no '/'"
            ),
            (#""project":"a/b","key":"k","endpoint":"\#(world.broker.endpoint)""#, "must be an Appwrite project id"),
        ] {
            let reply = try world.reply(#"{"op":"appwrite_project",\#(line)}"#)
            #expect(reply["ok"] == false && reply["error"]?.stringValue?.contains(words) == true, "\(reply)")
        }
        #expect(try world.call("GET", "/users/u1", key: "k", project: "p3").body["type"] == "project_not_found")
    }

    @Test func APW13_anExpiredJWTMakesAReconnectFail() throws {
        let world = try World(enforced: true)
        let made = try world.call("POST", "/users/u1/jwts")
        #expect(made.status == 404)  // no such user yet
        _ = try world.call("POST", "/users", #"{"userId":"u1"}"#)
        let jwt = try #require(try world.call("POST", "/users/u1/jwts").body["jwt"]?.stringValue)
        #expect(try world.device(options: #","credential":"\#(jwt)""#)["ok"] == true)
        _ = world.send(#"{"op":"clock","advance_ms":960000}"#)
        _ = world.send(#"{"op":"network","online":false}"#)
        _ = world.send(#"{"op":"network","online":true}"#)
        var channel = JSON.null
        for _ in 0..<500 {
            channel = try #require(try world.reply(#"{"op":"state"}"#)["channels"]?.arrayValue?.first)
            if channel["error"] != nil { break }
            usleep(10_000)
        }
        #expect(channel["connected"] == false)
        #expect(channel["error"]?.stringValue?.contains("not authorised") == true, "\(channel)")
    }

    @Test func APW14_aKnownClientGetsTheFiveNewestMissedPerTopic() throws {
        let world = try World()
        _ = try world.call("POST", "/users", #"{"userId":"u1"}"#)
        _ = try world.call("POST", "/users/u1/targets", #"{"targetId":"t1","providerType":"push","identifier":"i1"}"#)
        _ = try world.call("POST", "/messaging/topics", #"{"topicId":"news","name":"News"}"#)
        _ = try world.call("POST", "/messaging/topics/news/subscribers", #"{"subscriberId":"s1","targetId":"t1"}"#)
        #expect(try world.device(options: #","topics":["users/u1","news"]"#)["ok"] == true)
        _ = world.send(#"{"op":"network","online":false}"#)
        for index in 1...7 {
            _ = try world.call(
                "POST", "/messaging/messages/push", #"{"messageId":"u\#(index)","title":"t","users":["u1"]}"#)
            _ = try world.call(
                "POST", "/messaging/messages/push", #"{"messageId":"n\#(index)","title":"t","topics":["news"]}"#)
        }
        _ = world.send(#"{"op":"network","online":true}"#)
        let reports = try world.arrivals(14)
        let handled = reports.filter { $0["effect"]?.stringValue?.contains("APW-14") == false }.compactMap {
            $0["messageId"]?.stringValue
        }
        #expect(handled == ["u3", "n3", "u4", "n4", "u5", "n5", "u6", "n6", "u7", "n7"], "\(reports)")
        #expect(reports.filter { $0["effect"]?.stringValue?.contains("the 5 newest") == true }.count == 4)
    }

    @Test func APW14_whatExpiredOnTheWorldsClockIsNotReplayed() throws {
        let world = try World()
        _ = try world.call("POST", "/messaging/providers/appwrite", #"{"providerId":"push","name":"Push","expiry":60}"#)
        #expect(try world.device()["ok"] == true)
        _ = world.send(#"{"op":"network","online":false}"#)
        _ = try world.call("POST", "/messaging/messages/push", #"{"messageId":"old","title":"t","users":["u1"]}"#)
        _ = world.send(#"{"op":"clock","advance_ms":61000}"#)
        _ = try world.call("POST", "/messaging/messages/push", #"{"messageId":"new","title":"t","users":["u1"]}"#)
        _ = world.send(#"{"op":"network","online":true}"#)
        let reports = try world.arrivals(2)
        #expect(reports.map { $0["messageId"] } == ["old", "new"])
        #expect(reports[0]["effect"]?.stringValue?.contains("expired after 60 s") == true, "\(reports)")
        #expect(reports[1]["effect"]?.stringValue?.hasPrefix("dropped") == false)
    }

    @Test func APW9_aBodyThatIsNotJSONOrHasWrongTypesIsRefusedByName() throws {
        let world = try World()
        let cases: [(String, String, String)] = [
            ("/users", "{nope", "not a JSON object"),
            ("/users", #"{"name":"x"}"#, "\"userId\" is not optional"),
            ("/messaging/topics", #"{"topicId":"t","name":"T","expiry":"soon"}"#, "`expiry`"),
            ("/messaging/messages/push", #"{"messageId":"m","users":"u1"}"#, "`users`"),
            ("/messaging/messages/push", #"{"messageId":"m","users":["u1"],"data":[1]}"#, "`data`"),
            (
                "/messaging/messages/push", #"{"messageId":"m","users":["u1"],"colour":"red"}"#,
                "\"colour\" is not expected"
            ),
        ]
        for (path, body, words) in cases {
            let refused = try world.call("POST", path, body)
            #expect(refused.status == 400, "\(path) \(body) \(refused.body)")
            #expect(refused.body["message"]?.stringValue?.contains(words) == true, "\(refused.body)")
        }
        // Nothing was made by any of them.
        #expect(try world.call("GET", "/messaging/messages/m").status == 404)
        #expect(try world.call("GET", "/messaging/topics/t").status == 404)
    }

    @Test func APW11_aDeviceThatSignedInIsAUserAndTopicsNeedTheirSubscribers() throws {
        let world = try World()
        #expect(try world.call("GET", "/users/u7").status == 404)
        #expect(try world.device(user: "u7")["ok"] == true)
        let user = try world.call("GET", "/users/u7")
        #expect(user.status == 200 && user.body["$id"] == "u7" && user.body["targets"] == .array([]), "\(user)")
        let target = try world.call(
            "POST", "/users/u7/targets", #"{"targetId":"t1","providerType":"push","identifier":"i1"}"#)
        #expect(target.status == 201 && target.body["providerId"] == .null)
        #expect(
            try world.call("POST", "/messaging/topics/news/subscribers", #"{"subscriberId":"s","targetId":"t1"}"#)
                .status == 404)
        _ = try world.call("POST", "/messaging/topics", #"{"topicId":"news","name":"News","qos":0}"#)
        let subscriber = try world.call(
            "POST", "/messaging/topics/news/subscribers", #"{"subscriberId":"s1","targetId":"t1"}"#)
        #expect(
            subscriber.status == 201 && subscriber.body["target"]?["$id"] == "t1" && subscriber.body["userId"] == "u7")
        #expect(try world.call("GET", "/messaging/topics/news").body["pushTotal"] == 1)
        #expect(
            try world.call("POST", "/messaging/topics/news/subscribers", #"{"subscriberId":"s1","targetId":"t1"}"#)
                .status == 409)
        // A topic message is published at the topic's QoS 0 to the subscribed device.
        #expect(try world.register(user: "u7", options: #","topics":["users/u7","news"]"#)["ok"] == true)
        let sent = try world.call(
            "POST", "/messaging/messages/push", #"{"messageId":"n1","title":"t","topics":["news"]}"#)
        #expect(
            try Self.report(sent.lines)["devices"]?.arrayValue?.first?["result"]?.stringValue?.contains("QoS 0") == true
        )
        let arrived = try #require(try world.arrivals().first)
        #expect(arrived["topic"] == "news" && arrived["qos"] == 0, "\(arrived)")
    }

    /// Docs/Install.md, "Kept across restarts": a project (its users, credentials and
    /// messages) and a device's Appwrite registration outlive a restart, on the world's own
    /// broker (`--broker`) too, which listens on another port after it: both follow it, and
    /// the app's registration connects again when its core subscribes (APW-5).
    @Test func aProjectAndARegistrationOutliveARestartAndFollowTheWorldsBroker() throws {
        func reply(_ session: Session, _ line: String) throws -> JSONObject {
            let last = try #require(session.handle(line).last)
            return try #require(try JSON.parse(text: last).objectValue)
        }
        func call(_ session: Session, _ method: String, _ path: String, _ body: String = "") -> (Int, JSON) {
            var headers = [
                (":method", method), (":path", "/v1" + path), (":authority", "cloud.appwrite.io"),
                ("x-appwrite-project", "p1"), ("x-appwrite-key", "k1"),
            ]
            if !body.isEmpty { headers.append(("content-type", "application/json")) }
            let exchange = session.handle(
                network: HTTPRequest(
                    headers: headers, body: Array(body.utf8), serverName: "cloud.appwrite.io", tls: true, http2: false))
            return (exchange.response.status, (try? JSON.parse(exchange.response.body)) ?? .null)
        }
        func connected(_ session: Session) throws -> Bool {
            // The connection is made in the background against a real broker: wait for it to say so.
            for _ in 0..<150 {
                if try reply(session, #"{"op":"state"}"#)["channels"]?.arrayValue?.first?["connected"] == true {
                    return true
                }
                usleep(100_000)
            }
            return false
        }
        let old = Session()
        let oldEndpoint = try old.startBroker()
        #expect(
            try reply(old, #"{"op":"appwrite_project","project":"p1","key":"k1","endpoint":"\#(oldEndpoint)"}"#)["ok"]
                == true)
        for line in [
            #"{"op":"device","platform":"android"}"#, #"{"op":"launch"}"#,
            #"{"op":"subscribe","key":"push","plugin":"push","stream":"events"}"#,
        ] {
            _ = try reply(old, line)
        }
        let input = JSON.string(#"{"channel":"appwrite","endpoint":"\#(oldEndpoint)","user":"u1","project":"p1"}"#)
        #expect(
            try reply(old, #"{"op":"call","plugin":"push","method":"register","input":\#(input.compactText)}"#)["ok"]
                == true)
        #expect(
            call(old, "POST", "/messaging/messages/push", #"{"messageId":"m1","title":"t","users":["u1"]}"#).0 == 201)
        #expect(old.hub.waitForArrivals(count: 1, timeout: 10))
        _ = old.handleArrivals(limit: 1)
        let saved = old.snapshot()
        old.closeOutside()  // the broker goes with the process, as at a restart

        let new = Session()
        let endpoint = try new.startBroker()
        defer { new.closeOutside() }
        #expect(endpoint != oldEndpoint)
        try new.restore(snapshot: saved)
        // The project, its user and its message are there.
        #expect(call(new, "GET", "/users/u1").0 == 200)
        #expect(call(new, "GET", "/messaging/messages/m1").1["$id"] == "m1")
        // The app runs again; its core subscribes and its registration connects to the broker as it is now.
        _ = try reply(new, #"{"op":"launch"}"#)
        _ = try reply(new, #"{"op":"subscribe","key":"push","plugin":"push","stream":"events"}"#)
        #expect(try connected(new))
        let registration = try reply(new, #"{"op":"state"}"#)["channels"]?.arrayValue?.first
        #expect(registration?["endpoint"]?.stringValue == endpoint, "\(registration?.compactText ?? "")")
        #expect(
            call(new, "POST", "/messaging/messages/push", #"{"messageId":"m2","title":"t","users":["u1"]}"#).0 == 201)
        #expect(new.hub.waitForArrivals(count: 1, timeout: 10))
        let arrived = new.handleArrivals(limit: 1).joined(separator: "\n")
        #expect(arrived.contains(#""messageId":"m2""#), "\(arrived)")
    }

    /// The same on a broker of its own that enforces credentials: read back, the project's
    /// part of the state is the same document, and the user's credential still opens the broker.
    @Test func aProjectOnAnEnforcingBrokerReadsBackTheSameAndItsUsersStillConnect() throws {
        let world = try World(enforced: true)
        _ = try world.call("POST", "/users", #"{"userId":"u1"}"#)
        let secret = try world.session(for: "u1")
        _ = try world.call("POST", "/messaging/topics", #"{"topicId":"news","name":"News","qos":0}"#)
        _ = try world.call("POST", "/users/u1/targets", #"{"targetId":"t1","providerType":"push","identifier":"i1"}"#)
        _ = try world.call("POST", "/messaging/topics/news/subscribers", #"{"subscriberId":"s1","targetId":"t1"}"#)
        #expect(try world.device(options: #","credential":"\#(secret)","topics":["users/u1","news"]"#)["ok"] == true)
        _ = try world.call("POST", "/messaging/messages/push", #"{"messageId":"m1","title":"t","topics":["news"]}"#)
        #expect(try world.arrivals().first?["messageId"] == "m1")
        // The old world's app ends, as at a restart: its connection would otherwise keep the client id.
        _ = world.send(#"{"op":"kill"}"#)
        let saved = world.session.snapshot()
        let new = Session()
        try new.restore(snapshot: saved)
        let before = try JSON.parse(saved)["appwrite"]
        let after = try JSON.parse(new.snapshot())["appwrite"]
        #expect(before == after, "\(before?.compactText ?? "")\n\(after?.compactText ?? "")")
        #expect(before?["appwrite_projects"]?.arrayValue?.first?["subscribers"]?.arrayValue?.count == 1)
        // The world's connection to the broker is made again as the project's publisher:
        // a topic push reaches the restored app once its core subscribes.
        _ = new.handle(#"{"op":"launch"}"#)
        _ = new.handle(#"{"op":"subscribe","key":"push","plugin":"push","stream":"events"}"#)
        var connected = false
        for _ in 0..<150 where !connected {
            let state = try JSON.parse(text: try #require(new.handle(#"{"op":"state"}"#).last))
            connected = state["channels"]?.arrayValue?.first?["connected"] == true
            if !connected { usleep(100_000) }
        }
        #expect(connected)
        let headers = [
            (":method", "POST"), (":path", "/v1/messaging/messages/push"), (":authority", "cloud.appwrite.io"),
            ("x-appwrite-project", "p1"), ("x-appwrite-key", "k1"), ("content-type", "application/json"),
        ]
        let sent = new.handle(
            network: HTTPRequest(
                headers: headers, body: Array(#"{"messageId":"m2","title":"t","topics":["news"]}"#.utf8),
                serverName: "cloud.appwrite.io", tls: true, http2: false))
        #expect(sent.response.status == 201, "\(sent.lines)")
        #expect(new.hub.waitForArrivals(count: 1, timeout: 10))
        #expect(new.handleArrivals(limit: 1).joined().contains(#""messageId":"m2""#))
        _ = world
    }

    @Test func APW12_anAPNsTargetIsSentThroughAPNs() throws {
        let world = try World()
        _ = try world.call(
            "POST", "/messaging/providers/apns", #"{"providerId":"apns","name":"APNs","bundleId":"com.example.app"}"#)
        let token = try world.osDevice(platform: "ios")
        _ = try world.call("POST", "/users", #"{"userId":"u1"}"#)
        _ = try world.call(
            "POST", "/users/u1/targets",
            #"{"targetId":"iphone","providerType":"push","identifier":"\#(token)","providerId":"apns"}"#)
        let sent = try world.call(
            "POST", "/messaging/messages/push",
            #"{"messageId":"a1","title":"Hi","body":"there","users":["u1"],"data":{"k":"v"}}"#)
        // The core's event: the data, then the alert's title and body (PAY-3).
        #expect(
            sent.lines.first?.contains(#"{\"k\":\"v\",\"title\":\"Hi\",\"body\":\"there\""#) == true, "\(sent.lines)")
        let report = try Self.report(sent.lines)
        #expect(report["routes"]?.arrayValue?.first?["route"] == .array(["apns"]))
        #expect(
            report["devices"]?.arrayValue?.first?["result"]?.stringValue?.hasPrefix("delivered through APNs") == true)
        // A token APNs does not know is a delivery error, and the message failed.
        _ = try world.call(
            "POST", "/users", #"{"userId":"u2"}"#)
        _ = try world.call(
            "POST", "/users/u2/targets",
            #"{"targetId":"gone","providerType":"push","identifier":"00ff","providerId":"apns"}"#)
        let failed = try world.call(
            "POST", "/messaging/messages/push", #"{"messageId":"a2","title":"Hi","users":["u2"]}"#)
        #expect(failed.body["status"] == "failed", "\(failed.body)")
        #expect(failed.body["deliveryErrors"]?.arrayValue?.first?.stringValue?.contains("refused by APNs") == true)
    }

    @Test func APW15_eachSendWritesOneReportLineLoggedAsAppwrite() throws {
        let world = try World()
        #expect(try world.device()["ok"] == true)
        let sent = try world.call(
            "POST", "/messaging/messages/push", #"{"messageId":"m1","title":"t","users":["u1","u9"]}"#)
        #expect(sent.lines.filter { $0.contains(#""network":"appwrite""#) }.count == 1)
        let report = try Self.report(sent.lines)
        #expect(report["status"] == 201 && report["messageId"] == "m1")
        #expect(
            report["devices"]?.arrayValue?.compactMap { $0["device"] } == ["d1", .null],
            "u1's device, and no device for u9: \(report)")
        let entry = try #require(world.session.log.entries(matching: .init(), limit: 1, newestFirst: true).first)
        #expect(entry.source == "appwrite" && entry.status == 201, "\(entry)")
    }

    @Test func APW9_aProjectThatCannotBeSetUpIsRefusedByName() throws {
        let world = try World(enforced: true)
        let stopped = try MQTTBroker()
        let unreachable = stopped.endpoint
        stopped.stop()
        let endpoint = world.broker.endpoint
        for (line, words) in [
            (#"{"op":"appwrite_project","key":"k","endpoint":"\#(endpoint)"}"#, #"needs a string field "project""#),
            (#"{"op":"appwrite_project","project":"p2","key":"k","endpoint":"http://x"}"#, "mqtt://HOST:PORT"),
            (#"{"op":"appwrite_project","project":"p2","key":"k","endpoint":"\#(unreachable)"}"#, "cannot be reached"),
            (
                #"{"op":"appwrite_project","project":"p2","key":"k","endpoint":"\#(endpoint)","admin":{"username":"admin","password":"wrong"}}"#,
                "not authorised"
            ),
            (
                #"{"op":"appwrite_project","project":"p2","key":"k","endpoint":"\#(endpoint)","admin":"admin"}"#,
                #""admin" must be"#
            ),
        ] {
            let reply = try world.reply(line)
            #expect(reply["ok"] == false && reply["error"]?.stringValue?.contains(words) == true, "\(reply)")
        }
        // None of them made the project; p1 still answers, and a bad admin given for p1
        // leaves it as it was: its devices still receive what it sends.
        #expect(try world.call("GET", "/users/u1", project: "p2").body["type"] == "project_not_found")
        #expect(try world.call("GET", "/users/u1").body["type"] == "user_not_found")
        let again = try world.reply(
            #"{"op":"appwrite_project","project":"p1","key":"k1","endpoint":"\#(endpoint)","admin":{"username":"admin","password":"wrong"}}"#
        )
        #expect(again["ok"] == false)
        _ = try world.call("POST", "/users", #"{"userId":"u1"}"#)
        let secret = try world.session(for: "u1")
        #expect(try world.device(options: #","credential":"\#(secret)""#)["ok"] == true)
        let sent = try world.call("POST", "/messaging/messages/push", #"{"messageId":"m1","title":"t","users":["u1"]}"#)
        #expect(sent.body["status"] == "sent", "\(sent.body)")
        #expect(try world.arrivals().first?["messageId"] == "m1")
    }
}
