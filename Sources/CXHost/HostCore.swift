import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The shared engine behind `Host`, `Reply` and `StreamEmitter`.
final class HostCore: Sendable {
    let monitor = Monitor(HostState())
    let handler: @Sendable (Delivery) -> Void
    let deliveryQueue: DispatchQueue

    init(label: String, handler: @escaping @Sendable (Delivery) -> Void) {
        self.handler = handler
        deliveryQueue = DispatchQueue(label: label)
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
        let (id, plugin, problem) = try monitor.withLock {
            state throws(HostError) -> (CallID, (any Plugin)?, String?) in
            guard !state.isShutDown else { throw .shutDown }
            var id = chosenID ?? CallID(rawValue: state.nextCallID)
            if chosenID != nil {
                guard state.pendingCalls[id] == nil else { throw .duplicateCallID(id) }
            } else {
                while state.pendingCalls[id] != nil {
                    state.nextCallID &+= 1
                    id = CallID(rawValue: state.nextCallID)
                }
                state.nextCallID &+= 1
            }
            state.pendingCalls[id] = .init(plugin: name, op: op, isNotify: isNotify)
            if let problem = state.unknownOpMessage(plugin: name, op: op) { return (id, nil, problem) }
            state.invocations += 1
            return (id, state.plugins[name], nil)
        }
        guard let plugin else {
            answer(id, with: .failure(problem ?? "plugin '\(name)' is not available"))
            return id
        }
        let reply = Reply(core: self, id: id, plugin: name, op: op)
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
        let (replaced, started) = try monitor.withLock {
            state throws(HostError) -> (HostState.ActiveStream?, (HostState.ActiveStream, String)?) in
            guard !state.isShutDown else { throw .shutDown }
            let replaced = state.activeStreams.removeValue(forKey: key)
            let generation = state.makeGeneration()
            state.keyGenerations[key] = generation
            if let problem = state.unknownStreamMessage(plugin: name, stream: stream) {
                wake(if: state.enqueue(.item(key: key, .failure(problem)), generation: generation))
                wake(if: state.enqueue(.end(key: key), generation: generation))
                if replaced != nil { state.invocations += 1 }
                return (replaced, nil)
            }
            let emitter = StreamEmitter(core: self, key: key, generation: generation)
            let active = HostState.ActiveStream(plugin: state.plugins[name]!, emitter: emitter)
            state.activeStreams[key] = active
            state.invocations += 1
            return (replaced, (active, stream))
        }
        // H-4: the old stream is stopped before the new one starts.
        if let replaced {
            replaced.plugin.stopStream(replaced.emitter)
            if started == nil { finishInvocation() }
        }
        guard let (active, stream) = started else { return }
        do {
            try active.plugin.startStream(stream, input: input, emitter: active.emitter)
        } catch {
            active.emitter.emit(.failure("plugin '\(name)' failed to start '\(stream)': \(error)"))
            active.emitter.end()
        }
        finishInvocation()
    }

    /// Returns whether the key had a stream (active, or ended but not yet delivered).
    @discardableResult
    func unsubscribe(key: String) -> Bool {
        let (stopped, existed) = monitor.withLock { state -> (HostState.ActiveStream?, Bool) in
            let existed = state.keyGenerations.removeValue(forKey: key) != nil
            guard let active = state.activeStreams.removeValue(forKey: key) else { return (nil, existed) }
            state.invocations += 1
            return (active, true)
        }
        // A delivery on this key may be in the core's hands on the delivery thread
        // right now; "after unsubscribe returns, nothing is delivered" means waiting it out.
        monitor.withLock { $0.waiters += 1 }
        monitor.wait(until: { $0.inFlightKey != key || $0.isOnDeliveryThread }, then: { $0.waiters -= 1 })
        if let stopped {
            stopped.plugin.stopStream(stopped.emitter)
            finishInvocation()
        }
        return existed
    }

    func shutdown() {
        let stopping = monitor.withLock { state -> (streams: [HostState.ActiveStream], plugins: [any Plugin])? in
            guard !state.isShutDown else { return nil }
            state.isShutDown = true
            for (id, pending) in state.pendingCalls.sorted(by: { $0.key.rawValue < $1.key.rawValue })
            where !pending.isNotify {
                let message = "the host was shut down before plugin '\(pending.plugin)' answered '\(pending.op)'"
                wake(if: state.enqueue(.response(id, .failure(message))))
            }
            state.pendingCalls.removeAll()
            let streams = Array(state.activeStreams.values)
            state.activeStreams.removeAll()
            state.keyGenerations.removeAll()
            state.invocations += 1
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
        if !waitUntilIdle() {
            monitor.withLock { $0.closeWhenDrained = true }
            return
        }
        monitor.withLock { $0.isClosed = true }
    }

    /// The keys the core holds, oldest subscription first (generations only grow).
    var subscribedKeys: [String] {
        monitor.withLock { state in
            state.keyGenerations.sorted { $0.value < $1.value }.map(\.key)
        }
    }

    @discardableResult
    func waitUntilIdle() -> Bool {
        // Most waits are a few microseconds (one request's deliveries). Checking a few
        // times before sleeping saves the futex sleep and wake-up, which costs more
        // than the wait itself; a longer wait sleeps as before.
        for _ in 0..<Self.idleChecksBeforeSleeping {
            switch monitor.withLock({ state -> Bool? in
                state.isOnDeliveryThread ? false : (state.isIdle ? true : nil)
            }) {
            case let answer?: return answer
            case nil: sched_yield()
            }
        }
        let allowed = monitor.withLock { state -> Bool in
            guard !state.isOnDeliveryThread else { return false }
            state.waiters += 1
            return true
        }
        guard allowed else { return false }
        monitor.wait(until: { $0.isIdle }, then: { $0.waiters -= 1 })
        return true
    }

    static let idleChecksBeforeSleeping = 64

    // MARK: Plugin side

    @discardableResult
    func answer(_ id: CallID, with response: PluginResponse) -> Bool {
        monitor.withLock { state in
            guard let pending = state.pendingCalls.removeValue(forKey: id) else { return false }
            if !pending.isNotify { wake(if: state.enqueue(.response(id, response))) }
            return true
        }
    }

    func isActive(_ emitter: StreamEmitter) -> Bool {
        monitor.withLock { $0.activeStreams[emitter.key]?.emitter === emitter }
    }

    func emit(_ response: PluginResponse, from emitter: StreamEmitter) -> Bool {
        monitor.withLock { state in
            guard state.activeStreams[emitter.key]?.emitter === emitter else { return false }
            wake(if: state.enqueue(.item(key: emitter.key, response), generation: emitter.generation))
            return true
        }
    }

    func end(_ emitter: StreamEmitter) -> Bool {
        monitor.withLock { state in
            guard state.activeStreams[emitter.key]?.emitter === emitter else { return false }
            state.activeStreams[emitter.key] = nil
            wake(if: state.enqueue(.end(key: emitter.key), generation: emitter.generation))
            return true
        }
    }

    // MARK: Delivery thread

    private func finishInvocation() {
        monitor.withLock { state in
            state.invocations -= 1
            if state.waiters > 0 && state.isIdle { monitor.broadcast() }
        }
    }

    /// Schedules the drain; called under the lock when `enqueue` says so.
    private func wake(if needed: Bool) {
        guard needed else { return }
        deliveryQueue.async { [self] in drain() }
    }

    /// Delivers queued items one at a time, taking the lock once per item to finish
    /// the previous delivery and admit the next.
    private func drain() {
        var batch: [HostState.Queued] = []
        var next = 0
        var delivering: Delivery?
        while true {
            delivering = monitor.withLock { state -> Delivery? in
                if state.drainingThread == nil { state.drainingThread = pthread_self() }
                if state.inFlightKey != nil {
                    state.inFlightKey = nil
                    if state.waiters > 0 { monitor.broadcast() }
                }
                while true {
                    if next == batch.count {
                        batch.removeAll(keepingCapacity: true)
                        swap(&batch, &state.queue)
                        next = 0
                        if batch.isEmpty {
                            state.drainScheduled = false
                            state.drainingThread = nil
                            if state.closeWhenDrained { state.isClosed = true }
                            if state.waiters > 0 { monitor.broadcast() }
                            return nil
                        }
                    }
                    let queued = batch[next]
                    next += 1
                    guard state.admit(queued) else { continue }
                    switch queued.delivery {
                    case .item(let key, _), .end(let key): state.inFlightKey = key
                    case .response: break
                    }
                    return queued.delivery
                }
            }
            guard let delivering else { return }
            handler(delivering)
        }
    }
}
