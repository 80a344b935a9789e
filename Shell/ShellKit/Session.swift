import CXHost
import Foundation
import HTTPMessage
import MQTTClient
import OrderedJSON
import SimulatedDevice

/// One world of simulated devices with its doors (Docs/Architecture.md): the line
/// protocol (`../shared/spec/shell-protocol.md`), the front door's services and the
/// inspector (front-door.md, inspector.md), and the channels' arrivals. Every door
/// asks the same `World`, and every service keeps its own state beside its rules.
///
/// One request at a time: `cxshell serve` hands them over under one lock. A request is
/// handled completely, and the app hosts it touched are idle, before its answer.
public final class Session {
    /// The longest request line accepted.
    public static let maxLineBytes = LineProtocol.maxLineBytes
    /// The shell's version, as the inspector's world summary shows it.
    public static let version = "0.19.0"

    let world: World
    let lines: LineProtocol
    let network: NetworkDoor
    let arrivals: MQTTArrivals
    let appwrite: AppwriteService

    /// `clock` gives milliseconds since 1970 (every time-based rule reads it); `logMax`
    /// is how many log entries are kept.
    public init(
        clock: @escaping () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
        logMax: Int = RequestLog.defaultMax
    ) {
        let world = World(clock: clock, logMax: logMax)
        let apns = APNsService(world: world)
        let oauth = OAuthService(world: world)
        let fcm = FCMService(world: world, oauth: oauth)
        let appwrite = AppwriteService(world: world, apns: apns, fcm: fcm)
        let lines = LineProtocol(world: world, apns: apns, fcm: fcm, oauth: oauth, appwrite: appwrite)
        let pubnub = PubNubService(world: world, apns: apns, fcm: fcm)
        let webhooks = WebhookService(world: world)
        let services: [any WorldService] = [apns, fcm, oauth, appwrite, pubnub, webhooks]
        world.services = services.map { WeakService(service: $0) }
        self.world = world
        self.lines = lines
        self.arrivals = MQTTArrivals(world: world, appwrite: appwrite)
        self.appwrite = appwrite
        self.network = NetworkDoor(
            world: world, apns: apns, fcm: fcm, oauth: oauth,
            pubnub: pubnub, webhooks: webhooks,
            appwrite: appwrite, inspector: Inspector(world: world, lines: lines, apns: apns, oauth: oauth))
    }

    /// Handles one request line; returns the lines to write, deliveries first. A line
    /// of JSON white space only is not a request: it gets no line at all.
    public func handle(line: [UInt8], source: String = "line") -> [String] {
        guard let (reply, deliveries) = lines.run(line: line, source: source) else { return [] }
        return deliveries + [reply.compactText]
    }

    /// Handles one request line as `handle(line:source:)` does, appending the lines it
    /// writes to `output`, each ended by a newline: the reply goes in as bytes, with no
    /// `String` and no array made of the lines (`serve` writes a line's lines at once).
    public func handle(line: [UInt8], source: String = "line", writingLinesTo output: inout ByteOutput) {
        guard let (reply, deliveries) = lines.run(line: line, source: source) else { return }
        Self.appendLines(deliveries, to: &output)
        reply.write(to: &output)
        output.append(0x0A)
    }

    /// Handles one request line given as any bytes; see `handle(line:)`. The line
    /// protocol itself reads an array: a generic path through it would reach every
    /// byte through the collection's witnesses, and cost more than this one copy.
    public func handle(line: some Collection<UInt8>) -> [String] { handle(line: Array(line)) }

    /// Handles one request given as text.
    public func handle(_ text: String) -> [String] { handle(line: Array(text.utf8)) }

    /// The inspector's API as OpenAPI 3.1 (`GET /api/v1/openapi.json`, Docs/openapi.json).
    public static var openAPIDocument: String { InspectorOpenAPI.json }

    /// Appwrite projects with no connection to their broker (one read back from a state
    /// file whose broker could not be reached), and where that broker is: their pushes over
    /// Appwrite Push fail until they are registered again.
    public var appwriteProjectsWithoutBroker: [(project: String, endpoint: String)] {
        appwrite.projects.values.filter { appwrite.brokers[$0.id] == nil }.map { ($0.id, $0.endpoint) }
            .sorted { $0.project < $1.project }
    }

    /// The world as a state document (WorldSnapshot), as `GET /api/v1/snapshot` answers.
    public func snapshot() -> [UInt8] { WorldSnapshot.document(of: world).compactBytes }

    /// Replaces the world with a state document's; a sentence when the document is
    /// damaged or from a newer cxshell, and then nothing changed.
    public func restore(snapshot bytes: [UInt8]) throws(SnapshotRefusal) {
        let value: JSON
        do {
            value = try JSON.parse(bytes)
        } catch {
            throw SnapshotRefusal(description: "it is not JSON: \(error)")
        }
        do {
            _ = try WorldSnapshot.restore(value, into: world)
        } catch {
            throw SnapshotRefusal(description: error.description)
        }
    }

    /// Why a state document was not read.
    public struct SnapshotRefusal: Error, CustomStringConvertible {
        public let description: String
    }

    /// The services behind the front door, chosen by host, then by path, and the
    /// inspector; the same validators as the line protocol's.
    public func handle(network request: consuming HTTPRequest) -> NetworkExchange {
        var output = ByteOutput()
        let response = network.handle(request, writingLinesTo: &output)
        return NetworkExchange(output: output.bytes, response: response)
    }

    /// The same, its lines appended to `output` as bytes, each ended by a newline: what
    /// a server writes out, with no `String` made of them.
    public func handle(
        network request: consuming HTTPRequest, writingLinesTo output: inout ByteOutput
    ) -> HTTPResponse {
        network.handle(request, writingLinesTo: &output)
    }

    /// Appends each line and a newline to `output`, as standard output carries them.
    public static func appendLines(_ lines: [String], to output: inout ByteOutput) {
        for line in lines {
            output.append(utf8Of: line)
            output.append(0x0A)
        }
    }

    /// The services a `tls_fail` rule may fail a handshake for, readable from any thread.
    public var handshakeFaults: HandshakeFaults { world.chaos.handshakeFaults }

    /// The 503 a request gets when the world cannot take it, as its service answers it;
    /// touches nothing (the front door's thread asks it).
    public static func busyAnswer(_ request: HTTPRequest) -> HTTPResponse { NetworkDoor.busyAnswer(request) }

    /// Whether a TLS handshake for `serverName` may go on (a chaos rule's `tls_fail` says
    /// no), and the report line of one refused.
    public func handshake(serverName: String) -> (allowed: Bool, lines: [String]) {
        network.handshake(serverName: serverName)
    }

    /// Handles the channel messages that arrived on their own time (at most `limit`),
    /// oldest first: each writes its deliveries, then one report line (channels.md).
    public func handleArrivals(limit: Int = .max) -> [String] { arrivals.handle(limit: limit) }

    /// The plugins every app host has: names a loaded library may not register.
    public static var builtInPlugins: [PluginDescriptor] { SimulatedDevice.builtInPlugins }

    /// Registers more plugins on every app host the world makes from now on (the
    /// libraries `cxshell --plugin` loaded).
    public var plugins: ExtraPlugins {
        get { world.plugins }
        set { world.plugins = newValue }
    }

    /// Starts a real `mosquitto` of the world's own on a free loopback port, the broker a
    /// chaos rule's `broker_down` stops; its endpoint (`mqtt://127.0.0.1:PORT`), for the
    /// apps' Appwrite registrations.
    public func startBroker() throws -> String {
        let broker = try MQTTBroker()
        world.broker = broker
        return broker.endpoint
    }

    /// Stops what the world started outside its process (its broker) and removes its
    /// files; safe from any thread, and again. `cxshell serve` calls it before it exits.
    public var closeOutside: @Sendable () -> Void {
        let broker = world.broker
        return { broker?.close() }
    }

    /// The hosts an HTTPS proxy's CONNECT may open a tunnel to: the services' own.
    public static func isServiceHost(_ host: String) -> Bool { NetworkDoor.Service(host: host) != nil }

    /// What the world's channels share: MQTT arrivals, the front door's address.
    public var hub: ChannelHub { world.hub }
    /// The current device's push token, if it has one.
    public var deviceToken: String? { world.current?.token }
    /// Every request from every door, with its deliveries (inspector.md, "The log").
    public var log: RequestLog { world.log }
    /// Whether the log shows request secrets whole (`--log-secrets`) rather than
    /// redacted; entries keep the setting they were logged under.
    public var logShowsSecrets: Bool {
        get { world.log.showsSecrets }
        set { world.log.showsSecrets = newValue }
    }

    /// Who may reach the inspector on the front door's port; nil: it is off.
    public var inspector: InspectorSettings? {
        get { network.inspectorSettings }
        set { network.inspectorSettings = newValue }
    }
    /// The test CA's certificate (PEM) clients trust, when the front door listens.
    public var caPath: String? {
        get { world.caPath }
        set { world.caPath = newValue }
    }
    /// How many connections the front door has open (0 without one).
    public var connectionCount: @Sendable () -> Int {
        get { world.connectionCount }
        set { world.connectionCount = newValue }
    }
}
