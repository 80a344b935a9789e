import OrderedJSON

/// A reference model of the push contract as `cxshell serve` shows it, written from
/// `../shared/spec/push-contract.md` and `shell-protocol.md`, not from the product:
/// one device's app state, permission, token and the last token the core was given,
/// tray, and, while a process runs, its subscribers and tap buffer. When the model
/// and the product disagree, the spec decides which one is wrong.
struct ContractModel {
    enum Platform: String, CaseIterable, Sendable { case ios, android }

    enum App: String {
        case notRunning = "not_running"
        case foreground, background
        case forceStopped = "force_stopped"
    }

    struct TrayEntry: Equatable {
        var id: String
        var title: String?
        var body: String?
        var collapse: String?
        /// The event a tap delivers, without `mobiler_push` (TAP-1).
        var tapEvent: [(String, JSON)]
        /// Its action buttons' ids (PH-2).
        var actions: [String] = []

        static func == (lhs: TrayEntry, rhs: TrayEntry) -> Bool {
            lhs.id == rhs.id && lhs.title == rhs.title && lhs.body == rhs.body
        }
    }

    enum Buffered: Equatable {
        case opened(String)
        case token(String)
    }

    /// What one request is expected to produce.
    struct Outcome {
        var ok = true
        /// (key, output) in delivery order.
        var deliveries: [(String, String)] = []
        /// Reply fields the model predicts exactly.
        var fields: [String: JSON] = [:]
    }

    let platform: Platform
    var app = App.notRunning
    var permission = "undetermined"
    var userGrants = true
    /// The token the OS holds for the app now (read from the shell: the OS makes them);
    /// none after an uninstall, until the reinstalled app's process starts or registers.
    var osToken: String?
    /// The token an uninstall or a rotation retired last, to send to.
    var retiredToken: String?
    var installed = true
    /// Set when the OS issued a token the model cannot know: the harness reads it.
    var awaitsIssuedToken = false
    /// The last token the core was given, by `register` or a `token_refresh` (TOK-1);
    /// it lives in the app's storage, so it outlives processes.
    var lastGiven: String?
    var tray: [TrayEntry] = []
    var nextTrayID = 1
    var subscribers: [String] = []
    var buffer: [Buffered] = []
    var droppedTaps = 0
    /// TAP-3's bound; a test sets another to prove a wrong model is caught.
    var tapBound = 32
    /// PH-1: whether the app declared the booking category (it outlives processes).
    var declared = false
    /// The world's clock, in milliseconds advanced.
    var now: Int64 = 0
    /// PH-9: since when the phone dozes, and the data messages held meanwhile, in order.
    var dozeSince: Int64?
    var dozeHeld: [(kind: FCMKind, tag: String?, n: Int)] = []
    var heldSince: Int64?
    /// Flight mode, and since when (PH-12).
    var online = true
    var offlineSince: Int64?
    /// PH-12: how long an FCM token may go unseen (Firebase: 270 days).
    static let tokenExpiry: Int64 = 270 * 24 * 3_600_000

    /// PH-1: the one category the model declares, and its buttons as a tray entry lists them.
    static let booking: [(id: String, json: JSON)] = [
        ("accept", ["id": "accept", "title": "Accept", "foreground": true]),
        ("reply", ["id": "reply", "title": "Reply", "input": true]),
        ("decline", ["id": "decline", "title": "Decline", "destructive": true]),
        ("later", ["id": "later", "title": "Later"]),
    ]
    static let bookingInput =
        #"[{"id":"booking","actions":[{"id":"accept","title":"Accept","foreground":true},{"id":"reply","title":"Reply","input":true},{"id":"decline","title":"Decline","destructive":true},{"id":"later","title":"Later"}]}]"#

    init(platform: Platform, token: String) {
        self.platform = platform
        osToken = token
    }

    var isRunning: Bool { app == .foreground || app == .background }
    var allowed: Bool { permission == "granted" }

    /// The `state` reply's fields.
    var stateFields: [String: JSON] {
        [
            "state": .string(app.rawValue), "platform": .string(platform.rawValue), "permission": .string(permission),
            "token": osToken.map(JSON.string) ?? .null, "subscriptions": .array(subscribers.map(JSON.string)),
            "buffered": .integer(Int64(buffer.count)), "dropped_taps": .integer(Int64(droppedTaps)),
        ]
    }

    // MARK: The rules

    /// TAP-3, TOK-2: the buffer holds at most 32 opened events and one token slot.
    mutating func bufferOpened(_ text: String) {
        if buffer.count(where: { if case .opened = $0 { true } else { false } }) == tapBound,
            let oldest = buffer.firstIndex(where: { if case .opened = $0 { true } else { false } })
        {
            buffer.remove(at: oldest)
            droppedTaps += 1
        }
        buffer.append(.opened(text))
    }

    mutating func setSlot(_ token: String) {
        buffer.removeAll { if case .token = $0 { true } else { false } }
        buffer.append(.token(token))
    }

    var slot: String? {
        for case .token(let token) in buffer { return token }
        return nil
    }

    static func tokenRefresh(_ token: String) -> String {
        JSONObject([("type", "token_refresh"), ("token", .string(token))]).compactText
    }

    /// EV-6: a live event goes to every subscriber, in subscription order.
    func toSubscribers(_ text: String) -> [(String, String)] {
        subscribers.map { ($0, text) }
    }

    /// TOK-1, TOK-2: the OS hands the running process a token.
    mutating func tokenArrives(_ token: String, into outcome: inout Outcome) {
        guard let lastGiven, token != lastGiven, slot != token else { return }
        if subscribers.isEmpty {
            setSlot(token)
        } else {
            outcome.deliveries += toSubscribers(Self.tokenRefresh(token))
            self.lastGiven = token
        }
    }

    /// TOK-2: when a process starts, for any reason, the OS's token is compared with
    /// the last one the core was given.
    mutating func processStarts(_ state: App, into outcome: inout Outcome) {
        app = state
        subscribers = []
        buffer = []
        // The app registers at every start; a reinstalled app is issued its token then.
        guard let osToken else {
            awaitsIssuedToken = true
            return
        }
        tokenArrives(osToken, into: &outcome)
    }

    /// TAP-1, TAP-2: an opened event goes live, or to the buffer; PH-3: a button's id
    /// and text come just before `mobiler_push`.
    mutating func opened(_ event: [(String, JSON)], pressing extra: [(String, JSON)] = [], into outcome: inout Outcome)
    {
        let text = Self.event(event.filter { !Self.reserved.contains($0.0) } + extra, "opened")
        if subscribers.isEmpty { bufferOpened(text) } else { outcome.deliveries += toSubscribers(text) }
    }

    /// DEL-5: a collapse key replaces its entry (which becomes the newest); else a new one.
    mutating func post(
        title: String?, body: String?, collapse: String?, tapEvent: [(String, JSON)], actions: [String] = []
    ) -> String {
        if let collapse, let index = tray.firstIndex(where: { $0.collapse == collapse }) {
            var entry = tray.remove(at: index)
            entry.title = title
            entry.body = body
            entry.tapEvent = tapEvent
            entry.actions = actions
            tray.append(entry)
            return entry.id
        }
        let id = "t\(nextTrayID)"
        nextTrayID += 1
        tray.append(
            TrayEntry(id: id, title: title, body: body, collapse: collapse, tapEvent: tapEvent, actions: actions))
        return id
    }

    /// PAY-4, PH-3: keys only the plugin sets.
    static let reserved: Set = ["mobiler_push", "mobiler_action", "mobiler_input"]

    /// PAY-4: the event's keys, then `mobiler_push` last.
    static func event(_ members: [(String, JSON)], _ action: String) -> String {
        JSONObject(members.filter { $0.0 != "mobiler_push" } + [("mobiler_push", .string(action))]).compactText
    }

    /// PH-2: the buttons a posted entry gets: a declared category's, all four on iOS,
    /// three on Android.
    func buttons(_ named: Bool) -> [String] {
        guard named, declared else { return [] }
        return Self.booking.prefix(platform == .ios ? 4 : 3).map(\.id)
    }

    /// PH-9: the first maintenance window after `time` for a phone dozing since `since`:
    /// 15 minutes in, then 30 minutes later, then every 60.
    static func window(since: Int64, after time: Int64) -> Int64 {
        let minute: Int64 = 60_000
        var window = since + 15 * minute
        if window > time { return window }
        window += 30 * minute
        while window <= time { window += 60 * minute }
        return window
    }

    /// PH-9: what Doze held is handed over, in order, as if it arrived now, to a phone on
    /// the network, once Doze ended or a window opened since it was held.
    mutating func handOverHeldIfDue(into outcome: inout Outcome) {
        guard online, !dozeHeld.isEmpty else { return }
        if let dozeSince, let heldSince, Self.window(since: dozeSince, after: heldSince) > now { return }
        let held = dozeHeld
        dozeHeld = []
        heldSince = nil
        // What they post is not this request's `tray_id`: only what reaches the core counts.
        var handed = Outcome()
        for message in held { deliverFCM(message.kind, tag: message.tag, n: message.n, into: &handed) }
        outcome.deliveries += handed.deliveries
    }

    /// PAY-3: title and body are added only when the payload has no such key.
    static func adding(_ extra: [(String, String?)], to members: [(String, JSON)]) -> [(String, JSON)] {
        var result = members
        for (key, value) in extra where value != nil && !result.contains(where: { $0.0 == key }) {
            result.append((key, .string(value!)))
        }
        return result
    }
}

// MARK: - Requests

extension ContractModel {
    /// Pushes the model knows how to send; each carries a unique `n`.
    enum APNsKind: CaseIterable, Sendable {
        case alert, alertString, sound, badge, background, alertAndBackground, mutableOnly
        /// An alert naming the booking category (PH-2).
        case categorized
    }

    enum FCMKind: CaseIterable, Sendable {
        case data, dataTitled, dataReserved, notification, notificationOnly
        /// A data message naming the booking category in `mobiler_category` (PH-2).
        case dataCategorized
    }

    enum Step: Sendable {
        case launch, background, foreground, kill, forceStop, uninstall, install
        case permission(grant: Bool)
        case register
        case subscribe(String)
        case unsubscribe(String)
        case apns(APNsKind, collapse: String?)
        case fcm(FCMKind, tag: String?)
        case tap(String)
        case rotate
        case tray
        /// PH-1: the core declares the booking category.
        case declare
        /// PH-3: a button pressed on an entry (`reply` with text).
        case act(String, action: String)
        /// PH-4.
        case dismiss(String)
        /// PH-9 (Android).
        case idle(Bool)
        /// The world's clock moves on.
        case clock(minutes: Int)
        /// Flight mode off or on (PH-12).
        case network(Bool)
    }

    /// The request line for `step`; `n` makes each push's payload its own. In a world,
    /// `device` names the device the request is for, and pushes carry their token
    /// (the retired one when the app holds none) while naming `pushFrom`, another
    /// device, to show that the token decides.
    func line(for step: Step, n: Int, device: String? = nil, pushFrom: String? = nil) -> String {
        let base = plainLine(for: step, n: n, explicitToken: device != nil)
        guard let device else { return base }
        let named: String
        switch step {
        case .apns, .fcm: named = pushFrom ?? device
        default: named = device
        }
        return #"{"device":"\#(named)","# + base.dropFirst()
    }

    private func plainLine(for step: Step, n: Int, explicitToken: Bool) -> String {
        let token = osToken ?? retiredToken ?? ""
        switch step {
        case .uninstall: return #"{"op":"uninstall"}"#
        case .install: return #"{"op":"install"}"#
        case .launch: return #"{"op":"launch"}"#
        case .background: return #"{"op":"background"}"#
        case .foreground: return #"{"op":"foreground"}"#
        case .kill: return #"{"op":"kill"}"#
        case .forceStop: return #"{"op":"force_stop"}"#
        case .permission(let grant): return #"{"op":"permission","answer":"\#(grant ? "grant" : "deny")"}"#
        case .register: return #"{"op":"call","plugin":"push","method":"register","input":""}"#
        case .subscribe(let key):
            return #"{"op":"subscribe","key":"\#(key)","plugin":"push","stream":"events","input":""}"#
        case .unsubscribe(let key): return #"{"op":"unsubscribe","key":"\#(key)"}"#
        case .tap(let which): return #"{"op":"tap","which":"\#(which)"}"#
        case .rotate: return #"{"op":"rotate_token"}"#
        case .tray: return #"{"op":"tray"}"#
        case .declare:
            return
                #"{"op":"call","plugin":"push","method":"categories","input":\#(JSON.string(Self.bookingInput).compactText)}"#
        case .act(let which, let action):
            let text = action == "reply" ? #","text":"R\#(n)""# : ""
            return #"{"op":"tap","which":"\#(which)","action":"\#(action)"\#(text)}"#
        case .dismiss(let which): return #"{"op":"dismiss","which":"\#(which)"}"#
        case .idle(let on): return #"{"op":"idle","on":\#(on)}"#
        case .clock(let minutes): return #"{"op":"clock","advance_ms":\#(Int64(minutes) * 60_000)}"#
        case .network(let online): return #"{"op":"network","online":\#(online)}"#
        case .apns(let kind, let collapse):
            let collapseHeader = collapse.map { #","apns-collapse-id":"\#($0)""# } ?? ""
            let tokenField = explicitToken ? #""token":"\#(token)","# : ""
            return
                #"{"op":"apns",\#(tokenField)"headers":{"apns-topic":"com.example.app"\#(collapseHeader)},"body":\#(Self.apnsPayload(kind, n: n).compactText)}"#
        case .fcm(let kind, let tag):
            var message = JSONObject([("token", .string(token))])
            let (data, notification) = Self.fcmParts(kind, n: n)
            if let data { message["data"] = .object(JSONObject(data.map { ($0.0, .string($0.1)) })) }
            if let notification {
                message["notification"] = .object(JSONObject(notification.map { ($0.0, .string($0.1)) }))
            }
            if let tag, notification != nil { message["android"] = ["notification": ["tag": .string(tag)]] }
            return #"{"op":"fcm","body":{"message":\#(message.compactText)}}"#
        }
    }

    static func apnsPayload(_ kind: APNsKind, n: Int) -> JSON {
        let aps: JSON =
            switch kind {
            case .alert: ["alert": ["title": .string("T\(n)"), "body": .string("B\(n)")]]
            case .alertString: ["alert": .string("S\(n)")]
            case .sound: ["sound": "default"]
            case .badge: ["badge": 1]
            case .background: ["content-available": 1]
            case .alertAndBackground: ["alert": .string("S\(n)"), "content-available": 1]
            case .mutableOnly: ["mutable-content": 1]
            case .categorized: ["alert": .string("S\(n)"), "category": "booking"]
            }
        return ["n": .integer(Int64(n)), "aps": aps]
    }

    static func fcmParts(_ kind: FCMKind, n: Int) -> (data: [(String, String)]?, notification: [(String, String)]?) {
        switch kind {
        case .data: ([("n", "\(n)")], nil)
        case .dataTitled: ([("n", "\(n)"), ("title", "T\(n)"), ("body", "B\(n)")], nil)
        case .dataReserved: ([("collapse_key", "c"), ("n", "\(n)")], nil)
        case .notification: ([("n", "\(n)")], [("title", "T\(n)"), ("body", "B\(n)")])
        case .notificationOnly: (nil, [("title", "T\(n)")])
        case .dataCategorized: ([("n", "\(n)"), ("mobiler_category", "booking")], nil)
        }
    }

    /// Applies `step` as the spec says; `reply` is the shell's reply, read only for
    /// what the OS decides (a rotated token's value).
    mutating func apply(_ step: Step, n: Int, reply: JSONObject) -> Outcome {
        var outcome = Outcome()
        func refuse() -> Outcome { Outcome(ok: false) }
        switch step {
        case .uninstall:
            guard installed else { return refuse() }
            installed = false
            app = .notRunning
            subscribers = []
            buffer = []
            tray = []
            lastGiven = nil  // the app's storage goes with it
            declared = false
            permission = "undetermined"
            if let osToken { retiredToken = osToken }
            osToken = nil
        case .install:
            guard !installed else { return refuse() }
            installed = true
            permission = "undetermined"
            outcome.fields["bundle"] = "com.example.app"
        case .launch:
            guard installed else { return refuse() }
            if isRunning { app = .foreground } else { processStarts(.foreground, into: &outcome) }
            outcome.fields["state"] = .string(app.rawValue)
        case .background, .foreground:
            guard isRunning else { return refuse() }
            if case .background = step { app = .background } else { app = .foreground }
            outcome.fields["state"] = .string(app.rawValue)
        case .kill:
            guard isRunning else { return refuse() }
            app = .notRunning
            subscribers = []
            buffer = []  // TAP-6
        case .forceStop:
            guard platform == .android, installed else { return refuse() }
            app = .forceStopped
            subscribers = []
            buffer = []
            tray = []  // DEL-4
        case .permission(let grant):
            userGrants = grant
            if permission != "undetermined" { permission = grant ? "granted" : "denied" }
        case .register:
            guard isRunning else { return refuse() }
            if permission == "undetermined" { permission = userGrants ? "granted" : "denied" }  // REG-2
            guard permission == "granted" else {
                outcome.ok = false
                return outcome
            }
            if osToken == nil {
                // A reinstalled app is issued its token now; the OS decides its value.
                let output = reply["output"]?.stringValue.flatMap { try? JSON.parse(text: $0) }
                osToken = output?["token"]?.stringValue
                awaitsIssuedToken = false
            }
            let service = platform == .ios ? "apns" : "fcm"
            outcome.fields["output"] = .string(
                JSONObject([("token", osToken.map(JSON.string) ?? .null), ("platform", .string(service))])
                    .compactText)
            if let osToken { tokenArrives(osToken, into: &outcome) }
            lastGiven = osToken
        case .subscribe(let key):
            guard isRunning else { return refuse() }
            subscribers.removeAll { $0 == key }  // EV-5
            subscribers.append(key)
            for entry in buffer {  // TAP-4
                switch entry {
                case .opened(let text): outcome.deliveries.append((key, text))
                case .token(let token):
                    outcome.deliveries.append((key, Self.tokenRefresh(token)))
                    lastGiven = token
                }
            }
            buffer = []
        case .unsubscribe(let key):
            guard isRunning else { return refuse() }
            subscribers.removeAll { $0 == key }
        case .rotate:
            guard installed, let token = reply["token"]?.stringValue else { return refuse() }
            if let osToken { retiredToken = osToken }
            osToken = token
            awaitsIssuedToken = false
            if isRunning { tokenArrives(token, into: &outcome) }
        case .tray:
            outcome.fields["entries"] = .array(
                tray.map { entry in
                    var fields = JSONObject([
                        ("id", .string(entry.id)), ("title", entry.title.map(JSON.string) ?? .null),
                        ("body", entry.body.map(JSON.string) ?? .null),
                    ])
                    if !entry.actions.isEmpty {
                        fields["actions"] = .array(
                            entry.actions.compactMap { id in Self.booking.first { $0.id == id }?.json })
                    }
                    return .object(fields)
                })
        case .declare:
            guard isRunning else { return refuse() }
            declared = true
            outcome.fields["output"] = #"{"categories":1}"#
        case .dismiss(let which):
            guard let index = trayIndex(which) else { return refuse() }
            outcome.fields["id"] = .string(tray.remove(at: index).id)
        case .act(let which, let action):
            guard let index = trayIndex(which), tray[index].actions.contains(action) else { return refuse() }
            let entry = tray.remove(at: index)
            outcome.fields["id"] = .string(entry.id)
            outcome.fields["action"] = .string(action)
            if action == "accept" {  // the foreground action: as a tap
                if isRunning { app = .foreground } else { processStarts(.foreground, into: &outcome) }
            } else if !isRunning {
                processStarts(.background, into: &outcome)
            }
            var pressed: [(String, JSON)] = [("mobiler_action", .string(action))]
            if action == "reply" { pressed.append(("mobiler_input", .string("R\(n)"))) }
            opened(entry.tapEvent, pressing: pressed, into: &outcome)
        case .idle(let on):
            guard platform == .android else { return refuse() }
            outcome.fields["idle"] = .bool(on)
            if on {
                if dozeSince == nil { dozeSince = now }
            } else {
                dozeSince = nil
                handOverHeldIfDue(into: &outcome)
            }
        case .clock(let minutes):
            now += Int64(minutes) * 60_000
            outcome.fields["advanced_ms"] = .integer(now)
            handOverHeldIfDue(into: &outcome)
        case .network(let on):
            outcome.fields["online"] = .bool(on)
            guard on else {
                if online { offlineSince = now }
                online = false
                return outcome
            }
            guard !online else { return outcome }
            online = true
            handOverHeldIfDue(into: &outcome)
            // PH-12: an Android token unseen for 270 days expired; the OS issues a new one.
            // The model decides whether; only the new token's value is the OS's, read from the reply.
            let expired = platform == .android && installed && now - (offlineSince ?? now) >= Self.tokenExpiry
            offlineSince = nil
            guard expired else {
                if reply["token"] != nil { outcome.fields["token"] = .null }  // renewed when it should not be
                return outcome
            }
            guard let token = reply["token"]?.stringValue else {
                outcome.fields["token"] = "a new token"
                return outcome
            }
            if let osToken { retiredToken = osToken }
            osToken = token
            awaitsIssuedToken = false
            outcome.fields["token"] = .string(token)
            if isRunning { tokenArrives(token, into: &outcome) }
        case .tap(let which):
            guard let index = trayIndex(which) else { return refuse() }
            let entry = tray.remove(at: index)
            outcome.fields["id"] = .string(entry.id)
            if isRunning { app = .foreground } else { processStarts(.foreground, into: &outcome) }
            opened(entry.tapEvent, into: &outcome)
        case .apns(let kind, let collapse):
            // A token the app no longer holds: 410 Unregistered.
            guard platform == .ios, osToken != nil else { return refuse() }
            applyAPNs(kind, collapse: collapse, n: n, into: &outcome)
        case .fcm(let kind, let tag):
            // A token the app no longer holds: 404 UNREGISTERED.
            guard platform == .android, osToken != nil else { return refuse() }
            applyFCM(kind, tag: tag, n: n, into: &outcome)
        }
        return outcome
    }

    /// The entry `which` names (`newest`, `oldest` or an id).
    func trayIndex(_ which: String) -> Int? {
        switch which {
        case "newest": tray.isEmpty ? nil : tray.count - 1
        case "oldest": tray.isEmpty ? nil : 0
        default: tray.firstIndex { $0.id == which }
        }
    }

    /// DEL-1, DEL-2, DEL-5, DEL-6 on iOS; PAY-1 for the event.
    mutating func applyAPNs(_ kind: APNsKind, collapse: String?, n: Int, into outcome: inout Outcome) {
        let payload = Self.apnsPayload(kind, n: n)
        let aps = payload["aps"]?.objectValue ?? JSONObject()
        let isAlert = aps.contains("alert") || aps.contains("sound") || aps.contains("badge")
        let wakes = aps["content-available"] == 1
        let alert = aps["alert"]
        let title = alert?["title"]?.stringValue
        let body = alert?.stringValue ?? alert?["body"]?.stringValue
        let event = Self.adding([("title", title), ("body", body)], to: [("n", .integer(Int64(n)))])
        let actions = buttons(kind == .categorized)
        guard isAlert || wakes else { return }  // DEL-2: neither shown nor delivered
        if app == .foreground {
            if !isAlert {  // DEL-1: a background push in the foreground is received, never shown
                outcome.deliveries += toSubscribers(Self.event(event, "received"))
                return
            }
            guard allowed else { return }  // DEL-6: not presented, no event
            outcome.deliveries += toSubscribers(Self.event(event, "received"))
            outcome.fields["tray_id"] = .string(
                post(title: title, body: body, collapse: collapse, tapEvent: event, actions: actions))
            return
        }
        guard isAlert, allowed else { return }  // DEL-2, DEL-6
        outcome.fields["tray_id"] = .string(
            post(title: title, body: body, collapse: collapse, tapEvent: event, actions: actions))
    }

    /// DEL-1, DEL-3, DEL-4, DEL-5, DEL-6 on Android; PAY-2 for the event.
    mutating func applyFCM(_ kind: FCMKind, tag: String?, n: Int, into outcome: inout Outcome) {
        // PH-9: in Doze a data message (normal priority by default) waits; a notification
        // message (high by default) goes at once.
        if dozeSince != nil, Self.fcmParts(kind, n: n).notification == nil {
            if dozeHeld.isEmpty { heldSince = now }
            dozeHeld.append((kind, tag, n))
            return
        }
        deliverFCM(kind, tag: tag, n: n, into: &outcome)
    }

    mutating func deliverFCM(_ kind: FCMKind, tag: String?, n: Int, into outcome: inout Outcome) {
        guard app != .forceStopped else { return }  // DEL-4
        let (rawData, notification) = Self.fcmParts(kind, n: n)
        let reserved: Set = ["from", "message_type", "collapse_key"]
        let data = (rawData ?? []).filter { !reserved.contains($0.0) }.map { ($0.0, JSON.string($0.1)) }
        let noteTitle = notification?.first { $0.0 == "title" }?.1
        let noteBody = notification?.first { $0.0 == "body" }?.1
        let full = Self.adding([("title", noteTitle), ("body", noteBody)], to: data)
        let isNotificationMessage = notification != nil
        let tag = isNotificationMessage ? tag : nil
        let dataTitle = rawData?.first { $0.0 == "title" }?.1
        let dataBody = rawData?.first { $0.0 == "body" }?.1
        if app == .foreground {
            // onMessageReceived: received, and the plugin posts its own entry (DEL-1, DEL-6).
            outcome.deliveries += toSubscribers(Self.event(full, "received"))
            if allowed {
                outcome.fields["tray_id"] = .string(
                    post(
                        title: noteTitle ?? dataTitle, body: noteBody ?? dataBody, collapse: tag, tapEvent: full,
                        actions: buttons(!isNotificationMessage && kind == .dataCategorized)))
            }
            return
        }
        if isNotificationMessage {
            // FCM displays it; its tap carries the data keys only (DEL-3).
            guard allowed else { return }
            outcome.fields["tray_id"] = .string(post(title: noteTitle, body: noteBody, collapse: tag, tapEvent: data))
            return
        }
        // A data message: onMessageReceived in the background, or in a process started
        // for it. That process notices a rotation (TOK-2) but ends with what it
        // buffered, and the core was given nothing: the next start notices it again.
        if allowed {
            outcome.fields["tray_id"] = .string(
                post(
                    title: dataTitle, body: dataBody, collapse: nil, tapEvent: full,
                    actions: buttons(kind == .dataCategorized)))
        }
    }
}
