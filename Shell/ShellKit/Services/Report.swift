import OrderedJSON

/// A network request's report line, `{"network":…}`, written on standard output after the
/// request's deliveries (front-door.md), and the facts the log keeps of it.
///
/// APNs and FCM give theirs as `Fields`, written straight as bytes, their member names as
/// literals: built as an object, written member by member and read back for the log, a
/// push's report cost ~3,500 instructions more (callgrind, side by side). Every other
/// answer gives a `JSONObject`, members in its own order. Chaos rules edit either the same way.
struct Report {
    /// The members a push service reports, written in this order, each only when it has
    /// a value (`network` and `status` always): the order APNs's and FCM's report lines
    /// and transcripts have, refusals and chaos rules' answers included.
    struct Fields {
        var network: String
        var status: Int
        var device: String? = nil
        /// What each device of a topic or condition send became (FCM).
        var devices: [(device: String, result: String)]? = nil
        /// APNs's id for the push (`apns-id`).
        var apnsID: String? = nil
        /// FCM's name for the message (`projects/…/messages/…`).
        var name: String? = nil
        var reason: String? = nil
        var error: String? = nil
        var effect: String? = nil
        var trayID: String? = nil
        var chaos: String? = nil
    }

    private enum Form {
        case fields(Fields)
        case object(JSONObject)
    }

    private var form: Form

    init(_ fields: Fields) { form = .fields(fields) }
    init(_ object: JSONObject) { form = .object(object) }

    /// The service that answered (`"network"`): the log's source.
    var network: String? {
        switch form {
        case .fields(let fields): fields.network
        case .object(let object): object["network"]?.stringValue
        }
    }

    /// What the request did (`"effect"`). Set, it keeps its place in the order, or goes
    /// last in an object that had none.
    var effect: String? {
        get {
            switch form {
            case .fields(let fields): fields.effect
            case .object(let object): object["effect"]?.stringValue
            }
        }
        set {
            switch form {
            case .fields(var fields):
                fields.effect = newValue
                form = .fields(fields)
            case .object(var object):
                object["effect"] = newValue.map(JSON.string) ?? .null
                form = .object(object)
            }
        }
    }

    /// Names the chaos rule that met the request, last (`"chaos"`).
    mutating func mark(chaos rule: String) {
        switch form {
        case .fields(var fields):
            fields.chaos = rule
            form = .fields(fields)
        case .object(var object):
            object["chaos"] = .string(rule)
            form = .object(object)
        }
    }

    /// Appends the report's compact JSON, with no newline.
    func write(to output: inout ByteOutput) {
        switch form {
        case .object(let object): object.write(to: &output)
        case .fields(let fields): Self.write(fields, to: &output)
        }
    }

    private static func write(_ fields: Fields, to output: inout ByteOutput) {
        output.append(#"{"network":"#)
        output.appendJSONString(fields.network)
        output.append(#","status":"#)
        output.appendDecimal(Int64(fields.status))
        if let device = fields.device {
            output.append(#","device":"#)
            output.appendJSONString(device)
        }
        if let devices = fields.devices {
            output.append(#","devices":["#)
            for (index, entry) in devices.enumerated() {
                output.append(index == 0 ? #"{"device":"# : #",{"device":"#)
                output.appendJSONString(entry.device)
                output.append(#","result":"#)
                output.appendJSONString(entry.result)
                output.append(UInt8(ascii: "}"))
            }
            output.append(UInt8(ascii: "]"))
        }
        member(#","apns-id":"#, fields.apnsID, to: &output)
        member(#","name":"#, fields.name, to: &output)
        member(#","reason":"#, fields.reason, to: &output)
        member(#","error":"#, fields.error, to: &output)
        member(#","effect":"#, fields.effect, to: &output)
        member(#","tray_id":"#, fields.trayID, to: &output)
        member(#","chaos":"#, fields.chaos, to: &output)
        output.append(UInt8(ascii: "}"))
    }

    @inline(__always)
    private static func member(_ key: StaticString, _ value: String?, to output: inout ByteOutput) {
        guard let value else { return }
        output.append(key)
        output.appendJSONString(value)
    }

    /// Moves the report's facts a log entry keeps into `record`: the devices it reached,
    /// its reason, error, effect and chaos rule. The report is written by then; copied
    /// rather than moved, its strings cost a retain and a release each.
    consuming func moveFacts(into record: inout RequestLog.Record) {
        let form = (consume self).form
        switch consume form {
        case .fields(var fields):
            if let device = fields.device.take() {
                record.touched(device)
            } else if let devices = fields.devices.take() {
                record.devices = devices.map(\.device)
            }
            record.reason = fields.reason.take()
            record.error = fields.error.take()
            record.effect = fields.effect.take()
            record.chaos = fields.chaos.take()
        case .object(let object):
            // One pass over the members, where a lookup each would pass six times; a
            // key's first byte turns away most members before any text is compared.
            for (key, value) in object {
                switch key.utf8.first {
                case UInt8(ascii: "d"), UInt8(ascii: "r"), UInt8(ascii: "e"), UInt8(ascii: "c"): break
                default: continue
                }
                switch key {
                case "device": value.stringValue.map { record.touched($0) }
                case "devices" where object["device"]?.stringValue == nil:
                    record.devices = value.arrayValue?.compactMap { $0["device"]?.stringValue } ?? []
                case "reason": record.reason = value.stringValue
                case "error": record.error = value.stringValue
                case "effect": record.effect = value.stringValue
                case "chaos": record.chaos = value.stringValue
                default: break
                }
            }
        }
    }
}
