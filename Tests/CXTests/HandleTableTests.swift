import CCX
import Testing

@testable import CX

/// The C ABI's handle table stays bounded however long a core runs: every reply
/// handle is released when it is answered, or when the plugin's `call` returns
/// non-zero (cx.h), and a notify never holds an id the core chose.
@Suite struct HandleTableTests {
    /// A plugin whose every call fails without answering (cx.h: the host answers for
    /// it and the reply handle is released).
    static var failing: cx_plugin {
        cx_plugin(context: nil, call: { _, _, _, _, _, _ in 7 }, start_stream: nil, stop_stream: nil, release: nil)
    }

    /// A plugin that answers every call at once.
    static var answering: cx_plugin {
        cx_plugin(
            context: nil,
            call: { _, _, _, input, length, reply in
                Int32(cx_reply_send(reply, true, input, length).rawValue)
            }, start_stream: nil, stop_stream: nil, release: nil)
    }

    func makeHost(_ plugin: cx_plugin) throws -> OpaquePointer {
        var created: OpaquePointer?
        #expect(cx_host_create({ _, _ in }, nil, &created) == CX_OK)
        let host = try #require(created)
        var table = plugin
        let status = "op".withCString { name in
            var op = cx_str(ptr: name, len: 2)
            return cx_register_plugin(host, "p", 1, &op, 1, nil, 0, &table)
        }
        #expect(status == CX_OK)
        return host
    }

    @Test func aMillionFailingAndAnsweredCallsLeaveTheTableAsItWas() throws {
        let failing = try makeHost(Self.failing)
        let answering = try makeHost(Self.answering)
        let before = handles.count
        for id in UInt64(1)...500_000 {
            #expect(cx_call(failing, id, "p", 1, "op", 2, "", 0) == CX_OK)
            #expect(cx_call(answering, id, "p", 1, "op", 2, "x", 1) == CX_OK)
            if id % 50_000 == 0 {
                #expect(cx_wait_idle(failing) == CX_OK && cx_wait_idle(answering) == CX_OK)
            }
        }
        #expect(cx_wait_idle(failing) == CX_OK && cx_wait_idle(answering) == CX_OK)
        #expect(handles.count == before)
        for host in [failing, answering] {
            guard case .host(let owner)? = handles.entry(host) else { throw HandleError() }
            #expect(owner.issued.withLock { $0.count } == 0)
            #expect(cx_host_destroy(host) == CX_OK)
        }
    }

    struct HandleError: Error {}
}
