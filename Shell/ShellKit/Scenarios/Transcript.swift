import OrderedJSON

/// A readable account of a scenario run: what the core received for each request.
public enum Transcript {
    public static func render(_ run: ScenarioRun, color: Bool) -> String {
        let style = Style(enabled: color)
        var lines: [String] = [style.bold("═══ \(run.scenario.name)")]
        for exchange in run.exchanges {
            for note in exchange.step.notes { lines.append(style.dim("  # \(note)")) }
            lines.append(style.bold("› ") + exchange.step.request)
            let parsed = exchange.output.map { (try? JSON.parse(text: $0)) ?? .null }
            // Report lines (what arrived on its own time, after `await`) are told
            // apart from deliveries and replies.
            for (index, line) in parsed.enumerated() {
                if line["network"] != nil {
                    lines.append("    " + describeReport(line, style))
                } else if index == parsed.count - 1 && line["reply"] != nil {
                    lines.append("    " + describeReply(line, style))
                } else {
                    lines.append("    " + describeDelivery(line, style))
                }
            }
            if let failure = exchange.failure {
                lines.append(style.red("  ✗ " + failure.replacingNewlines(with: "\n    ")))
            }
        }
        for note in run.scenario.trailingNotes { lines.append(style.dim("  # \(note)")) }
        lines.append(run.passed ? style.green("  ✓ as expected") : style.red("  ✗ failed"))
        return lines.joined(separator: "\n")
    }

    static func describeDelivery(_ delivery: JSON, _ style: Style) -> String {
        let key = delivery["delivery"]?.stringValue ?? "?"
        if delivery["end"] == true { return style.cyan("← \(key)") + "  (stream ended)" }
        let output = delivery["output"]?.stringValue ?? ""
        if delivery["ok"] == false { return style.cyan("← \(key)") + style.red("  failed: ") + output }
        return style.cyan("← \(key)") + "  " + output
    }

    static func describeReport(_ report: JSON, _ style: Style) -> String {
        let fields = (report.objectValue ?? JSONObject()).filter { $0.key != "network" }.map { key, value in
            "\(key)=\(value.stringValue ?? value.compactText)"
        }
        return ([style.cyan("⇠ \(report["network"]?.stringValue ?? "?")")] + fields).joined(separator: "  ")
    }

    static func describeReply(_ reply: JSON, _ style: Style) -> String {
        guard let object = reply.objectValue else { return style.red("= (not JSON)") }
        let fields = object.filter { $0.key != "reply" && $0.key != "ok" }.map { key, value in
            "\(key)=\(value.stringValue ?? value.compactText)"
        }
        let verdict = reply["ok"] == true ? style.green("= ok") : style.red("= refused")
        return ([verdict] + fields).joined(separator: "  ")
    }

    struct Style {
        let enabled: Bool
        func wrap(_ text: String, _ code: String) -> String { enabled ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
        func bold(_ text: String) -> String { wrap(text, "1") }
        func dim(_ text: String) -> String { wrap(text, "2") }
        func red(_ text: String) -> String { wrap(text, "31") }
        func green(_ text: String) -> String { wrap(text, "32") }
        func cyan(_ text: String) -> String { wrap(text, "36") }
    }
}

extension String {
    func replacingNewlines(with replacement: String) -> String {
        split(separator: "\n", omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
