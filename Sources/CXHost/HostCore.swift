import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The shared engine behind `Host`, `Reply` and `StreamEmitter`.
final class HostCore: Sendable {
    let monitor = Monitor(HostState())
    let hooks = Monitor(HostHooks())
    let handler: @Sendable (Delivery) -> Void
    let deliveryQueue: DispatchQueue
    /// Whether a thread waiting in `waitUntilIdle` makes the deliveries itself when
    /// no delivery is running, instead of waiting for the delivery thread to wake.
    let drainsOnWaitingThread: Bool
    /// The index in `HostState.inFlight` of the delivery in the core's hands (or about
    /// to be), -1 for none; written by the draining thread outside the lock, read under
    /// it by a thread waiting out a delivery on a key.
    let inHandler = Atomic<Int>(-1)
    /// Threads in `waitOutDelivery`: the drain wakes them after each delivery it made.
    let deliveryWaiters = Atomic<Int>(0)

    init(
        label: String, drainsOnWaitingThread: Bool, target: DispatchQueue? = nil,
        handler: @escaping @Sendable (Delivery) -> Void
    ) {
        self.handler = handler
        self.drainsOnWaitingThread = drainsOnWaitingThread
        deliveryQueue = DispatchQueue(label: label, target: target)
    }

    // MARK: Requests

    func register(_ plugin: any Plugin) throws(HostError) {
        let descriptor = plugin.descriptor
        try monitor.withLock { state throws(HostError) in
            guard !state.isShutDown else { throw .shutDown }
            guard state.plugins[descriptor.name] == nil else { throw .duplicatePlugin(descriptor.name) }
            state.plugins[descriptor.name] = plugin
            state.descriptors[descriptor.name] = descriptor
        }
    }

    func call(
        plugin name: String, op: String, input: String, isNotify: Bool, chosenID: CallID? = nil
    ) throws(HostError) -> CallID {
        let (ticket, plugin, problem) = try monitor.withLock {
            state throws(HostError) -> (HostState.Ticket, (any Plugin)?, String?) in
            let ticket: HostState.Ticket
            if isNotify {
                ticket = .notify(state.nextNotifyID)
                state.nextNotifyID &+= 1
            } else if let chosenID {
                guard state.pendingCalls[.call(chosenID)] == nil else { throw .duplicateCallID(chosenID) }
                ticket = .call(chosenID)
            } else {
                while state.pendingCalls[.call(CallID(rawValue: state.nextCallID))] != nil { state.nextCallID &+= 1 }
                ticket = .call(CallID(rawValue: state.nextCallID))
                state.nextCallID &+= 1
            }
            guard !state.isShutDown else {
                // H-1, H-8: answered like the calls pending at shutdown, never dispatched.
                let message = "the host was shut down; plugin '\(name)' was not asked to '\(op)'"
                if case .call(let id) = ticket {
                    wake(if: state.enqueue(.response(id, .failure(message)), afterShutdown: true))
                }
                return (ticket, nil, nil)
            }
            state.pendingCalls[ticket] = .init(plugin: name, op: op)
            if let problem = state.unknownOpMessage(plugin: name, op: op) { return (ticket, nil, problem) }
            state.beginInvocation()
            return (ticket, state.plugins[name], nil)
        }
        let id: CallID
        switch ticket {
        case .call(let callID): id = callID
        case .notify: id = CallID(rawValue: 0)
        }
        guard let plugin else {
            if let problem { answer(ticket, with: .failure(problem)) }
            return id
        }
        let reply = Reply(core: self, ticket: ticket, plugin: name, op: op)
        do {
            try plugin.call(op, input: input, reply: reply)
        } catch {
            // Before `reply` can go away unanswered and say "dropped" instead.
            reply.fail("plugin '\(name)' failed on '\(op)': \(error)")
        }
        finishInvocation()
        return id
    }

    func subscribe(key: String, plugin name: String, stream: String, input: String) throws(HostError) {
        let (replaced, stopReplacedNow, started) = try monitor.withLock {
            state throws(HostError) -> (HostState.ActiveStream?, Bool, (HostState.ActiveStream, String)?) in
            guard !state.isShutDown else { throw .shutDown }
            let replaced = state.deactivate(key)
            let stopReplacedNow = replaced.map { state.stopNowOrWhenStarted($0) } ?? false
            let subscription = state.hold(key)
            if let problem = state.unknownStreamMessage(plugin: name, stream: stream) {
                wake(if: state.enqueue(.item(key: key, .failure(problem)), from: subscription))
                wake(if: state.enqueue(.end(key: key), from: subscription))
                if replaced != nil { state.beginInvocation() }
                return (replaced, stopReplacedNow, nil)
            }
            let emitter = StreamEmitter(core: self, key: key, subscription: subscription)
            let active = HostState.ActiveStream(plugin: state.plugins[name]!, emitter: emitter)
            state.activate(active)
            state.starting.insert(ObjectIdentifier(emitter))
            state.beginInvocation()
            return (replaced, stopReplacedNow, (active, stream))
        }
        // H-4: the old stream is stopped, and a delivery of it that is in the core's
        // hands right now is waited out, before the new one starts.
        if let replaced {
            if stopReplacedNow { replaced.plugin.stopStream(replaced.emitter) }
            waitOutDelivery(on: key)
            if started == nil { finishInvocation() }
        }
        guard let (active, stream) = started else { return }
        hooks.withLock { $0.beforeStartStream }?(key)
        do {
            try active.plugin.startStream(stream, input: input, emitter: active.emitter)
        } catch {
            active.emitter.emit(.failure("plugin '\(name)' failed to start '\(stream)': \(error)"))
            active.emitter.end()
        }
        hooks.withLock { $0.afterStartStream }?(key)
        // The core may have ended the stream while it started: the stop comes now.
        if monitor.withLock({ $0.finishStarting(active.emitter) }) { active.plugin.stopStream(active.emitter) }
        finishInvocation()
    }

    /// Returns whether the key had a stream (active, or ended but not yet delivered).
    @discardableResult
    func unsubscribe(key: String) -> Bool {
        let (stopped, stopNow, existed) = monitor.withLock { state -> (HostState.ActiveStream?, Bool, Bool) in
            let existed = state.release(key)
            guard let active = state.deactivate(key) else { return (nil, false, existed) }
            state.beginInvocation()
            return (active, state.stopNowOrWhenStarted(active), true)
        }
        waitOutDelivery(on: key)
        if let stopped {
            if stopNow { stopped.plugin.stopStream(stopped.emitter) }
            finishInvocation()
        }
        return existed
    }

    /// "After unsubscribe returns, nothing is delivered" (H-4): a delivery on `key` may
    /// be in the core's hands on the delivery thread right now; wait it out (unless
    /// this is that thread).
    private func waitOutDelivery(on key: String) {
        hooks.withLock { $0.beforeWaitingOutDelivery }?(key)
        monitor.withLock { $0.waiters += 1 }
        deliveryWaiters.add(1, ordering: .sequentiallyConsistent)
        monitor.wait(
            until: { state in
                state.isOnDeliveryThread
                    || !state.isInHandler(key, at: inHandler.load(ordering: .sequentiallyConsistent))
            }, then: { $0.waiters -= 1 })
        deliveryWaiters.subtract(1, ordering: .sequentiallyConsistent)
    }

    func shutdown() throws(HostError) {
        let stopping = try monitor.withLock {
            state throws(HostError) -> (streams: [HostState.ActiveStream], plugins: [any Plugin])? in
            if state.isOnInvokingThread { throw .inPlugin("shutdown") }
            guard !state.isShutDown else { return nil }
            state.isShutDown = true
            let calls = state.pendingCalls.compactMap { ticket, pending -> (CallID, HostState.PendingCall)? in
                if case .call(let id) = ticket { (id, pending) } else { nil }
            }
            for (id, pending) in calls.sorted(by: { $0.0.rawValue < $1.0.rawValue }) {
                let message = "the host was shut down before plugin '\(pending.plugin)' answered '\(pending.op)'"
                wake(if: state.enqueue(.response(id, .failure(message))))
            }
            state.pendingCalls.removeAll()
            let streams = state.deactivateAll().filter { state.stopNowOrWhenStarted($0) }
            state.releaseAll()
            state.beginInvocation()
            // Nothing is dispatched after shutdown; dropping the registry also breaks the
            // cycle host → plugin → retained emitter or reply → host.
            let plugins = Array(state.plugins.values)
            state.plugins.removeAll()
            return (streams, plugins)
        }
        if let stopping {
            for stream in stopping.streams { stream.plugin.stopStream(stream.emitter) }
            for plugin in stopping.plugins { plugin.hostDidShutDown() }
            finishInvocation()
        }
        // H-8: the final answers are delivered, then nothing more. From inside the
        // handler the drain is ours to finish, so the close happens when it ends.
        let onDeliveryThread = monitor.withLock { $0.isOnDeliveryThread }
        if onDeliveryThread {
            monitor.withLock { $0.closeWhenDrained = true }
            return
        }
        try waitUntilIdle()
        monitor.withLock { $0.isClosed = true }
    }

    /// The keys the core holds, oldest subscription first (generations only grow).
    var subscribedKeys: [String] {
        monitor.withLock { state in
            state.heldKeys.sorted { $0.value.generation < $1.value.generation }.map(\.key)
        }
    }

    func waitUntilIdle() throws(HostError) {
        // Most waits are a few microseconds (one request's deliveries). Checking a few
        // times before sleeping saves the futex sleep and wake-up, which costs more
        // than the wait itself; a longer wait sleeps as before. When allowed, the
        // waiting thread makes the waiting deliveries itself, one drain at a time as
        // the delivery thread would (H-5), which saves the thread handoff; the
        // delivery thread leaves a drain to a thread spinning here.
        var spinning = false
        let spun = spinUntilIdle(countedAsSpinning: &spinning)
        let sleeps = (try? spun.get()) == false
        if spinning || sleeps {
            monitor.withLock { state in
                if spinning { state.spinningWaiters -= 1 }
                // Counted as sleeping before anything can be queued for it to make.
                if sleeps { state.waiters += 1 }
                handBackDrainIfNeeded(&state)
            }
        }
        if try spun.get() { return }
        monitor.wait(until: { $0.isIdle }, then: { $0.waiters -= 1 })
    }

    func holdDeliveries() {
        guard drainsOnWaitingThread else { return }
        monitor.withLock { $0.deliveryHolds += 1 }
    }

    func releaseDeliveries() {
        guard drainsOnWaitingThread else { return }
        monitor.withLock { state in
            precondition(state.deliveryHolds > 0, "releaseDeliveries without holdDeliveries")
            state.deliveryHolds -= 1
            handBackDrainIfNeeded(&state)
        }
    }

    /// A drain left to waiters that none of them will make goes back to the delivery
    /// thread; called under the lock whenever a waiter leaves or a hold ends.
    private func handBackDrainIfNeeded(_ state: inout HostState) {
        guard state.handsBackDrain else { return }
        state.drainDeferred = false
        wake(if: state.needsTurn())
    }

    /// Checks up to `idleChecksBeforeSleeping` times, draining when allowed and no
    /// one else is; whether the host became idle meanwhile. On a host that drains on
    /// waiting threads, the first check that finds it busy counts this waiter as
    /// spinning, in the same section, and sets `spinning` for the caller to uncount:
    /// a host idle already (a push no subscriber hears) is waited for in one section.
    /// Idle, nothing is queued, so there is no drain to hand back.
    private func spinUntilIdle(countedAsSpinning spinning: inout Bool) -> Result<Bool, HostError> {
        var checks = 0
        while checks < Self.idleChecksBeforeSleeping {
            let next = monitor.withLock { state -> IdleWait in
                if let error = state.waitForItself("waitUntilIdle") { return .refused(error) }
                if state.isIdle { return .idle }
                if drainsOnWaitingThread, !spinning {
                    state.spinningWaiters += 1
                    spinning = true
                }
                if drainsOnWaitingThread, state.drainingThread == nil, !state.queue.isEmpty {
                    state.drainingThread = pthread_self()
                    return .drain
                }
                return .busy
            }
            switch next {
            case .refused(let error): return .failure(error)
            case .idle: return .success(true)
            case .drain: drainClaimed()
            case .busy:
                checks += 1
                sched_yield()
            }
        }
        return .success(false)
    }

    private enum IdleWait {
        case idle, drain, busy
        case refused(HostError)
    }

    static let idleChecksBeforeSleeping = 64

    // MARK: Plugin side

    @discardableResult
    func answer(_ ticket: HostState.Ticket, with response: PluginResponse) -> Bool {
        monitor.withLock { state in
            guard state.pendingCalls.removeValue(forKey: ticket) != nil else { return false }
            if case .call(let id) = ticket { wake(if: state.enqueue(.response(id, response))) }
            return true
        }
    }

    func isActive(_ emitter: StreamEmitter) -> Bool {
        monitor.withLock { _ in emitter.subscription.isLive }
    }

    func emit(_ response: PluginResponse, from emitter: StreamEmitter) -> Bool {
        monitor.withLock { state in
            guard emitter.subscription.isLive else { return false }
            wake(if: state.enqueue(.item(key: emitter.key, response), from: emitter.subscription))
            return true
        }
    }

    func end(_ emitter: StreamEmitter) -> Bool {
        monitor.withLock { state in
            guard emitter.subscription.isLive else { return false }
            _ = state.deactivate(emitter.key)
            wake(if: state.enqueue(.end(key: emitter.key), from: emitter.subscription))
            return true
        }
    }

    // MARK: Delivery thread

    private func finishInvocation() {
        monitor.withLock { state in
            state.endInvocation()
            if state.waiters > 0 && state.isIdle { monitor.broadcast() }
        }
    }

    /// Schedules the drain; called under the lock when `enqueue` says so.
    private func wake(if needed: Bool) {
        guard needed else { return }
        deliveryQueue.async { [self] in drain() }
    }

    /// The delivery thread's turn: drains unless another thread (a waiter) is
    /// draining now, which then delivers everything queued, this turn's included.
    private func drain() {
        let claimed = monitor.withLock { state -> Bool in
            state.turnPending = false
            guard state.drainingThread == nil, !state.queue.isEmpty else { return false }
            if state.leavesDrainToWaiter {
                state.drainDeferred = true
                return false
            }
            state.drainingThread = pthread_self()
            return true
        }
        if claimed { drainClaimed() }
    }

    /// Delivers queued items in rounds (`HostState.admitRound`), one at a time, taking
    /// the lock once a round to admit it; the caller holds the drain. A round rather
    /// than an item per lock keeps a plugin emitting from another thread from meeting
    /// the drain at the lock on every item.
    ///
    /// H-4 without the lock: a thread letting a subscription go (under the lock) then
    /// waits while `inHandler` names a delivery on its key. The drain publishes each
    /// delivery in `inHandler` before it reads the subscription (`isDue`), both
    /// sequentially consistent, so either the drain sees it let go and skips the item,
    /// or the other thread sees the item in the core's hands and waits it out. Each
    /// round's first delivery is published under the lock that admitted it, which is
    /// what covers an end: it let its key go as it was admitted.
    private func drainClaimed() {
        var batch: [HostState.Queued] = []
        var next = 0
        while true {
            let round = monitor.withLock { state -> (Range<Int>, closed: Bool)? in
                state.inFlight = []
                if next == batch.count {
                    batch.removeAll(keepingCapacity: true)
                    swap(&batch, &state.queue)
                    next = 0
                    if batch.isEmpty {
                        state.drainScheduled = false
                        state.drainDeferred = false
                        state.drainingThread = nil
                        if state.closeWhenDrained { state.isClosed = true }
                        if state.waiters > 0 { monitor.broadcast() }
                        return nil
                    }
                }
                let range = state.admitRound(of: batch, from: &next)
                if !range.isEmpty { inHandler.store(range.lowerBound, ordering: .sequentiallyConsistent) }
                return (range, state.isClosed)
            }
            guard let (range, closed) = round else { return }
            for index in range {
                inHandler.store(index, ordering: .sequentiallyConsistent)
                if batch[index].isDue(closed: closed) { handler(batch[index].delivery) }
                inHandler.store(-1, ordering: .sequentiallyConsistent)
                if deliveryWaiters.load(ordering: .sequentiallyConsistent) > 0 {
                    monitor.withLock { _ in monitor.broadcast() }
                }
            }
        }
    }
}
