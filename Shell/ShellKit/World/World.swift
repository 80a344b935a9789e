import CXHost
import Foundation
import MQTTClient
import OrderedJSON
import PushPlugin
import PushServices
import SimulatedDevice

/// The world every door asks (Docs/Architecture.md): its devices and the registry of
/// the tokens they were issued, what the app cores received, the clock, and the log of
/// every request from every door. It knows no door and no service: each door begins a
/// request here, services touch the devices they reach, and the door finishes it here,
/// so the log, the metrics and the waiting for hosts happen in one place.
///
/// Not thread-safe: its owner (`cxshell serve`) hands it one request at a time.
final class World {
    /// Every token the world's devices were issued: how a push finds its device.
    let registry = TokenRegistry()
    /// What the world's channels share: MQTT arrivals, the front door's address.
    let hub = ChannelHub()
    /// The app cores the shell plays: what each device's host delivered.
    let endpoint = CoreEndpoint()
    private(set) var devices: [Device] = []
    private(set) var devicesByID: [String: Device] = [:]
    /// The device a request without `"device"` means: the last one made.
    private(set) var current: Device?
    /// The number in the last device id given (`d7`): ids are never reused.
    private var lastDeviceNumber = 0
    /// Seeds each new device's token generator: one system draw per world, not per device.
    private var deviceSeeds = IDGenerator()
    /// Real time (milliseconds since 1970), before what `clock` ops added.
    private let realClock: () -> Int64
    /// What `{"op":"clock","advance_ms":n}` added, in all.
    private(set) var advancedMilliseconds: Int64 = 0
    /// The last reading: the world's clock never runs backwards, whatever real time does.
    private var lastReading = Int64.min
    /// When the world began (monotonic milliseconds), for the inspector's uptime.
    let startedAt = World.monotonicMilliseconds()
    /// Every request from every door, with its deliveries (inspector.md, "The log").
    var log: RequestLog
    /// Long polls and event streams waiting on the log.
    var watchers = LogWatchers()
    /// Durations and deliveries for `/metrics`. Counted once a request, by a method that
    /// calls nothing: not checked at run time (see `touched`).
    @exclusivity(unchecked) var metrics = RequestMetrics()
    /// The test CA's certificate (PEM) clients trust, when the front door listens.
    var caPath: String?
    /// How many connections the front door has open (0 without one).
    var connectionCount: @Sendable () -> Int = { 0 }

    /// The services, each clearing its own state when the world is reset (WorldReset);
    /// held weakly, since each holds the world.
    var services: [WeakService] = []
    /// Faults on demand (chaos.md, "Rules"), met by the front door's requests.
    var chaos = ChaosRules()
    /// The loaded libraries' plugins (`cxshell --plugin`), registered on every app host.
    var plugins: ExtraPlugins = { _ in {} }
    /// The world's own MQTT broker (`cxshell serve --broker`, a scenario's `broker`), the
    /// one a `broker_down` rule stops.
    var broker: MQTTBroker?
    // A request's own bookkeeping, asked several times a request: each dynamic
    // exclusivity check was ~95 instructions, ~0.6k an APNs push in all. It is not
    // checked at run time (SE-0176's `@exclusivity(unchecked)`): these are written only
    // here, by methods that call nothing while they hold one (an append, a pop, a
    // store), and read by loops over a copy. The world's other state keeps its checks
    // (the log's append runs its caller's closure; the watchers answer waiting clients).

    /// The devices the request being handled touched: their hosts are waited for
    /// before its answer, and the log names them.
    @exclusivity(unchecked) private(set) var touched: [Device] = []
    /// The hosts `touch` holds deliveries on until `settle` (PluginHost.holdDeliveries).
    @exclusivity(unchecked) private var held: [PluginHost] = []
    /// When the request being handled began (monotonic nanoseconds).
    @exclusivity(unchecked) private var requestStarted: UInt64 = 0

    init(clock: @escaping () -> Int64, logMax: Int) {
        self.realClock = clock
        self.log = RequestLog(max: logMax)
    }

    // MARK: One request

    /// Starts a request: nothing touched yet, its duration counted from now.
    func begin() {
        releaseHeld()
        Self.empty(&touched)
        requestStarted = Self.monotonicNanoseconds()
    }

    /// Notes that the request reached `device`: its host is waited for before the answer,
    /// and until then its deliveries wait for `settle` to make them on this thread.
    func touch(_ device: Device) {
        touched.append(device)
        if let host = device.holdDeliveries() { held.append(host) }
    }

    /// Starts over the devices touched, within one request that reaches several devices
    /// one after the other (a PubNub publish).
    func forgetTouched() { Self.empty(&touched) }

    /// Empties a request's short list, keeping its room: `removeAll(keepingCapacity:)`
    /// goes through `replaceSubrange`, ~200 instructions for the one device a push
    /// touches, where popping it is a few.
    private static func empty<Element>(_ list: inout [Element]) {
        while list.popLast() != nil {}
    }

    /// Waits until every host the request touched is idle; a sentence when it cannot.
    func settle() -> String? {
        defer { releaseHeld() }
        do {
            for device in touched { try device.waitUntilIdle() }
            return nil
        } catch {
            // Only a world driven from its own host's thread gets here.
            return "\(error)"
        }
    }

    /// Ends the holds `touch` took; whatever a host still has queued goes to its
    /// delivery thread.
    private func releaseHeld() {
        guard !held.isEmpty else { return }
        for host in held { host.releaseDeliveries() }
        Self.empty(&held)
    }

    /// The delivery lines the app cores wrote since they were last taken.
    func takeDeliveries() -> [String] { endpoint.takeLines() }

    /// The ids of the devices the request touched, each once, in order.
    var touchedIDs: [String] {
        var ids: [String] = []
        for device in touched where !ids.contains(device.id) { ids.append(device.id) }
        return ids
    }

    /// Ends a request from `source` (the log's name for its door): counts it, appends its
    /// log entry, and tells whoever waits on the log.
    func finish(source: String, status: Int, deliveries: [String], _ fill: (inout RequestLog.Record) -> Void) {
        let nanoseconds = Self.monotonicNanoseconds() &- requestStarted
        metrics.observe(source: source, seconds: Double(nanoseconds) / 1e9, deliveries: deliveries)
        guard !watchers.isEmpty else {
            log.append(source: source, status: status, at: clock()) { record in
                fill(&record)
                record.microseconds = Int64(nanoseconds / 1000)
            }
            return
        }
        // The watchers render the entry at once: handed over as it was filled, unpacked.
        let kept = log.appendUnpacked(source: source, status: status, at: clock()) { record in
            fill(&record)
            record.microseconds = Int64(nanoseconds / 1000)
        }
        // The entry is copied out of the log once, and moved from there: bound to a name
        // first (`if let`), it was copied again to be passed on. The polls read the log
        // through a closure: the log passed as a value was copied for the call (~160
        // instructions a push), the world being a class.
        if kept {
            watchers.appended(log.newestEntry()) { filter, after, limit in
                self.log.entries(matching: filter, after: after, limit: limit)
            }
        }
    }

    // MARK: Chaos

    /// Adds a chaos rule (the `chaos` op, `POST /api/v1/chaos`): the rule as listed, or
    /// why not. A `broker_down` rule acts at once and is not kept: the world's broker
    /// stops (its sessions and queues saved) and starts again `for_ms` later, on a timer.
    func addChaosRule(_ object: JSONObject) throws(ChaosRules.Refusal) -> JSONObject {
        if object["service"] == "mqtt", broker == nil {
            throw ChaosRules.Refusal(
                message: "the world has no broker of its own to stop: start cxshell serve with --broker")
        }
        var added = try chaos.add(object)
        guard case .brokerDown(let milliseconds)? = chaos.rules.last?.then, let broker,
            let id = added["id"]?.stringValue
        else { return added }
        _ = chaos.remove(id)
        broker.stop()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) {
            try? broker.start()
        }
        added["effect"] = .string("the broker stopped; it starts again in \(milliseconds) ms")
        return added
    }

    /// Removes a chaos rule by id (`all`: every one); false when there is none.
    func removeChaosRule(_ id: String) -> Bool { chaos.remove(id) }

    // MARK: Devices

    /// Makes a device, powered on with the app installed, and makes it the current one.
    func makeDevice(platform: PushPlatform, bundle: String, options: DeviceOptions) -> Device {
        lastDeviceNumber += 1
        let id = "d\(lastDeviceNumber)"
        let device = Device(
            id: id, platform: platform, bundleID: bundle, options: options,
            ids: IDGenerator(seed: deviceSeeds.next()), registry: registry, hub: hub,
            plugins: plugins, core: endpoint.receiver(for: id))
        devices.append(device)
        devicesByID[id] = device
        current = device
        return device
    }

    /// The number in the last device id given.
    var lastDevice: Int { lastDeviceNumber }

    /// Puts back a device a state document kept (its tokens are in the registry already),
    /// with its topics indexed; it becomes the current one.
    func adopt(_ id: String, platform: PushPlatform, options: DeviceOptions, saved: Device.Saved) {
        let device = Device(
            id: id, platform: platform, options: options, saved: saved, ids: IDGenerator(seed: deviceSeeds.next()),
            registry: registry, hub: hub, plugins: plugins, core: endpoint.receiver(for: id))
        let at =
            devices.firstIndex { (Self.deviceNumber($0.id) ?? 0) > (Self.deviceNumber(id) ?? 0) } ?? devices.endIndex
        devices.insert(device, at: at)
        devicesByID[id] = device
        for topic in saved.topics { topicSubscribers[topic, default: []].insert(id) }
        lastDeviceNumber = max(lastDeviceNumber, Self.deviceNumber(id) ?? 0)
        current = device
    }

    /// The next device made is numbered after `number` at least: ids are not reused.
    func continueNumbering(after number: Int) { lastDeviceNumber = max(lastDeviceNumber, number) }

    /// Room for `count` more devices of one platform, for a fleet made in bulk: the
    /// tables that hash (a dictionary's capacity grows by powers of two, so many small
    /// batches do not copy it each time, as an array's exact `reserveCapacity` would).
    func reserveCapacity(devices count: Int, platform: PushPlatform) {
        devicesByID.reserveCapacity(devicesByID.count + count)
        registry.reserveCapacity(devices: count, platform: platform)
    }

    /// Takes a device out of the world: as `uninstall` (its tokens retire), then it is
    /// gone; false when there is no such device.
    func remove(device id: String) -> Bool {
        guard let device = devicesByID.removeValue(forKey: id) else { return false }
        forgetTopics(of: device)
        if device.isInstalled { try? device.uninstall(nowMilliseconds: clock()) }
        device.powerOff()
        endpoint.processEnded(on: id)
        endpoint.forget(id)
        if let index = index(of: id) { devices.remove(at: index) }
        if current === device { current = nil }
        return true
    }

    /// Takes every device out of the world, as `remove(device:)` does one, and forgets
    /// every token it was ever issued: the next device made is `d1` again. How many went.
    func removeAllDevices() -> Int {
        let count = devices.count
        let now = clock()
        for device in devices {
            if device.isInstalled { try? device.uninstall(nowMilliseconds: now) }
            device.powerOff()
        }
        endpoint.forgetAll()
        devices.removeAll()
        devicesByID.removeAll()
        topicSubscribers.removeAll()
        current = nil
        lastDeviceNumber = 0
        registry.removeAll()
        return count
    }

    /// FCM topic → the ids of the devices whose app subscribes to it, kept as topics
    /// change (`fcm_topic`, uninstall, removal): a topic send asks only these devices.
    private(set) var topicSubscribers: [String: Set<String>] = [:]

    /// Subscribes the device's app to `topic` or takes it off, and keeps the index.
    func setTopic(_ topic: String, subscribed: Bool, on device: Device) throws(DeviceRefusal) -> [String] {
        let topics = try device.setTopic(topic, subscribed: subscribed)
        if subscribed { topicSubscribers[topic, default: []].insert(device.id) } else { unindex(device.id, topic) }
        return topics
    }

    /// Takes a device off a topic's subscribers; a topic with none leaves the index.
    private func unindex(_ id: String, _ topic: String) {
        topicSubscribers[topic]?.remove(id)
        if topicSubscribers[topic]?.isEmpty == true { topicSubscribers[topic] = nil }
    }

    /// Takes the device out of the index before its topics end (uninstall, removal).
    func forgetTopics(of device: Device) {
        for topic in device.topics { unindex(device.id, topic) }
    }

    /// The devices subscribed to any of `topics`, in the order they were made.
    func subscribers(of topics: Set<String>) -> [Device] {
        var ids = Set<String>()
        for topic in topics { ids.formUnion(topicSubscribers[topic] ?? []) }
        return ids.compactMap { devicesByID[$0] }.sorted {
            (Self.deviceNumber($0.id) ?? 0) < (Self.deviceNumber($1.id) ?? 0)
        }
    }

    /// Where device `id` is in `devices`, found by halving: ids are `d<n>` with `n` given
    /// in order and never reused, so `devices` is sorted by `n` (deletion and paging once
    /// scanned the whole fleet for it).
    func index(of id: String) -> Int? {
        guard let number = Self.deviceNumber(id) else { return nil }
        var low = devices.startIndex
        var high = devices.endIndex
        while low < high {
            let middle = (low + high) / 2
            let found = Self.deviceNumber(devices[middle].id) ?? 0
            if found == number { return middle }
            if found < number { low = middle + 1 } else { high = middle }
        }
        return nil
    }

    /// The `n` of a device id `d<n>`.
    static func deviceNumber(_ id: String) -> Int? {
        guard id.utf8.first == UInt8(ascii: "d") else { return nil }
        return Int(id.dropFirst())
    }

    /// The device whose app holds `token` now (or held it, until it retired).
    func device(holding token: String) -> Device? {
        registry.entry(token: token).flatMap { devicesByID[$0.deviceID] }
    }

    /// The device in the world that holds an active token (one a service accepted): the
    /// one it was issued to (`TokenRegistry.Entry.device`), else found by its id. Not for a
    /// retired token, whose device may be gone from the world yet still alive: removing a
    /// device uninstalls it first, which retires its tokens.
    func device(for entry: TokenRegistry.Entry) -> Device? {
        entry.device ?? devicesByID[entry.deviceID]
    }

    // MARK: Time

    /// The world's clock (chaos.md, "The world's clock"), in milliseconds since 1970:
    /// real time plus what was advanced. Every time-based rule reads it.
    func clock() -> Int64 {
        lastReading = max(lastReading, realClock() &+ advancedMilliseconds)
        return lastReading
    }

    /// Lets `milliseconds` (≥ 0) pass at once.
    func advance(by milliseconds: Int64) {
        precondition(milliseconds >= 0, "the world's clock never runs backwards")
        advancedMilliseconds += milliseconds
    }

    /// Takes back what `advance` added: the one time the world's clock may run backwards,
    /// since a reset world is as new. What had been added, in milliseconds.
    func resetClock() -> Int64 {
        defer {
            advancedMilliseconds = 0
            lastReading = .min
        }
        return advancedMilliseconds
    }

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    static func monotonicMilliseconds() -> Int64 { Int64(monotonicNanoseconds() / 1_000_000) }
}

extension Device {
    /// The device as `state` answers: its app, permission, token, subscriptions, tap
    /// buffer and channels.
    var stateReport: JSONObject {
        var state = JSONObject()
        let buffer = self.buffer
        state["state"] = .string(appState.rawValue)
        state["platform"] = .string(platform.rawValue)
        state["permission"] = .string(authorization.rawValue)
        state["token"] = token.map(JSON.string) ?? .null
        state["subscriptions"] = .array((host?.subscribedKeys ?? []).map(JSON.string))
        state["buffered"] = .integer(Int64(buffer.buffered))
        state["dropped_taps"] = .integer(Int64(buffer.droppedTaps))
        state["device"] = .string(id)
        state["installed"] = .bool(isInstalled)
        if platform == .android {
            state["fid"] = installationID.map(JSON.string) ?? .null
            state["topics"] = .array(topics.map(JSON.string))
            state["android_api"] = .integer(Int64(options.androidAPI))
            state["idle"] = .bool(dozeSince != nil)
            if hasChannels { state["notification_channels"] = .array(notificationChannels.map(\.json)) }
        }
        state["channels"] = .array(channelSummaries.map(JSON.object))
        state["badge"] = .integer(Int64(badge))
        state["tray_limit"] = .integer(Int64(trayLimit.count))
        if platform == .ios {
            state["low_power"] = .bool(isLowPower)
            state["focus"] = .bool(isFocused)
            state["capabilities"] = .array(options.capabilities.map(JSON.string))
        }
        if platform != .web { state["categories"] = .array(notificationCategories().map(\.json)) }
        return state
    }

    /// The tray's entries as `tray` and the inspector show them: `actions` when the entry
    /// has buttons (PH-2), `presented` when PH-8 decided; with `detail`, an Android entry's
    /// `channel` and `icon` (PH-6).
    func trayReport(detail: Bool) -> [JSON] {
        trayEntries.map { entry in
            var fields: [(String, JSON)] = [
                ("id", .string(entry.id)), ("title", entry.title.map(JSON.string) ?? .null),
                ("body", entry.body.map(JSON.string) ?? .null),
            ]
            if !entry.buttons.isEmpty { fields.append(("actions", .array(entry.buttons.map(\.action.json)))) }
            if let presented = entry.presented { fields.append(("presented", .string(presented.rawValue))) }
            if detail, platform == .android {
                fields.append(("channel", entry.channel.map(JSON.string) ?? .null))
                fields.append(("icon", entry.icon.map(JSON.string) ?? .null))
            }
            return fields.jsonObject
        }
    }
}

extension Array where Element == (String, JSON) {
    var jsonObject: JSON { .object(JSONObject(self)) }
}
