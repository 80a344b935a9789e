import CXHost
import Foundation
import Testing

@Suite struct OneShotTests {
    @Test func H_1_callIsAnsweredOnceWithThePluginsResponse() throws {
        let (host, recorder) = try makeHost()
        let id = try host.call("echo", "echo", input: "hello")
        try host.waitUntilIdle()
        #expect(recorder.all == [.response(id, .success("hello"))])
    }

    @Test func H_1_unknownPluginIsAnsweredWithASentence() throws {
        let (host, recorder) = try makeHost()
        let id = try host.call("camera", "snap")
        try host.waitUntilIdle()
        #expect(recorder.all == [.response(id, .failure("plugin 'camera' is not available (available: echo)"))])
    }

    @Test func H_1_unknownOpListsTheValidOps() throws {
        let (host, recorder) = try makeHost()
        try host.call("echo", "ehco")
        try host.waitUntilIdle()
        #expect(recorder.responses() == [.failure("echo has no op 'ehco'; it has: echo")])
    }

    @Test func H_1_throwingPluginAnswersOkFalseAndHurtsNoOne() throws {
        let bad = ScriptedPlugin(name: "bad", ops: ["go"], onCall: { _, _, _ in throw Boom() })
        let (host, recorder) = try makeHost([bad, TestPlugins.echo()])
        try host.call("bad", "go")
        try host.call("echo", "echo", input: "still here")
        try host.waitUntilIdle()
        #expect(recorder.responses() == [.failure("plugin 'bad' failed on 'go': boom"), .success("still here")])
    }

    @Test func H_1_aThrowAfterAnsweringDoesNotAnswerTwice() throws {
        let plugin = ScriptedPlugin(
            name: "p", ops: ["go"],
            onCall: { _, _, reply in
                reply.succeed("first")
                throw Boom()
            })
        let (host, recorder) = try makeHost([plugin])
        try host.call("p", "go")
        try host.waitUntilIdle()
        #expect(recorder.responses() == [.success("first")])
    }

    @Test func H_1_onlyTheFirstAnswerCounts() throws {
        let plugin = ScriptedPlugin(
            name: "p", ops: ["go"],
            onCall: { _, _, reply in
                #expect(reply.succeed("one"))
                #expect(!reply.succeed("two"))
                #expect(!reply.fail("three"))
            })
        let (host, recorder) = try makeHost([plugin])
        try host.call("p", "go")
        try host.waitUntilIdle()
        #expect(recorder.responses() == [.success("one")])
    }

    @Test func H_1_aReplyDroppedUnansweredAnswersOkFalse() throws {
        let plugin = ScriptedPlugin(name: "p", ops: ["forget"], onCall: { _, _, _ in })
        let (host, recorder) = try makeHost([plugin])
        try host.call("p", "forget")
        try host.waitUntilIdle()
        #expect(recorder.responses() == [.failure("plugin 'p' dropped the call to 'forget' without answering")])
    }

    @Test func H_1_anAnswerFromAnotherThreadLaterIsDelivered() throws {
        let holder = ScriptedPlugin(name: "holder")
        let slow = ScriptedPlugin(name: "slow", ops: ["later"], onCall: { _, _, reply in holder.hold(reply) })
        let (host, recorder) = try makeHost([slow])
        let id = try host.call("slow", "later")
        try host.waitUntilIdle()
        #expect(recorder.all.isEmpty)
        let reply = try #require(holder.heldReplies.withLock { $0.popLast() })
        spawn { reply.succeed("done") }.wait()
        try host.waitUntilIdle()
        #expect(recorder.all == [.response(id, .success("done"))])
    }

    @Test func H_2_notifyIsDispatchedInOrderAndItsAnswerDiscarded() throws {
        let (host, recorder) = try makeHost()
        try host.subscribe(key: "e", plugin: "echo", stream: "echoes")
        try host.notify("echo", "echo", input: "a")
        try host.notify("echo", "echo", input: "b")
        try host.notify("nope", "x")
        let id = try host.call("echo", "echo", input: "c")
        try host.waitUntilIdle()
        #expect(
            recorder.all == [
                .item(key: "e", .success("a")), .item(key: "e", .success("b")),
                .item(key: "e", .success("c")), .response(id, .success("c")),
            ])
    }

    @Test func H_7_textIsPassedThroughByteForByte() throws {
        let (host, recorder) = try makeHost()
        let odd = "not json {\u{0}\"é😀\u{1}\n\\"
        try host.call("echo", "echo", input: odd)
        try host.call("echo", "echo", input: "")
        try host.waitUntilIdle()
        let outputs = recorder.responses().map(\.output)
        #expect(outputs.map { Array($0.utf8) } == [Array(odd.utf8), []])
    }

    @Test func H_1_aCallerChosenIdIsAnsweredUnderThatIdAndRefusedWhileInFlight() throws {
        let holder = ScriptedPlugin(name: "holder")
        let slow = ScriptedPlugin(name: "slow", ops: ["later"], onCall: { _, _, reply in holder.hold(reply) })
        let (host, recorder) = try makeHost([slow, TestPlugins.echo()])
        try host.call("slow", "later", id: CallID(rawValue: 7))
        #expect(throws: HostError.duplicateCallID(CallID(rawValue: 7))) {
            try host.call("echo", "echo", input: "x", id: CallID(rawValue: 7))
        }
        // Generated ids step over the one in flight.
        let generated = (0..<10).map { _ in try? host.call("echo", "echo", input: "g") }
        #expect(!generated.contains(CallID(rawValue: 7)))
        holder.heldReplies.withLock { $0.first }?.succeed("done")
        try host.call("echo", "echo", input: "again", id: CallID(rawValue: 7))
        try host.waitUntilIdle()
        let sevens = recorder.all.filter { if case .response(CallID(rawValue: 7), _) = $0 { true } else { false } }
        #expect(
            sevens == [
                .response(CallID(rawValue: 7), .success("done")), .response(CallID(rawValue: 7), .success("again")),
            ])
    }

    @Test func registeringTwoPluginsWithOneNameIsRefused() throws {
        let (host, _) = try makeHost()
        #expect(throws: HostError.duplicatePlugin("echo")) { try host.register(TestPlugins.echo()) }
    }

    @Test func theHandlerMayCallBackIntoTheHost() throws {
        let recorder = Recorder()
        let box = HostBox()
        let host = PluginHost { delivery in
            recorder.record(delivery)
            if case .response(_, let response) = delivery, response.output == "first" {
                _ = try? box.host?.call("echo", "echo", input: "second")
                // Waiting from the handler would wait for itself: refused at once.
                #expect(throws: HostError.inDeliveryHandler("waitUntilIdle")) { try box.host?.waitUntilIdle() }
            }
        }
        box.host = host
        try host.register(TestPlugins.echo())
        try host.call("echo", "echo", input: "first")
        try host.waitUntilIdle()
        #expect(recorder.responses() == [.success("first"), .success("second")])
    }
}

/// Lets a handler reach the host it belongs to.
final class HostBox: @unchecked Sendable {
    // Written once before any delivery can happen, read only by the handler; weak so
    // that host → handler → box → host is not a cycle.
    weak var host: PluginHost?

    /// The C ABI's cores choose every call id; a notify must never hold one of them.
    @Test func H_2_aPendingNotifyNeverTakesAnIdTheCoreChooses() throws {
        let plugin = ScriptedPlugin(name: "p", ops: ["hold", "echo"]) { op, input, reply in
            if op == "hold" { ScriptedPluginHolder.shared.hold(reply) } else { reply.succeed(input) }
        }
        let (host, recorder) = try makeHost([plugin])
        for _ in 0..<3 { try host.notify("p", "hold") }
        for raw in UInt64(1)...3 { try host.call("p", "echo", input: String(raw), id: CallID(rawValue: raw)) }
        try host.waitUntilIdle()
        #expect(recorder.responses() == [.success("1"), .success("2"), .success("3")])
        ScriptedPluginHolder.shared.release()
    }
}

/// Holds replies for a test and lets them go at its end.
final class ScriptedPluginHolder: Sendable {
    static let shared = ScriptedPluginHolder()
    private let replies = Monitor<[Reply]>([])
    func hold(_ reply: Reply) { replies.withLock { $0.append(reply) } }
    func release() { replies.withLock { $0.removeAll() } }
}
