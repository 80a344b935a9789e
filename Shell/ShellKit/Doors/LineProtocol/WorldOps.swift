import OrderedJSON

/// The ops on the world's conditions (chaos.md): faults on demand, its clock, and a
/// device's network.
extension LineProtocol {
    /// `{"op":"chaos","rule":{…}}` adds a rule (the reply's `rule` has its id),
    /// `{"op":"chaos","remove":"c1"}` (or `"all"`) removes, `{"op":"chaos"}` lists.
    func chaos(_ request: Request, _ reply: inout JSONObject) throws {
        if let rule = request.fields["rule"] {
            guard let object = rule.objectValue else { throw request.invalid("\"rule\" must be an object") }
            do {
                reply["rule"] = .object(try world.addChaosRule(object))
            } catch {
                throw request.invalid(error.message)
            }
        } else if let id = try request.optionalString("remove") {
            guard world.removeChaosRule(id) else {
                let known = world.chaos.rules.map(\.id).joined(separator: ", ")
                throw request.invalid(
                    "there is no chaos rule '\(id)'; the rules are: \(known.isEmpty ? "none" : known)")
            }
            reply["removed"] = .string(id)
        }
        reply["rules"] = .array(world.chaos.listed)
    }

    /// `{"op":"reset"}` makes the world as new; `"keep":["credentials",…]` keeps the parts
    /// named (WorldPart). The reply's `cleared` says how many things went from each part.
    func reset(_ request: Request, _ reply: inout JSONObject) throws {
        let keep: Set<WorldPart>
        switch World.parts(request.fields["keep"]) {
        case .failure(let refusal): throw request.invalid(refusal.description)
        case .success(let parts): keep = parts
        }
        let kept = WorldPart.allCases.filter(keep.contains).map(\.rawValue)
        reply["cleared"] = .object(world.reset(keeping: keep))
        reply["kept"] = .array(kept.map(JSON.string))
        reply["effect"] = .string(
            "the world is as new" + (kept.isEmpty ? "" : ", but for its \(kept.joined(separator: ", "))"))
    }

    /// `{"op":"clock"}` reads the world's clock; `advance_ms` (≥ 0) lets time pass at once.
    func clock(_ request: Request, _ reply: inout JSONObject) throws {
        if let value = request.fields["advance_ms"] {
            guard case .number(let number) = value, let milliseconds = Int64(number.text), milliseconds >= 0,
                milliseconds <= 100 * 365 * 24 * 3600 * 1000
            else {
                throw request.invalid("\"advance_ms\" must be a whole number of milliseconds from 0 to 100 years")
            }
            world.advance(by: milliseconds)
            // Appwrite's JWTs run out on the world's clock (APW-13).
            appwrite.expireCredentials()
            // Dozing phones' maintenance windows open on it (PH-9).
            // And throttled background pushes find a free slot (PH-11).
            let opened = fcm.windowsOpened() + apns.budgetFreed()
            if !opened.isEmpty { reply["effect"] = .string(opened.joined(separator: "; ")) }
        }
        let now = world.clock()
        reply["now"] = .string(RequestLog.timestamp(now))
        reply["now_ms"] = .integer(now)
        reply["advanced_ms"] = .integer(world.advancedMilliseconds)
    }

    /// `{"op":"idle","on":true}` (Android, PH-9): the phone dozes; normal-priority FCM
    /// messages wait for a maintenance window or its end.
    func idle(_ request: Request, _ reply: inout JSONObject) throws {
        let device = try target(request)
        let on = try request.bool("on")
        let was = device.dozeSince != nil
        try device.setIdle(on, nowMilliseconds: world.clock())
        reply["device"] = .string(device.id)
        reply["idle"] = .bool(on)
        if on {
            reply["effect"] = .string(
                was
                    ? "\(device.id) was already in Doze"
                    : "\(device.id) is in Doze: normal-priority FCM messages wait for a maintenance window (15 minutes in, then 30 minutes later, then every 60) or its end"
            )
        } else {
            reply["effect"] = .string(
                "\(device.id) is awake; " + (fcm.deliverDozeHeld(to: device, woke: true) ?? "nothing was held for it"))
        }
    }

    /// `{"op":"focus","on":true}` (iOS, PH-8): only time-sensitive and critical alerts the
    /// app may send are presented as banners; the rest go quietly to the tray.
    func focus(_ request: Request, _ reply: inout JSONObject) throws {
        let device = try target(request)
        let on = try request.bool("on")
        try device.setFocus(on)
        reply["device"] = .string(device.id)
        reply["focus"] = .bool(on)
        let through = device.options.capabilities.map {
            $0 == "critical-alerts" ? "critical alerts" : "time-sensitive alerts"
        }
        let what =
            through.isEmpty
            ? "nothing of this app (it has neither Time Sensitive nor Critical Alerts)"
            : through.joined(separator: " and ") + " of this app"
        reply["effect"] = .string(
            on
                ? "\(device.id) is in a Focus: only \(what) break through as banners; the rest go quietly to the tray"
                : "\(device.id)'s Focus is off: alerts are presented as banners again, passive ones still quietly")
    }

    /// `{"op":"low_power","on":true}` (iOS, PH-10): pushes of priority 5 are held until it
    /// is off again, and then handed over.
    func lowPower(_ request: Request, _ reply: inout JSONObject) throws {
        let device = try target(request)
        let on = try request.bool("on")
        let was = device.isLowPower
        try device.setLowPower(on)
        reply["device"] = .string(device.id)
        reply["low_power"] = .bool(on)
        if on {
            reply["effect"] = .string(
                was
                    ? "\(device.id) was already in Low Power Mode"
                    : "\(device.id) is in Low Power Mode: iOS holds priority-5 and background pushes until it ends")
        } else {
            let held = apns.deliverHeld(to: device)
            reply["effect"] = .string(
                "\(device.id) is out of Low Power Mode; " + (held ?? "iOS held nothing for it"))
        }
    }

    /// `{"op":"network","online":false}` takes the device off the network, as flight mode
    /// does; `true` brings it back, and the services deliver what they kept.
    func network(_ request: Request, _ reply: inout JSONObject) throws {
        let device = try target(request)
        let online = try request.bool("online")
        let wasOnline = device.isOnline
        let offlineSince = device.offlineSince
        device.setNetwork(online: online, nowMilliseconds: world.clock())
        reply["device"] = .string(device.id)
        reply["online"] = .bool(online)
        if !online {
            reply["effect"] = .string(
                wasOnline
                    ? "\(device.id) is offline: nothing reaches it, and the services keep what they would keep"
                    : "\(device.id) was already offline")
            return
        }
        guard !wasOnline else {
            reply["effect"] = .string("\(device.id) was already online")
            return
        }
        var kept = [
            apns.deliverStored(to: device), fcm.deliverStored(to: device), fcm.deliverDozeHeld(to: device, woke: false),
        ].compactMap { $0 }
        // PH-12: an FCM token unseen for 270 days expired; back online, the app gets a new one.
        if let since = offlineSince, FCMService.hasExpired(device, offlineSince: since, now: world.clock()),
            let token = try? device.rotateToken(nowMilliseconds: world.clock())
        {
            kept.append(
                "its FCM token had expired (offline for 270 days or more): the app received a new one, \(token) (PH-12)"
            )
            reply["token"] = .string(token)
        }
        reply["effect"] = .string(
            "\(device.id) is back online; " + (kept.isEmpty ? "nothing was kept for it" : kept.joined(separator: "; ")))
    }
}
