import OrderedJSON
import Testing

@testable import CXHost
@testable import ShellKit

/// A request holds the deliveries of the devices it touches for its own settle
/// (`World.touch`, `PluginHost.holdDeliveries`): the line protocol's thread makes them,
/// no delivery thread is woken for them, and no hold outlives its request.
@Suite struct DeliveryHoldTests {
    static let setup = [
        #"{"op":"device","platform":"ios"}"#, #"{"op":"launch"}"#,
        #"{"op":"call","plugin":"push","method":"register"}"#,
        #"{"op":"subscribe","key":"a","plugin":"push","stream":"events"}"#,
        #"{"op":"subscribe","key":"b","plugin":"push","stream":"events"}"#,
        #"{"op":"device","platform":"ios"}"#, #"{"op":"launch"}"#,
        #"{"op":"call","plugin":"push","method":"register"}"#,
        #"{"op":"subscribe","key":"a","plugin":"push","stream":"events"}"#, #"{"op":"background","device":"d2"}"#,
    ]

    /// The benchmark's mix (Tests/Benchmarks/cxbench/ShellBenchmark.swift), and a refused request.
    static let mix = [
        #"{"op":"apns","device":"d1","headers":{"apns-topic":"com.example.app","apns-push-type":"background","apns-priority":"5"},"body":{"aps":{"content-available":1},"type":"sync","n":1}}"#,
        #"{"op":"apns","device":"d2","headers":{"apns-topic":"com.example.app"},"body":{"aps":{"alert":{"title":"New booking","body":"10:30"}},"booking_id":"01J9ZK3Q"}}"#,
        #"{"op":"tap","device":"d2","which":"newest"}"#, #"{"op":"background","device":"d2"}"#,
        #"{"op":"apns","token":"00ff","headers":{"apns-topic":"com.example.app"},"body":{"aps":{"alert":"x"}}}"#,
        #"{"op":"tap","device":"d1","which":"newest"}"#,
    ]

    func hosts(_ session: Session) throws -> [HostCore] {
        try ["d1", "d2"].map { try #require(session.world.devicesByID[$0]?.host).core }
    }

    @Test func theLineProtocolMakesItsDeliveriesWithoutWakingADeliveryThread() throws {
        let session = Session()
        for line in Self.setup { _ = session.handle(line) }
        let hosts = try hosts(session)
        let turnsBefore = hosts.map { $0.monitor.withLock { $0.turnsGiven } }
        var deliveries = 0
        for _ in 0..<20 {
            for line in Self.mix {
                deliveries += session.handle(line).filter { $0.hasPrefix(#"{"delivery""#) }.count
            }
        }
        #expect(deliveries == 20 * 3)
        #expect(hosts.map { $0.monitor.withLock { $0.turnsGiven } } == turnsBefore)
        #expect(hosts.allSatisfy { $0.monitor.withLock { $0.deliveryHolds } == 0 })
    }

    @Test func noHoldOutlivesItsRequest() throws {
        let session = Session()
        for line in Self.setup { _ = session.handle(line) }
        let hosts = try hosts(session)
        for line in Self.mix + [#"{"op":"tap","device":"d2","which":"nonsense"}"#, #"{"op":"kill","device":"d1"}"#] {
            _ = session.handle(line)
            #expect(hosts.allSatisfy { $0.monitor.withLock { $0.deliveryHolds } == 0 }, "after \(line)")
        }
    }
}
