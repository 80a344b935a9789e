import CXHost
import Synchronization

/// A bounded queue from one thread (the producer) to one other (the consumer), with no
/// lock on either side while there is work (issue 40, point 3): the producer writes a
/// slot and publishes it by moving `tail`; the consumer moves elements out in order and,
/// once it is done with them, gives their room back by moving `head`. An element counts
/// against `bound` from `put` until its `release`, so `count` is what waits and what is
/// in hand together.
///
/// The consumer sleeps on a monitor only when the ring is empty. It says so first
/// (`sleeping`), then looks again; the producer publishes first, then looks at
/// `sleeping`. Both orders are sequentially consistent, so at least one of them sees the
/// other: either the consumer finds the element, or the producer wakes it (under the
/// monitor's lock, which the consumer's last look holds too).
///
/// Only one thread may call `put`, and only one (another) `take` and `release`.
final class HandoffRing<Element>: @unchecked Sendable {
    /// How many elements may be in the ring (put and not released) at once.
    let bound: Int
    private let slots: UnsafeMutablePointer<Element>
    private let mask: Int
    /// The next slot `put` writes; moved by the producer alone.
    private let tail = Atomic<Int>(0)
    /// The oldest slot not released; moved by the consumer alone.
    private let head = Atomic<Int>(0)
    /// The next slot `take` reads: the consumer's own.
    private var next = 0
    private let sleeping = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    private let wakeUp = Monitor(())
    /// Called by `take` when it has found the ring empty, before it says it will sleep:
    /// tests put an element there, forcing the interleaving a lost wake-up needs (the
    /// producer looks at `sleeping` before the consumer sets it).
    let beforeSleep: (@Sendable () -> Void)?

    /// A ring for `bound` elements (its slots are the next power of two).
    init(bound: Int, beforeSleep: (@Sendable () -> Void)? = nil) {
        precondition(bound > 0)
        self.bound = bound
        var capacity = 1
        while capacity < bound { capacity <<= 1 }
        mask = capacity - 1
        slots = .allocate(capacity: capacity)
        self.beforeSleep = beforeSleep
    }

    deinit {
        // What was put and never taken is still in its slot; what was taken is not.
        let end = tail.load(ordering: .acquiring)
        for index in next..<end { (slots + (index & mask)).deinitialize(count: 1) }
        slots.deallocate()
    }

    /// Elements put and not released yet (a moment's figure, from any thread).
    var count: Int { tail.load(ordering: .relaxed) &- head.load(ordering: .relaxed) }

    /// The producer: puts `element` last; false, with nothing put, when `bound` elements
    /// are in the ring already or the ring is stopped.
    func put(_ element: consuming Element) -> Bool {
        let end = tail.load(ordering: .relaxed)
        guard !stopped.load(ordering: .relaxed), end &- head.load(ordering: .acquiring) < bound else {
            return false
        }
        (slots + (end & mask)).initialize(to: element)
        tail.store(end &+ 1, ordering: .sequentiallyConsistent)
        if sleeping.load(ordering: .sequentiallyConsistent) {
            wakeUp.withLock { _ in wakeUp.broadcast() }
        }
        return true
    }

    /// The consumer: waits until an element is in the ring, then moves up to `most` of
    /// them, oldest first, onto the end of `elements`. False, with nothing taken, once
    /// the ring is stopped.
    func take(most: Int, into elements: inout [Element]) -> Bool {
        while true {
            if stopped.load(ordering: .acquiring) { return false }
            let end = tail.load(ordering: .acquiring)
            if end != next {
                let last = min(end, next + most)
                for index in next..<last { elements.append((slots + (index & mask)).move()) }
                next = last
                return true
            }
            beforeSleep?()
            sleeping.store(true, ordering: .sequentiallyConsistent)
            wakeUp.wait(
                until: { _ in
                    tail.load(ordering: .sequentiallyConsistent) != next
                        || stopped.load(ordering: .sequentiallyConsistent)
                }, then: { _ in })
            sleeping.store(false, ordering: .relaxed)
        }
    }

    /// The consumer: the oldest `count` elements taken are done with; their room is free.
    func release(_ count: Int) {
        precondition(head.load(ordering: .relaxed) + count <= next)
        head.add(count, ordering: .releasing)
    }

    /// Takes nothing more: `put` refuses, and `take` returns false from now on.
    func stop() {
        stopped.store(true, ordering: .sequentiallyConsistent)
        wakeUp.withLock { _ in wakeUp.broadcast() }
    }
}
