import CXHost
import Foundation

/// Collects what the core receives, in order.
final class Recorder: Sendable {
    let deliveries = Monitor<[Delivery]>([])

    var all: [Delivery] { deliveries.withLock { $0 } }

    func record(_ delivery: Delivery) { deliveries.withLock { $0.append(delivery) } }

    func responses() -> [PluginResponse] {
        all.compactMap { if case .response(_, let response) = $0 { response } else { nil } }
    }

    func items(_ key: String) -> [PluginResponse] {
        all.compactMap { if case .item(key, let response) = $0 { response } else { nil } }
    }

    func ends(_ key: String) -> Int {
        all.filter { $0 == .end(key: key) }.count
    }
}

func makeHost(_ plugins: [any Plugin] = [EchoPluginFixture.make()]) throws -> (PluginHost, Recorder) {
    let recorder = Recorder()
    let host = PluginHost { recorder.record($0) }
    for plugin in plugins { try host.register(plugin) }
    return (host, recorder)
}

enum EchoPluginFixture {
    static func make() -> any Plugin {
        TestPlugins.echo()
    }
}

struct Boom: Error, CustomStringConvertible {
    var description: String { "boom" }
}

/// A plugin whose every op and stream does what the test needs.
final class ScriptedPlugin: Plugin {
    let descriptor: PluginDescriptor
    let onCall: @Sendable (String, String, Reply) throws -> Void
    let onStart: @Sendable (String, String, StreamEmitter) throws -> Void
    let stopped = Monitor<[String]>([])
    let heldReplies = Monitor<[Reply]>([])
    let emitters = Monitor<[StreamEmitter]>([])
    /// Every start ("start k:input" when it begins, "started k" when it returns) and
    /// stop ("stop k"), in the order the host made them.
    let log = Monitor<[String]>([])

    init(
        name: String, ops: [String] = [], streams: [String] = [],
        onCall: @escaping @Sendable (String, String, Reply) throws -> Void = { _, input, reply in reply.succeed(input)
        },
        onStart: @escaping @Sendable (String, String, StreamEmitter) throws -> Void = { _, _, _ in }
    ) {
        descriptor = PluginDescriptor(name: name, ops: ops, streams: streams)
        self.onCall = onCall
        self.onStart = onStart
    }

    func call(_ op: String, input: String, reply: Reply) throws {
        try onCall(op, input, reply)
    }

    func startStream(_ stream: String, input: String, emitter: StreamEmitter) throws {
        emitters.withLock { $0.append(emitter) }
        log.withLock { $0.append("start \(emitter.key):\(input)") }
        defer { log.withLock { $0.append("started \(emitter.key)") } }
        try onStart(stream, input, emitter)
    }

    func stopStream(_ emitter: StreamEmitter) {
        stopped.withLock { $0.append(emitter.key) }
        log.withLock { $0.append("stop \(emitter.key)") }
    }

    func hold(_ reply: Reply) { heldReplies.withLock { $0.append(reply) } }
}

/// Runs `body` on a new thread; the returned gate opens when it has finished.
@discardableResult
func spawn(_ body: @escaping @Sendable () -> Void) -> Gate {
    let done = Gate()
    let thread = Thread {
        body()
        done.open()
    }
    thread.start()
    return done
}
