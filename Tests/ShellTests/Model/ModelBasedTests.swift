import Foundation
import OrderedJSON
import ShellKit
import Testing

@testable import SimulatedDevice

/// Seeded random sequences of shell requests, played on the reference model and on
/// a real `Session` side by side. After every step the replies, the deliveries and
/// the device's `state` must agree; a disagreement is shrunk to a minimal sequence
/// and printed as request lines, ready to paste into `cxshell serve`.
///
/// `make test` plays `MODEL_SEQUENCES` (default 300); `make soak` plays
/// `SOAK_SEQUENCES` of them.
@Suite struct ModelBasedTests {
    static var sequenceCount: Int {
        let environment = ProcessInfo.processInfo.environment
        return Int(environment["SOAK_SEQUENCES"] ?? environment["MODEL_SEQUENCES"] ?? "") ?? 300
    }

    @Test func theProductAgreesWithTheModelOnRandomSequences() {
        var failures = 0
        for seed in 0..<UInt64(Self.sequenceCount) {
            var random = IDGenerator(seed: 0xC0FFEE &+ seed)
            let platform = ContractModel.Platform.allCases[Int(seed % 2)]
            let steps = Self.generate(platform: platform, using: &random)
            guard let failure = Self.play(steps, platform: platform) else { continue }
            let minimal = Self.shrink(steps, platform: platform)
            let lines = Self.requestLines(minimal, platform: platform).joined(separator: "\n")
            Issue.record(
                """
                seed \(seed): \(failure)
                minimal sequence (\(minimal.count) of \(steps.count) steps), as request lines:
                \(lines)
                its disagreement: \(Self.play(minimal, platform: platform) ?? "none")
                """)
            failures += 1
            if failures == 3 { return }
        }
    }

    /// The model itself must be able to fail: a deliberately wrong model (TAP-3 with a
    /// bound of 31) is caught on the seeds that reach the bound.
    @Test func aWrongModelIsCaught() {
        let steps: [ContractModel.Step] =
            [.launch, .register]
            + (0..<33).flatMap { _ in [ContractModel.Step.apns(.alert, collapse: nil), .tap("newest")] }
        #expect(Self.play(steps, platform: .ios) == nil)
        #expect(Self.play(steps, platform: .ios, tapBound: 31) != nil)
    }

    // MARK: Generating

    static func generate(platform: ContractModel.Platform, using random: inout IDGenerator) -> [ContractModel.Step] {
        var steps: [ContractModel.Step] = [.launch]
        let length = Int.random(in: 10...45, using: &random)
        let keys = ["a", "b"]
        while steps.count < length {
            let roll = Int.random(in: 0..<118, using: &random)
            switch roll {
            case 0..<6: steps.append(.launch)
            case 6..<11: steps.append(.background)
            case 11..<14: steps.append(.foreground)
            case 14..<19: steps.append(.kill)
            case 19..<21: steps.append(.forceStop)
            case 21..<24: steps.append(.permission(grant: Bool.random(using: &random)))
            case 24..<32: steps.append(.register)
            case 32..<41: steps.append(.subscribe(keys.randomElement(using: &random)!))
            case 41..<45: steps.append(.unsubscribe(keys.randomElement(using: &random)!))
            case 45..<65:
                let collapse =
                    Int.random(in: 0..<4, using: &random) == 0 ? "c\(Int.random(in: 0..<2, using: &random))" : nil
                if platform == .ios {
                    steps.append(
                        .apns(ContractModel.APNsKind.allCases.randomElement(using: &random)!, collapse: collapse))
                } else {
                    steps.append(.fcm(ContractModel.FCMKind.allCases.randomElement(using: &random)!, tag: collapse))
                }
            case 65..<80:
                steps.append(.tap(["newest", "oldest", "t1", "t2", "t99"].randomElement(using: &random)!))
            case 80..<87: steps.append(.rotate)
            case 87..<90: steps.append(.tray)
            case 90..<92:
                // The 32-tap bound: more taps than the buffer holds, with no subscriber.
                steps += [.permission(grant: true), .launch, .register, .kill]
                for _ in 0..<Int.random(in: 30...40, using: &random) {
                    steps += [
                        platform == .ios ? .apns(.alert, collapse: nil) : .fcm(.notification, tag: nil), .tap("newest"),
                    ]
                    steps.append(.background)
                }
            case 100..<104:
                // PH-1 … PH-3: a category declared, a push naming it, the app left in some
                // state, one of its buttons pressed.
                steps.append(.declare)
                steps.append(platform == .ios ? .apns(.categorized, collapse: nil) : .fcm(.dataCategorized, tag: nil))
                steps.append([.kill, .background, .launch, .tray].randomElement(using: &random)!)
                let action = ["accept", "reply", "decline", "later"].randomElement(using: &random)!
                steps.append(.act("newest", action: action))
            case 104..<110:
                let which = ["newest", "oldest", "t1", "t99"].randomElement(using: &random)!
                let action = ["accept", "reply", "decline", "later", "nope"].randomElement(using: &random)!
                steps.append(.act(which, action: action))
            case 110..<112: steps.append(.dismiss(["newest", "oldest", "t2", "t99"].randomElement(using: &random)!))
            case 112..<114:
                // PH-9: data messages held in Doze until a window or its end.
                steps.append(.idle(true))
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    steps.append(
                        platform == .ios
                            ? .apns(.alert, collapse: nil)
                            : .fcm(ContractModel.FCMKind.allCases.randomElement(using: &random)!, tag: nil))
                }
                steps.append(
                    Bool.random(using: &random)
                        ? .clock(minutes: [14, 15, 45].randomElement(using: &random)!) : .idle(false))
            case 114..<116: steps.append(.clock(minutes: [1, 14, 15, 30, 60].randomElement(using: &random)!))
            case 116..<118:
                // PH-12: months in flight mode; from 270 days an Android token has expired.
                let days = [100, 269, 270, 400].randomElement(using: &random)!
                if platform == .android, Bool.random(using: &random) {
                    steps += [.idle(true), .fcm(.data, tag: nil)]  // held, and due while the phone is away
                }
                steps += [.network(false), .clock(minutes: days * 1440), .network(true)]
            default: steps.append(Bool.random(using: &random) ? .launch : .background)
            }
        }
        return steps
    }

    // MARK: Playing

    /// Plays `steps` on both; the first disagreement, or nil.
    static func play(_ steps: [ContractModel.Step], platform: ContractModel.Platform, tapBound: Int = 32) -> String? {
        let session = Session(clock: { 1_700_000_000_000 })
        _ = session.handle(#"{"op":"device","platform":"\#(platform.rawValue)"}"#)
        var model = ContractModel(platform: platform, token: session.deviceToken ?? "")
        model.tapBound = tapBound
        for (index, step) in steps.enumerated() {
            let line = model.line(for: step, n: index)
            let output = session.handle(line)
            let where_ = "step \(index) \(line)"
            guard let reply = output.last.flatMap({ try? JSON.parse(text: $0).objectValue }) else {
                return "\(where_): no reply"
            }
            let expected = model.apply(step, n: index, reply: reply)
            if let disagreement = disagreement(output, reply, expected, device: nil, step: step, at: where_) {
                return disagreement
            }
            guard let stateText = session.handle(#"{"op":"state"}"#).last,
                let state = try? JSON.parse(text: stateText).objectValue
            else { return "\(where_): no state" }
            for (name, value) in model.stateFields where state[name] != value {
                return
                    "after \(where_): state \(name) is \(state[name]?.compactText ?? "missing"), the model says \(value.compactText)"
            }
        }
        return nil
    }

    /// How a request's output differs from what the model expected, or nil: its `ok`,
    /// its deliveries (from `device`, when given, and on the model's keys, in order),
    /// the reply fields the model predicts, and no tray entry the model did not post.
    static func disagreement(
        _ output: [String], _ reply: JSONObject, _ expected: ContractModel.Outcome, device: String?,
        step: ContractModel.Step, at place: String
    ) -> String? {
        if reply["ok"] != .bool(expected.ok) {
            return
                "\(place): ok is \(reply["ok"]?.compactText ?? "missing"), the model says \(expected.ok)\n  reply \(reply.compactText)"
        }
        let deliveries = output.dropLast().compactMap { line -> String? in
            guard let object = try? JSON.parse(text: line).objectValue else { return nil }
            let from = device == nil ? "" : "\(object["device"]?.stringValue ?? "?") "
            return from + "\(object["delivery"]?.stringValue ?? "?") \(object["output"]?.stringValue ?? "<end>")"
        }
        let wanted = expected.deliveries.map { (device.map { $0 + " " } ?? "") + "\($0.0) \($0.1)" }
        if deliveries != wanted { return "\(place): delivered \(deliveries), the model says \(wanted)" }
        guard expected.ok else { return nil }
        for (name, value) in expected.fields where reply[name] != value {
            return "\(place): \(name) is \(reply[name]?.compactText ?? "missing"), the model says \(value.compactText)"
        }
        switch step {
        case .apns, .fcm:
            if let posted = reply["tray_id"], expected.fields["tray_id"] == nil {
                return "\(place): posted \(posted.compactText), the model says nothing is posted"
            }
        default: break
        }
        return nil
    }

    /// Removes steps while the sequence still fails: first halves, then single steps.
    static func shrink(_ steps: [ContractModel.Step], platform: ContractModel.Platform) -> [ContractModel.Step] {
        var current = steps
        var chunk = max(1, current.count / 2)
        while chunk >= 1 {
            var start = 0
            var removedAny = false
            while start < current.count {
                var candidate = current
                candidate.removeSubrange(start..<min(start + chunk, candidate.count))
                if play(candidate, platform: platform) != nil {
                    current = candidate
                    removedAny = true
                } else {
                    start += chunk
                }
            }
            if !removedAny { chunk /= 2 }
        }
        return current
    }

    /// The sequence as `cxshell serve` lines (the device first; tokens as the model
    /// knew them while playing).
    static func requestLines(_ steps: [ContractModel.Step], platform: ContractModel.Platform) -> [String] {
        let session = Session(clock: { 1_700_000_000_000 })
        var lines = [#"{"op":"device","platform":"\#(platform.rawValue)"}"#]
        _ = session.handle(lines[0])
        var model = ContractModel(platform: platform, token: session.deviceToken ?? "")
        for (index, step) in steps.enumerated() {
            let line = model.line(for: step, n: index)
            lines.append(line)
            let reply = session.handle(line).last.flatMap { try? JSON.parse(text: $0).objectValue } ?? JSONObject()
            _ = model.apply(step, n: index, reply: reply)
        }
        return lines
    }

    // MARK: A world of devices

    /// Steps for several devices at once: each step acts on one device (named), and
    /// every push is addressed by its token while naming another device.
    struct WorldStep: Sendable {
        let device: Int
        let step: ContractModel.Step
        let pushFrom: Int
    }

    @Test func theWorldAgreesWithTheModelDeviceByDevice() {
        var failures = 0
        for seed in 0..<UInt64(max(Self.sequenceCount / 3, 1)) {
            var random = IDGenerator(seed: 0xD1CE &+ seed)
            let platforms = (0..<Int.random(in: 2...3, using: &random)).map { _ in
                ContractModel.Platform.allCases.randomElement(using: &random)!
            }
            let steps = Self.generateWorld(platforms: platforms, using: &random)
            guard let failure = Self.playWorld(steps, platforms: platforms) else { continue }
            var minimal = steps
            var index = minimal.count - 1
            while index >= 0 {  // drop single steps while it still fails
                var candidate = minimal
                candidate.remove(at: index)
                if Self.playWorld(candidate, platforms: platforms) != nil { minimal = candidate }
                index -= 1
            }
            Issue.record(
                """
                world seed \(seed) \(platforms): \(failure)
                minimal (\(minimal.count) of \(steps.count) steps): \(minimal.map { "d\($0.device + 1) \($0.step)" })
                its disagreement: \(Self.playWorld(minimal, platforms: platforms) ?? "none")
                """)
            failures += 1
            if failures == 3 { return }
        }
    }

    static func generateWorld(platforms: [ContractModel.Platform], using random: inout IDGenerator) -> [WorldStep] {
        var steps: [WorldStep] = []
        for device in platforms.indices { steps.append(WorldStep(device: device, step: .launch, pushFrom: device)) }
        let length = Int.random(in: 15...60, using: &random)
        while steps.count < length {
            let device = Int.random(in: 0..<platforms.count, using: &random)
            let from = Int.random(in: 0..<platforms.count, using: &random)
            var one = generate(platform: platforms[device], using: &random)
            one.removeFirst()  // the leading launch
            let roll = Int.random(in: 0..<100, using: &random)
            if roll < 4 {
                steps.append(WorldStep(device: device, step: .uninstall, pushFrom: from))
            } else if roll < 8 {
                steps.append(WorldStep(device: device, step: .install, pushFrom: from))
            } else if let step = one.first {
                // The clock is the world's and Doze waits on it: both are one device's
                // matter, played by the single-device sequences.
                if case .clock = step { continue }
                if case .idle = step { continue }
                if case .network = step { continue }
                steps.append(WorldStep(device: device, step: step, pushFrom: from))
            }
        }
        return steps
    }

    /// Plays a world's steps on one model per device and on one real session.
    static func playWorld(_ steps: [WorldStep], platforms: [ContractModel.Platform]) -> String? {
        let session = Session(clock: { 1_700_000_000_000 })
        var models: [ContractModel] = []
        for (index, platform) in platforms.enumerated() {
            _ = session.handle(#"{"op":"device","platform":"\#(platform.rawValue)"}"#)
            let token = session.deviceToken ?? ""
            models.append(ContractModel(platform: platform, token: token))
            _ = index
        }
        for (index, world) in steps.enumerated() {
            let name = "d\(world.device + 1)"
            let line = models[world.device].line(
                for: world.step, n: index, device: name, pushFrom: "d\(world.pushFrom + 1)")
            let output = session.handle(line)
            let where_ = "step \(index) \(line)"
            guard let reply = output.last.flatMap({ try? JSON.parse(text: $0).objectValue }) else {
                return "\(where_): no reply"
            }
            let expected = models[world.device].apply(world.step, n: index, reply: reply)
            if let disagreement = disagreement(output, reply, expected, device: name, step: world.step, at: where_) {
                return disagreement
            }
            for device in models.indices {
                let stateName = "d\(device + 1)"
                guard let stateText = session.handle(#"{"op":"state","device":"\#(stateName)"}"#).last,
                    let state = try? JSON.parse(text: stateText).objectValue
                else { return "\(where_): no state for \(stateName)" }
                if models[device].awaitsIssuedToken, let token = state["token"]?.stringValue {
                    models[device].osToken = token  // the OS issued it; its value is the OS's
                    models[device].awaitsIssuedToken = false
                }
                var fields = models[device].stateFields
                fields["installed"] = .bool(models[device].installed)
                for (field, value) in fields where state[field] != value {
                    return
                        "after \(where_): \(stateName)'s \(field) is \(state[field]?.compactText ?? "missing"), the model says \(value.compactText)"
                }
            }
        }
        return nil
    }
}
