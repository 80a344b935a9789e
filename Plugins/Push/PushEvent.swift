import OrderedJSON

/// What happened to a notification, as the `mobiler_push` key says.
public enum NotificationAction: String, Sendable {
    case opened, received
}

/// The events the `events` stream carries, and the pure functions that build them
/// from what the OS hands over (PAY-1 … PAY-4, EV-2, EV-3).
public enum PushEvent {
    /// The reserved key (PAY-4).
    public static let reservedKey = "mobiler_push"
    /// PH-3: the action button the user pressed, and the text of an input action. Reserved
    /// as `mobiler_push` is: removed from every payload, and set only by the plugin.
    public static let actionKey = "mobiler_action"
    public static let inputKey = "mobiler_input"

    /// Whether a payload key is the plugin's own (PAY-4, PH-3), never the sender's.
    public static func isReserved(_ key: String) -> Bool {
        // The three start alike: one byte tells most keys apart, where each `==` on two
        // different strings calls into the runtime (an FCM message asks of every key).
        key.utf8.first == UInt8(ascii: "m") && (key == reservedKey || key == actionKey || key == inputKey)
    }

    /// PAY-1: an APNs payload (`userInfo`) as an event. Every top-level key except
    /// `aps` in order; then `aps.alert`'s `title` and `body` (or a string alert as
    /// `body`) unless the payload already has those keys; then `mobiler_push`.
    public static func ios(userInfo: JSONObject, action: NotificationAction) -> JSONObject {
        // The payload less two keys, in order: removing them costs less than adding
        // every other key one by one.
        var event = userInfo
        event["aps"] = nil
        event[reservedKey] = nil
        event[actionKey] = nil
        event[inputKey] = nil
        switch userInfo["aps"]?["alert"] {
        case .object(let alert):
            addMissing("title", alert["title"], to: &event)
            addMissing("body", alert["body"], to: &event)
        case .string(let text):
            addMissing("body", .string(text), to: &event)
        default:
            break
        }
        event[reservedKey] = .string(action.rawValue)
        return event
    }

    /// PAY-2: an FCM message as an event. The `data` keys in order, without those
    /// Android reserves and never hands to the app (`isAndroidReserved`); then the
    /// notification block's `title` and `body` when given (pass nil for a tap on an
    /// FCM-displayed notification message, DEL-3), never overwriting; then `mobiler_push`.
    public static func android(
        data: JSONObject, notificationTitle: String?, notificationBody: String?, action: NotificationAction
    ) -> JSONObject {
        android(
            androidMessage(data: data, notificationTitle: notificationTitle, notificationBody: notificationBody),
            action: action)
    }

    /// The event of a message `androidMessage` made: it with `mobiler_push` last.
    public static func android(_ message: consuming JSONObject, action: NotificationAction) -> JSONObject {
        var event = message
        event.appendUnique(reservedKey, .string(action.rawValue))
        return event
    }

    /// `android(…)` up to `mobiler_push`, with room for it: the message a notification
    /// the plugin posts keeps (as its text, `androidMessageText`), and a tap adds its
    /// action to.
    public static func androidMessage(data: JSONObject, notificationTitle: String?, notificationBody: String?)
        -> JSONObject
    {
        // Room for all at once, and no lookup for what cannot be there yet: `data`'s keys
        // are unique, and the reserved key is left out of them.
        var event = JSONObject(capacity: data.count + 3)
        for (key, value) in data where !isReserved(key) && !isAndroidReserved(key) {
            event.appendUnique(key, value)
        }
        addMissing("title", notificationTitle.map(JSON.string), to: &event)
        addMissing("body", notificationBody.map(JSON.string), to: &event)
        return event
    }

    /// `androidMessage(…)`'s compact text, written from `data` with no event built: the
    /// text a notification the plugin posts keeps of every message. Building the event,
    /// writing it and freeing it was ~2.3k instructions a message, this ~1.2k (callgrind);
    /// for data kept as its text with no key to leave out, it is that text, or that text
    /// with the notification's fields after it.
    public static func androidMessageText(data: JSONStringMap, notificationTitle: String?, notificationBody: String?)
        -> String
    {
        let keepsEveryKey = !data.containsKey { isReserved($0) || isAndroidReserved($0) }
        let title = notificationTitle.flatMap { data.contains("title") ? nil : $0 }
        let body = notificationBody.flatMap { data.contains("body") ? nil : $0 }
        if keepsEveryKey, title == nil, body == nil, let text = data.plainText { return text }
        // Room for all of `data`, reserved keys too, and both fields.
        var size = data.sizeBound
        if let title { size += 10 + JSON.worstCaseSize(ofStringBytes: title.utf8.count) }
        if let body { size += 9 + JSON.worstCaseSize(ofStringBytes: body.utf8.count) }
        return JSON.text(ofAtMost: size) { start in
            var object = JSONObjectWriter(at: start)
            if keepsEveryKey {
                object.members(of: data)
            } else {
                for (key, value) in data.object where !isReserved(key) && !isAndroidReserved(key) {
                    object.member(key, value)
                }
            }
            if let title { object.member("title", string: title) }
            if let body { object.member("body", string: body) }
            return object.close()
        }
    }

    /// The text of `with(action, message)` for a message whose text `androidMessageText`
    /// wrote (which has no `mobiler_push`): that text with the key spliced in last.
    public static func android(messageText: String, action: NotificationAction) -> String {
        let member = "\"\(reservedKey)\":\"\(action.rawValue)\"}"
        return messageText == "{}" ? "{" + member : messageText.dropLast() + "," + member
    }

    /// APW-4: an Appwrite message as an event. The `data` keys in order, values
    /// exactly as sent; then `notification`'s `title` and `body` unless `data` has
    /// those keys (PAY-3); then `mobiler_push` (PAY-4).
    public static func appwrite(data: JSONObject, notification: JSONObject?, action: NotificationAction) -> JSONObject {
        var event = JSONObject()
        for (key, value) in data where !isReserved(key) {
            event[key] = value
        }
        for key in ["title", "body"] {
            if let value = notification?[key], value != .null { addMissing(key, value, to: &event) }
        }
        event[reservedKey] = .string(action.rawValue)
        return event
    }

    /// PAY-2: keys `RemoteMessage.getData()` leaves out, on every path alike.
    public static func isAndroidReserved(_ key: String) -> Bool {
        switch key.utf8.first {
        case UInt8(ascii: "g"): key.hasPrefix("google.") || key.hasPrefix("gcm.")
        case UInt8(ascii: "f"): key == "from"
        case UInt8(ascii: "c"): key == "collapse_key"
        case UInt8(ascii: "m"): key == "message_type"
        default: false
        }
    }

    /// EV-3: `{"type":"token_refresh","token":…}`, without `mobiler_push`.
    public static func tokenRefresh(_ token: String) -> JSONObject {
        JSONObject([("type", "token_refresh"), ("token", .string(token))])
    }

    /// Marks an already built event with another action (an entry posted from a
    /// `received` message is later `opened`).
    public static func with(_ action: NotificationAction, _ payload: JSONObject) -> JSONObject {
        var event = payload
        event[reservedKey] = nil
        event[reservedKey] = .string(action.rawValue)
        return event
    }

    /// PH-3: an `opened` event for a press of action `action` (with `input`, the text of an
    /// input action): the payload's keys, then `mobiler_action`, `mobiler_input`, and
    /// `mobiler_push` last (PAY-4).
    public static func acted(_ payload: JSONObject, action: String, input: String?) -> JSONObject {
        var event = payload
        event[reservedKey] = nil
        event[actionKey] = nil
        event[inputKey] = nil
        event[actionKey] = .string(action)
        if let input { event[inputKey] = .string(input) }
        event[reservedKey] = .string(NotificationAction.opened.rawValue)
        return event
    }

    private static func addMissing(_ key: String, _ value: JSON?, to event: inout JSONObject) {
        guard let value, !event.contains(key) else { return }
        event[key] = value
    }
}
