import OrderedJSON
import Testing

@testable import ShellKit

/// A report line written from APNs's and FCM's fields is the line the same members make
/// as a JSON object, in the order the front door's reports have (front-door.md), and
/// chaos rules' edits and the log's facts are the same in both forms.
struct ReportTests {
    /// Text that needs each kind of escape, and text that needs none.
    static let texts = [
        "d1", "", #"a "quoted" \ word"#, "line\nbreak\ttab\r\u{08}\u{0C}", "\u{01}\u{1F}\u{7F}", "é → 通知 🔔",
        String(repeating: "long effect text, ", count: 40),
    ]

    /// The reference: the members as an object, in the documented order.
    static func object(_ fields: Report.Fields) -> JSONObject {
        var object = JSONObject([("network", .string(fields.network)), ("status", .integer(Int64(fields.status)))])
        func add(_ key: String, _ value: String?) { if let value { object[key] = .string(value) } }
        add("device", fields.device)
        if let devices = fields.devices {
            object["devices"] = .array(
                devices.map { .object(JSONObject([("device", .string($0.device)), ("result", .string($0.result))])) })
        }
        add("apns-id", fields.apnsID)
        add("name", fields.name)
        add("reason", fields.reason)
        add("error", fields.error)
        add("effect", fields.effect)
        add("tray_id", fields.trayID)
        add("chaos", fields.chaos)
        return object
    }

    static func written(_ report: Report) -> String {
        var output = ByteOutput()
        output.append(utf8Of: "before")
        report.write(to: &output)
        #expect(output.bytes.starts(with: Array("before".utf8)))
        return String(decoding: output.bytes.dropFirst(6), as: UTF8.self)
    }

    /// Every subset of the optional members (a bit each), with texts drawn in turn.
    static func allFields() -> [Report.Fields] {
        var made: [Report.Fields] = []
        var next = 0
        func text() -> String {
            next += 1
            return texts[next % texts.count]
        }
        for mask in 0..<(1 << 9) {
            var fields = Report.Fields(
                network: mask % 2 == 0 ? "apns" : text(), status: [200, 0, 400, -1, 503][mask % 5])
            func has(_ bit: Int) -> Bool { mask & (1 << bit) != 0 }
            if has(0) { fields.device = text() }
            if has(1) { fields.devices = (0..<(mask % 3)).map { _ in (text(), text()) } }
            if has(2) { fields.apnsID = text() }
            if has(3) { fields.name = text() }
            if has(4) { fields.reason = text() }
            if has(5) { fields.error = text() }
            if has(6) { fields.effect = text() }
            if has(7) { fields.trayID = text() }
            if has(8) { fields.chaos = text() }
            made.append(fields)
        }
        return made
    }

    @Test func fieldsAreWrittenAsTheirObjectIs() throws {
        for fields in Self.allFields() {
            let line = Self.written(Report(fields))
            #expect(line == Self.object(fields).compactText)
            // And it reads back as JSON, members in the same order.
            #expect(try JSON.parse(text: line).objectValue?.map(\.key) == Self.object(fields).map(\.key))
        }
    }

    @Test func theFrontDoorsReportsKeepTheirDocumentedOrder() {
        let delivered = Report.Fields(
            network: "apns", status: 200, device: "d1", apnsID: "A-1", effect: "delivered", trayID: "t1")
        #expect(
            Self.written(Report(delivered))
                == #"{"network":"apns","status":200,"device":"d1","apns-id":"A-1","effect":"delivered","tray_id":"t1"}"#
        )
        let refused = Report.Fields(
            network: "apns", status: 400, apnsID: "A-2", reason: "BadDeviceToken", effect: "refused: no app")
        #expect(
            Self.written(Report(refused))
                == #"{"network":"apns","status":400,"apns-id":"A-2","reason":"BadDeviceToken","effect":"refused: no app"}"#
        )
        let topic = Report.Fields(network: "fcm", status: 200, devices: [("d2", "shown")], name: "n", effect: "sent")
        #expect(
            Self.written(Report(topic))
                == #"{"network":"fcm","status":200,"devices":[{"device":"d2","result":"shown"}],"name":"n","effect":"sent"}"#
        )
    }

    @Test func chaosEditsAreTheSameOnFieldsAndOnTheirObject() {
        for fields in Self.allFields() where fields.chaos == nil && (fields.effect != nil || fields.trayID == nil) {
            var typed = Report(fields)
            var object = Report(Self.object(fields))
            #expect(typed.effect == object.effect)
            #expect(typed.network == object.network)
            typed.effect = (typed.effect ?? "") + "; the answer waits 5 ms"
            object.effect = (object.effect ?? "") + "; the answer waits 5 ms"
            typed.mark(chaos: "c1")
            object.mark(chaos: "c1")
            #expect(Self.written(typed) == Self.written(object))
        }
    }

    @Test func theLogKeepsTheSameFactsOfEitherForm() {
        for fields in Self.allFields() {
            var typed = RequestLog.Record { _ in }
            Report(fields).moveFacts(into: &typed)
            var object = RequestLog.Record { _ in }
            Report(Self.object(fields)).moveFacts(into: &object)
            #expect(typed.devices == object.devices)
            #expect(typed.reason == object.reason && typed.error == object.error)
            #expect(typed.effect == object.effect && typed.chaos == object.chaos)
        }
        var record = RequestLog.Record { _ in }
        Report(Report.Fields(network: "fcm", status: 200, devices: [("d2", "a"), ("d3", "b")])).moveFacts(
            into: &record)
        #expect(record.devices == ["d2", "d3"])
    }
}
