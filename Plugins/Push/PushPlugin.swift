import CXHost
import OrderedJSON

/// The `push` plugin: ops `register` and `categories` (PH-1), stream `events`, per the
/// push contract.
///
/// The plugin holds the contract (what the core sees and when); the OS is reached
/// through `system`, and the OS reaches the plugin through `iosBridge` or
/// `androidBridge`. All of the plugin's state lives in `state`, behind one lock.
/// Emits and answers happen under that lock, because they only queue into the host
/// and never call back: this is what keeps a buffer flush ahead of any live event
/// (TAP-4). The OS is only ever called with the lock released, since it may answer
/// through a bridge before it returns.
public final class PushPlugin: Plugin {
    public static let pluginDescriptor = PluginDescriptor(
        name: "push", ops: ["register", "categories"], streams: ["events"])
    public var descriptor: PluginDescriptor { Self.pluginDescriptor }
    let system: any PushSystem
    private let state = Monitor(State())

    struct State {
        /// Live `events` subscriptions, in subscription order (EV-6).
        var subscribers: [StreamEmitter] = []
        var buffer = TapBuffer()
        /// `register` calls waiting for the permission prompt or the token.
        var pendingRegistrations: [Reply] = []
        var awaitingAuthorization = false
        /// Channel registrations waiting for the permission prompt (APW-1).
        var pendingChannels: [(ChannelRequest, Reply)] = []
        /// Whether this process's channels were resumed: at the first `events`
        /// subscription of a process (APW-5).
        var channelsResumed = false
        /// Notifications already delivered as `opened`, so a launch tap that the OS
        /// reports twice (launch options and `didReceive`) is delivered once.
        var openedIDs = RecentIDs(capacity: 64)
    }

    public init(system: any PushSystem) {
        self.system = system
    }

    /// The bridge an iOS shell's `AppDelegate` and notification-center delegate forward to.
    public var iosBridge: IOSPushBridge { IOSPushBridge(plugin: self) }

    /// The bridge an Android shell's `FirebaseMessagingService` and activity forward to.
    public var androidBridge: AndroidPushBridge { AndroidPushBridge(plugin: self) }

    /// The bridge the app's other channels' SDKs (Appwrite, webhooks) forward to.
    public var channelBridge: ChannelPushBridge { ChannelPushBridge(plugin: self) }

    /// What a shell may show about the buffer: events waiting, and taps dropped by the
    /// bound (TAP-3), so that drops are visible rather than silent.
    public var diagnostics: PushDiagnostics {
        state.withLock {
            PushDiagnostics(
                buffered: $0.buffer.count, droppedTaps: $0.buffer.droppedTaps, liveSubscribers: $0.subscribers.count)
        }
    }

    // MARK: Plugin

    public func call(_ op: String, input: String, reply: Reply) throws {
        guard system.platform != .web else {
            reply.fail("push notifications are not available on the web (browser web push is a separate concern)")
            return
        }
        if op == "categories" { return declareCategories(input, reply: reply) }
        if !input.utf8.allSatisfy(JSONSpace.isSpace) {
            return registerChannel(input, reply: reply)
        }
        switch system.notificationAuthorization() {
        case .denied:
            reply.fail(Self.permissionDenied)
        case .undetermined:
            let ask = state.withLock { state -> Bool in
                state.pendingRegistrations.append(reply)
                defer { state.awaitingAuthorization = true }
                return !state.awaitingAuthorization
            }
            if ask { system.requestNotificationAuthorization() }
        case .granted:
            state.withLock { $0.pendingRegistrations.append(reply) }
            system.requestPushToken()
        }
    }

    public func startStream(_ stream: String, input: String, emitter: StreamEmitter) throws {
        let (flushedToken, resume) = state.withLock { state -> (String?, Bool) in
            state.subscribers.append(emitter)
            defer { state.channelsResumed = true }
            var token: String?
            for case .tokenRefresh(let refreshed) in state.buffer.flush(through: { emitter.emit($0.eventText) }) {
                token = refreshed
            }
            return (token, !state.channelsResumed)
        }
        if let flushedToken { system.storeReportedToken(flushedToken) }
        if resume { system.resumeChannels() }
    }

    public func stopStream(_ emitter: StreamEmitter) {
        state.withLock { $0.subscribers.removeAll { $0 === emitter } }
    }

    public func hostDidShutDown() {
        state.withLock {
            $0.subscribers.removeAll()
            $0.pendingRegistrations.removeAll()
            $0.pendingChannels.removeAll()
        }
    }

    // MARK: Categories

    /// PH-1: the app's categories replace those declared before; a bad input is refused
    /// with a sentence and changes nothing.
    private func declareCategories(_ input: String, reply: Reply) {
        switch NotificationCategory.parse(input) {
        case .failure(let refusal):
            reply.fail(refusal.message)
        case .success(let categories):
            system.setNotificationCategories(categories)
            reply.succeed(JSONObject([("categories", .integer(Int64(categories.count)))]).compactText)
        }
    }

    // MARK: Channels

    /// The channels `register` may choose with a JSON input (channels.md).
    public static let channels = ["appwrite", "http"]

    /// `register` with a JSON input: another channel than the OS's. A malformed
    /// input or an unknown channel fails and changes nothing (REG-3). Appwrite asks
    /// for the notification permission first when it is undetermined, and a denial
    /// does not fail it (APW-1).
    private func registerChannel(_ input: String, reply: Reply) {
        func refuse(_ sentence: String) { _ = reply.fail(sentence) }
        let object: JSONObject
        do {
            guard let parsed = try JSON.parse(text: input).objectValue else {
                refuse(
                    "register's input must be empty (the OS channel) or a JSON object that names a \"channel\"")
                return
            }
            object = parsed
        } catch {
            refuse("register's input is not JSON: \(error)")
            return
        }
        guard case .string(let name)? = object["channel"] else {
            refuse(
                "register's input needs \"channel\": one of \(Self.channels.joined(separator: ", ")) (empty input: the OS channel)"
            )
            return
        }
        guard Self.channels.contains(name) else {
            refuse(
                "unknown channel '\(name)'; the channels are \(Self.channels.joined(separator: ", ")) (empty input: the OS channel)"
            )
            return
        }
        let request = ChannelRequest(channel: name, options: object)
        if name == "appwrite", system.notificationAuthorization() == .undetermined {
            let ask = state.withLock { state -> Bool in
                state.pendingChannels.append((request, reply))
                defer { state.awaitingAuthorization = true }
                return !state.awaitingAuthorization
            }
            if ask { system.requestNotificationAuthorization() }
            return
        }
        performChannelRegistration(request, reply: reply)
    }

    private func performChannelRegistration(_ request: ChannelRequest, reply: Reply) {
        system.registerChannel(request) { result in
            switch result {
            case .success(let token):
                reply.succeed(
                    JSONObject([("token", .string(token)), ("platform", .string(request.channel))]).compactText)
            case .failure(let refusal):
                reply.fail(refusal.message)
            }
        }
    }

    // MARK: What the bridges report

    func authorizationAnswered(granted: Bool) {
        let (waiting, channels) = state.withLock { state -> (Bool, [(ChannelRequest, Reply)]) in
            state.awaitingAuthorization = false
            let channels = state.pendingChannels
            state.pendingChannels.removeAll()
            guard granted else {
                for reply in state.pendingRegistrations { reply.fail(Self.permissionDenied) }
                state.pendingRegistrations.removeAll()
                return (false, channels)
            }
            return (!state.pendingRegistrations.isEmpty, channels)
        }
        // A channel registers whatever the answer: a denial only keeps it out of the tray.
        for (request, reply) in channels { performChannelRegistration(request, reply: reply) }
        if waiting { system.requestPushToken() }
    }

    /// The app's process started (iOS `didFinishLaunching`, Android
    /// `Application.onCreate`): the OS's current token is compared with the last one
    /// the core was given, so no rotation is lost to a process's life (TOK-2).
    func processStarted() {
        guard system.platform != .web else { return }
        system.requestPushToken()
    }

    /// A token from the OS: answers waiting `register` calls (REG-1, REG-4). It is a
    /// rotation when it differs from the last token the core was given; before the
    /// core was given any token there is nothing to refresh (TOK-1). A rotation goes
    /// to the live subscribers, or waits in the slot (TOK-2).
    func tokenArrived(_ token: String) {
        guard system.platform != .web else { return }  // EV-7
        let previous = system.lastReportedToken()
        let service = system.platform.tokenService ?? ""
        let given = state.withLock { state -> Bool in
            let answer = JSONObject([("token", .string(token)), ("platform", .string(service))]).compactText
            let answered = !state.pendingRegistrations.isEmpty
            for reply in state.pendingRegistrations { reply.succeed(answer) }
            state.pendingRegistrations.removeAll()
            guard let previous, previous != token else { return answered }
            // Already waiting in its slot: a `register` answering it does not move it.
            if state.buffer.pendingToken == token { return answered }
            if Self.emit(PushEvent.tokenRefresh(token).compactText, to: state.subscribers) { return true }
            state.buffer.setTokenRefresh(token)
            return answered
        }
        // Remember the token only once the core has it: a rotation that waits in a
        // process that dies is then noticed again when the next process starts.
        if given { system.storeReportedToken(token) }
    }

    /// REG-3: the OS could not register; waiting calls get its words.
    func registrationFailed(_ error: String) {
        state.withLock { state in
            for reply in state.pendingRegistrations { reply.fail(error) }
            state.pendingRegistrations.removeAll()
        }
    }

    /// TAP-1, TAP-2: a tap's event goes to the live subscribers, or to the buffer.
    func opened(id: String, event: JSONObject) {
        guard system.platform != .web else { return }  // EV-7
        let text = PushEvent.with(.opened, event).compactText
        state.withLock { state in
            guard state.openedIDs.insert(id) else { return }
            // A subscriber whose stream the core ended meanwhile takes nothing: buffer.
            if !Self.emit(text, to: state.subscribers) { state.buffer.addOpened(text) }
        }
    }

    /// DEL-1: `received` is live only; with no subscriber it is dropped, and then the
    /// event is never made. Returns whether any subscriber got it.
    @discardableResult
    func received(event: @autoclosure () -> JSONObject) -> Bool {
        received(text: PushEvent.with(.received, event()).compactText)
    }

    /// `received(event:)` for an event already made text, `mobiler_push` included.
    @discardableResult
    func received(text: @autoclosure () -> String) -> Bool {
        guard system.platform != .web else { return false }  // EV-7
        guard state.withLock({ !$0.subscribers.isEmpty }) else { return false }
        let text = text()
        return state.withLock { state in Self.emit(text, to: state.subscribers) }
    }

    /// Emits to every subscriber (EV-6); true when at least one took the event.
    private static func emit(_ text: String, to subscribers: [StreamEmitter]) -> Bool {
        var taken = false
        for subscriber in subscribers where subscriber.emit(text) { taken = true }
        return taken
    }

    static let permissionDenied =
        "the notification permission was denied; the user can allow notifications in the system settings"
}

/// A read-only view of the plugin's buffer for shells and diagnostics.
public struct PushDiagnostics: Sendable, Equatable {
    /// Events waiting in the tap buffer (taps and the token slot).
    public let buffered: Int
    /// Taps the buffer dropped for its bound since this process started.
    public let droppedTaps: Int
    /// Live `events` subscriptions.
    public let liveSubscribers: Int

    public init(buffered: Int, droppedTaps: Int, liveSubscribers: Int = 0) {
        self.buffered = buffered
        self.droppedTaps = droppedTaps
        self.liveSubscribers = liveSubscribers
    }
}

/// The last `capacity` identifiers seen, oldest forgotten first; O(1) per insert.
public struct RecentIDs: Sendable, Equatable {
    public let capacity: Int
    /// A ring: `order[next]` is the oldest once the ring is full.
    private var order: [String] = []
    private var next = 0
    private var members: Set<String> = []

    public init(capacity: Int) { self.capacity = capacity }

    public func contains(_ id: String) -> Bool { members.contains(id) }

    /// The identifiers held, oldest first.
    public var inOrder: [String] {
        order.count < capacity ? order : Array(order[next...] + order[..<next])
    }

    /// Returns false when `id` was already present.
    public mutating func insert(_ id: String) -> Bool {
        guard members.insert(id).inserted else { return false }
        if order.count < capacity {
            order.append(id)
        } else {
            members.remove(order[next])
            order[next] = id
            next = (next + 1) % capacity
        }
        return true
    }
}
