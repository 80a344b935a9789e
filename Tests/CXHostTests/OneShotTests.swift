import CXHost
import Foundation
import Testing

@Suite struct OneShotTests {
    @Test func H_1_callIsAnsweredOnceWithThePluginsResponse() throws {
        let (host, recorder) = try makeHost()
        let id = try host.call("echo", "echo", input: "hello")
        host.waitUntilIdle()
        #expect(recorder.all == [.response(id, .success("hello"))])
    }

    @Test func H_1_unknownPluginIsAnsweredWithASentence() throws {
        let (host, recorder) = try makeHost()
        let id = try host.call("camera", "snap")
        host.waitUntilIdle()
        #expect(recorder.all == [.response(id, .failure("plugin 'camera' is not available (available: echo)"))])
    }

    @Test func H_1_unknownOpListsTheValidOps() throws {
        let (host, recorder) = try makeHost()
        try host.call("echo", "ehco")
        host.waitUntilIdle()
        #expect(recorder.responses() == [.failure("echo has no op 'ehco'; it has: echo")])
    }

    @Test func H_1_throwingPluginAnswersOkFalseAndHurtsNoOne() throws {
        let bad = ScriptedPlugin(name: "bad", ops: ["go"], onCall: { _, _, _ in throw Boom() })
        let (host, recorder) = try makeHost([bad, TestPlugins.echo()])
        try host.call("bad", "go")
        try host.call("echo", "echo", input: "still here")
        host.waitUntilIdle()
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
        host.waitUntilIdle()
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
        host.waitUntilIdle()
        #expect(recorder.responses() == [.success("one")])
    }

    @Test func H_1_aReplyDroppedUnansweredAnswersOkFalse() throws {
        let plugin = ScriptedPlugin(name: "p", ops: ["forget"], onCall: { _, _, _ in })
        let (host, recorder) = try makeHost([plugin])
        try host.call("p", "forget")
        host.waitUntilIdle()
        #expect(recorder.responses() == [.failure("plugin 'p' dropped the call to 'forget' without answering")])
    }

    @Test func H_1_anAnswerFromAnotherThreadLaterIsDelivered() throws {
        let holder = ScriptedPlugin(name: "holder")
        let slow = ScriptedPlugin(name: "slow", ops: ["later"], onCall: { _, _, reply in holder.hold(reply) })
        let (host, recorder) = try makeHost([slow])
        let id = try host.call("slow", "later")
        host.waitUntilIdle()
        #expect(recorder.all.isEmpty)
        let reply = try #require(holder.heldReplies.withLock { $0.popLast() })
        spawn { reply.succeed("done") }.wait()
        host.waitUntilIdle()
        #expect(recorder.all == [.response(id, .success("done"))])
    }

    @Test func H_2_notifyIsDispatchedInOrderAndItsAnswerDiscarded() throws {
        let (host, recorder) = try makeHost()
        try host.subscribe(key: "e", plugin: "echo", stream: "echoes")
        try host.notify("echo", "echo", input: "a")
        try host.notify("echo", "echo", input: "b")
        try host.notify("nope", "x")
        let id = try host.call("echo", "echo", input: "c")
        host.waitUntilIdle()
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
        host.waitUntilIdle()
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
        host.waitUntilIdle()
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
                #expect(box.host?.waitUntilIdle() == false)
            }
        }
        box.host = host
        try host.register(TestPlugins.echo())
        try host.call("echo", "echo", input: "first")
        host.waitUntilIdle()
        #expect(recorder.responses() == [.success("first"), .success("second")])
    }
}

/// Lets a handler reach the host it belongs to.
final class HostBox: @unchecked Sendable {
    // Written once before any delivery can happen, read only by the handler; weak so
    // that host → handler → box → host is not a cycle.
    weak var host: PluginHost?
}
