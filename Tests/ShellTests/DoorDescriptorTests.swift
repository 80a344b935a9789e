import Foundation
import FrontDoor
import HTTPMessage
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The door's descriptors and epoll. Closing a descriptor takes it out of epoll only when
/// no other descriptor shares its open file, and a process that forks shares them all with
/// its child until the child execs. The test holds a copy itself (`dup`), which forces what
/// a fork would leave to chance.
@Suite(.serialized) struct DoorDescriptorTests {
    /// A connection the door closed while another descriptor still holds its socket is
    /// never reported to the door again. The socket is left readable (its client's end of
    /// file waits to be read), so epoll would report it on the loop's next turn, carrying
    /// the freed connection: a use after free, which `make sanitize` turns into a failure.
    @Test func aClosedConnectionSharedWithAnotherDescriptorIsNeverReportedAgain() throws {
        let scratch = ScratchDirectory("cx-descriptors")
        defer { scratch.remove() }
        let ca = try TestCA.ensure(in: scratch.path)
        let door = try FrontDoor(
            address: "127.0.0.1", port: 0, ca: ca, tunnelHosts: { _ in false },
            batches: { batch in batch.map { _ in HTTPResponse(status: 200) } })
        defer { door.stop() }

        let client = try #require(FrontDoorTests.connection(port: door.port))
        defer { close(client) }
        #expect(Self.waitFor { door.connections == 1 })
        let copy = try #require(Self.doorDescriptor(localPort: door.port, peerPort: Self.localPort(of: client)))
        let held = dup(copy)
        defer { close(held) }
        #expect(held >= 0)

        // The client says it is done; the door closes its connection, and `held` keeps the
        // socket, readable, open.
        shutdown(client, Int32(SHUT_WR))
        #expect(Self.waitFor { door.connections == 0 })

        // A request on a second connection is answered, so the loop turned with the first
        // socket ready to read.
        let second = try #require(HTTP2TestClient(port: door.port))
        let stream = second.request("GET", "127.0.0.1", "/x", body: 0)
        for _ in 0..<3_000 where second.statuses[stream] == nil {
            if !second.pump() { usleep(10_000) }
        }
        #expect(second.statuses[stream] == "200")
        #expect(door.connections == 1)
    }

    /// Waits up to 30 s for a condition the door's thread makes true.
    static func waitFor(_ condition: () -> Bool) -> Bool {
        for _ in 0..<3_000 {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }

    static func localPort(of socket: Int32) -> Int {
        port(of: socket, getsockname)
    }

    static func port(
        of socket: Int32, _ name: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32
    ) -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { name(socket, $0, &length) }
        }
        guard named == 0, address.sin_family == sa_family_t(AF_INET) else { return -1 }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// The descriptor, among this process's, of the door's end of a connection.
    static func doorDescriptor(localPort: Int, peerPort: Int) -> Int32? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.compactMap { Int32($0) }.first {
            port(of: $0, getsockname) == localPort && port(of: $0, getpeername) == peerPort
        }
    }
}
