import CMosquitto
import CXHost
import Foundation

/// The one event loop every MQTT connection of the process shares: one thread, one epoll
/// set, whatever the number of connections (a world of 10,000 Appwrite devices holds
/// 10,000 connections on it). libmosquitto is driven through its own "external loop"
/// calls (`mosquitto_loop_read`, `_write`, `_misc`), and every call on a connection's
/// handle is made on this thread, so a handle is never used from two threads.
///
/// Other threads hand work over with `perform`, which wakes the loop through an eventfd.
final class MQTTLoop: @unchecked Sendable {
    static let shared = MQTTLoop()

    /// What the loop runs for a connection: it owns the connection's socket while it is
    /// registered, and answers for its readiness.
    protocol Member: AnyObject {
        /// The socket became readable or writable, or failed.
        func ready(readable: Bool, writable: Bool)
        /// Once a second: keepalive, and reconnects that are due.
        func tick(now: Double)
    }

    private let epoll: Int32
    private let wake: Int32
    private let work = Monitor([() -> Void]())
    /// Registered sockets → their members (the loop thread's alone).
    private var members: [Int32: Member] = [:]
    private var interests: [Int32: UInt32] = [:]
    /// Every member that wants ticks (the loop thread's alone).
    private var ticking: [ObjectIdentifier: Member] = [:]

    private init() {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wake = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = wake
        epoll_ctl(epoll, EPOLL_CTL_ADD, wake, &event)
        let thread = Thread { [self] in run() }
        thread.name = "mqtt-loop"
        thread.start()
    }

    /// Runs `job` on the loop's thread, soon; never waits.
    func perform(_ job: @escaping () -> Void) {
        work.withLock { $0.append(job) }
        var one: UInt64 = 1
        _ = write(wake, &one, 8)
    }

    // MARK: The loop thread's own calls

    /// Watches `socket` for `member`: readable always, writable when `writable`.
    func watch(_ socket: Int32, for member: Member, writable: Bool) {
        guard socket >= 0 else { return }
        let wanted = EPOLLIN.rawValue | (writable ? EPOLLOUT.rawValue : 0)
        var event = epoll_event()
        event.events = wanted
        event.data.fd = socket
        if members[socket] == nil {
            epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event)
        } else if interests[socket] != wanted {
            epoll_ctl(epoll, EPOLL_CTL_MOD, socket, &event)
        }
        members[socket] = member
        interests[socket] = wanted
    }

    /// Stops watching `socket`; called while it is still open, before libmosquitto closes
    /// or replaces it, so that the number is never another socket's.
    func unwatch(_ socket: Int32) {
        guard socket >= 0, members.removeValue(forKey: socket) != nil else { return }
        interests[socket] = nil
        epoll_ctl(epoll, EPOLL_CTL_DEL, socket, nil)
    }

    func startTicking(_ member: Member) { ticking[ObjectIdentifier(member)] = member }
    func stopTicking(_ member: Member) { ticking[ObjectIdentifier(member)] = nil }

    private func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        var lastTick = 0.0
        while true {
            let count = epoll_wait(epoll, &events, Int32(events.count), 250)
            for index in 0..<max(Int(count), 0) {
                let socket = events[index].data.fd
                if socket == wake {
                    var value: UInt64 = 0
                    _ = read(wake, &value, 8)
                    continue
                }
                let flags = events[index].events
                // A member earlier in this batch may have let go of this socket.
                guard let member = members[socket] else { continue }
                let failed = flags & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0
                member.ready(
                    readable: failed || flags & EPOLLIN.rawValue != 0, writable: flags & EPOLLOUT.rawValue != 0)
            }
            for job in work.withLock({ jobs -> [() -> Void] in
                defer { jobs.removeAll() }
                return jobs
            }) {
                job()
            }
            let now = Date.timeIntervalSinceReferenceDate
            if now - lastTick >= 0.25 {
                lastTick = now
                for member in Array(ticking.values) { member.tick(now: now) }
            }
        }
    }
}
