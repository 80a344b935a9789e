import CXHost
import Foundation
import Testing

@testable import FrontDoor

/// The ring that hands the door's requests to the handling thread: order, the bound, and
/// the consumer's sleep, with the interleavings forced through its `beforeSleep` hook.
@Suite struct HandoffRingTests {
    @Test func elementsComeOutInOrderAndCountAgainstTheBoundUntilReleased() {
        let ring = HandoffRing<Int>(bound: 5)
        for number in 0..<5 { #expect(ring.put(number)) }
        #expect(!ring.put(5), "a sixth past a bound of five")
        var taken: [Int] = []
        #expect(ring.take(most: 3, into: &taken))
        #expect(taken == [0, 1, 2])
        #expect(ring.count == 5 && !ring.put(5), "taken is still in hand")
        ring.release(3)
        #expect(ring.count == 2)
        // Round the ring's eight slots more than once: each comes out as it went in.
        var next = 5
        for _ in 0..<10 {
            while ring.put(next) { next += 1 }
            taken.removeAll()
            #expect(ring.take(most: 100, into: &taken))
            #expect(taken == Array((next - 5)..<next))
            ring.release(taken.count)
        }
    }

    /// The producer puts while the consumer is between finding the ring empty and saying
    /// it sleeps: the producer sees no sleeper and wakes no one, so the consumer must find
    /// the element by looking again, not sleep past it.
    @Test func anElementPutAsTheConsumerGoesToSleepIsTaken() {
        let producer = Producer()
        let ring = HandoffRing<Int>(bound: 4, beforeSleep: { producer.putNow() })
        producer.ring = ring
        let taken = Monitor<[Int]?>(nil)
        let consumer = Thread {
            var elements: [Int] = []
            _ = ring.take(most: 4, into: &elements)
            taken.withLock {
                $0 = elements
                taken.broadcast()
            }
        }
        consumer.start()
        let result = taken.wait(until: { $0 != nil }, timeout: 20, then: { $0 })
        if result == nil { ring.stop() }  // a consumer asleep past its element: let it go
        #expect(result == [7])
        #expect(producer.puts == 1)
    }

    @Test func stopWakesASleepingConsumerAndRefusesWhatComesAfter() {
        let asleep = Monitor(false)
        let ring = HandoffRing<Int>(
            bound: 4,
            beforeSleep: {
                asleep.withLock {
                    $0 = true
                    asleep.broadcast()
                }
            })
        let ended = Monitor<Bool?>(nil)
        let consumer = Thread {
            var elements: [Int] = []
            let took = ring.take(most: 4, into: &elements)
            ended.withLock {
                $0 = took
                ended.broadcast()
            }
        }
        consumer.start()
        asleep.wait(until: { $0 }, then: { _ in })
        ring.stop()
        #expect(ended.wait(until: { $0 != nil }, timeout: 20, then: { $0 }) == false)
        #expect(!ring.put(1))
    }

    /// What was put and never taken goes with the ring; what was taken is the taker's.
    @Test func elementsNeverTakenAreFreedWithTheRing() {
        final class Element: Sendable {}
        weak var taken: Element?
        weak var left: Element?
        var kept: [Element] = []
        do {
            let ring = HandoffRing<Element>(bound: 4)
            let (first, second) = (Element(), Element())
            (taken, left) = (first, second)
            #expect(ring.put(first) && ring.put(second))
            #expect(ring.take(most: 1, into: &kept))
        }
        #expect(left == nil)
        #expect(taken != nil && kept.count == 1)
    }
}

/// Puts one element from a thread of its own when asked, and returns once it is in.
private final class Producer: @unchecked Sendable {
    /// Weak: the ring's hook holds this producer.
    weak var ring: HandoffRing<Int>?
    private let state = Monitor((asked: false, done: false, puts: 0))
    var puts: Int { state.withLock { $0.puts } }

    init() {
        Thread { [state] in
            state.wait(until: { $0.asked }, then: { _ in })
            let put = self.ring?.put(7) == true
            state.withLock {
                $0.done = true
                $0.puts += put ? 1 : 0
                state.broadcast()
            }
        }.start()
    }

    /// Called on the consumer's thread: only the first call puts.
    func putNow() {
        state.withLock {
            $0.asked = true
            state.broadcast()
        }
        state.wait(until: { $0.done }, then: { _ in })
    }
}
