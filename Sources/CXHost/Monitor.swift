#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// State guarded by one mutex, with a condition variable for waiting on it. The lock
/// for plugins and shells too: it is a pthread mutex, which ThreadSanitizer sees
/// (it cannot see `Synchronization.Mutex` on Linux, and reports false races).
///
/// `@unchecked Sendable` because every access to `state` happens inside `withLock`
/// or `wait`, which hold the mutex. The state lives behind a pointer rather than in a
/// stored property: the mutex already makes each access exclusive, and a property
/// passed `inout` would pay the runtime's exclusivity check on every section too.
public final class Monitor<State>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    @usableFromInline let state: UnsafeMutablePointer<State>

    public init(_ state: State) {
        // The mutex, the condition and the state in one allocation, side by side: a
        // section touches the mutex and the state, so they share cache lines.
        let layout = Self.layout
        let block = UnsafeMutableRawPointer.allocate(byteCount: layout.size, alignment: layout.alignment)
        mutex = block.bindMemory(to: pthread_mutex_t.self, capacity: 1)
        condition = (block + layout.condition).bindMemory(to: pthread_cond_t.self, capacity: 1)
        self.state = (block + layout.state).bindMemory(to: State.self, capacity: 1)
        self.state.initialize(to: state)
        mutex.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        #if canImport(Glibc)
            // Most sections under a monitor are a few hundred instructions: a contender
            // spins a little before it sleeps, instead of paying a futex sleep and a
            // wake-up on every meeting. A long section costs it only that little spin.
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
        #endif
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    /// Where the condition and the state sit in the block, and its size and alignment.
    private static var layout: (condition: Int, state: Int, size: Int, alignment: Int) {
        func aligned(_ offset: Int, _ alignment: Int) -> Int { (offset + alignment - 1) / alignment * alignment }
        let condition = aligned(MemoryLayout<pthread_mutex_t>.size, MemoryLayout<pthread_cond_t>.alignment)
        let state = aligned(condition + MemoryLayout<pthread_cond_t>.size, MemoryLayout<State>.alignment)
        let alignment = max(
            MemoryLayout<pthread_mutex_t>.alignment, MemoryLayout<pthread_cond_t>.alignment,
            MemoryLayout<State>.alignment)
        return (condition, state, max(state + MemoryLayout<State>.size, 1), alignment)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        state.deinitialize(count: 1)
        UnsafeMutableRawPointer(mutex).deallocate()
    }

    /// Runs `body` with the lock held. Do not call out to code that may take it again.
    /// Inlinable, so that each caller's section is inlined between the lock and the
    /// unlock: called as the unspecialized generic from another module, a section cost
    /// ~45 instructions more, and a push takes some thirteen.
    @inlinable
    public func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure)
        -> Result
    {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state.pointee)
    }

    /// Holds the lock, sleeps until `ready` is true, then runs `body` under the same lock.
    public func wait<Result>(until ready: (State) -> Bool, then body: (inout State) -> Result) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !ready(state.pointee) { pthread_cond_wait(condition, mutex) }
        return body(&state.pointee)
    }

    /// As `wait(until:then:)`, but stops sleeping after `timeout` seconds: `body` then
    /// runs with `ready` possibly still false, and says what to make of that.
    public func wait<Result>(
        until ready: (State) -> Bool, timeout: Double, then body: (inout State) -> Result
    ) -> Result {
        var limit = timespec()
        clock_gettime(CLOCK_REALTIME, &limit)
        let nanoseconds = Int(limit.tv_nsec) + Int((timeout - timeout.rounded(.down)) * 1e9)
        limit.tv_sec += Int(timeout.rounded(.down)) + nanoseconds / 1_000_000_000
        limit.tv_nsec = nanoseconds % 1_000_000_000
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !ready(state.pointee) {
            if pthread_cond_timedwait(condition, mutex, &limit) == ETIMEDOUT { break }
        }
        return body(&state.pointee)
    }

    /// Wakes every waiter; call with the lock held (inside `withLock`).
    public func broadcast() {
        pthread_cond_broadcast(condition)
    }
}
