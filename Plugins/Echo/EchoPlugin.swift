import CXHost

/// The example plugin: the smallest complete plugin, for plugin authors to copy
/// and for tests to drive.
///
/// - op `echo`: answers `ok = true` with its input, and emits that input to every
///   live `echoes` subscription.
/// - stream `count`: input `N` (0…10000) emits `"1"` … `"N"`, then ends.
/// - stream `echoes`: stays open and emits the input of every later `echo` call.
public final class EchoPlugin: Plugin {
    public static let pluginDescriptor = PluginDescriptor(name: "echo", ops: ["echo"], streams: ["count", "echoes"])
    public var descriptor: PluginDescriptor { Self.pluginDescriptor }

    /// The live `echoes` subscriptions, in subscription order.
    private let listeners = Monitor<[StreamEmitter]>([])

    public init() {}

    public func call(_ op: String, input: String, reply: Reply) throws {
        // Snapshot under the lock, emit outside it: never hold a lock while calling out.
        let current = listeners.withLock { $0 }
        for listener in current { listener.emit(input) }
        reply.succeed(input)
    }

    public func startStream(_ stream: String, input: String, emitter: StreamEmitter) throws {
        switch stream {
        case "count":
            guard let count = Int(input), (0...10_000).contains(count) else {
                throw EchoError.badCount(input)
            }
            for number in 0..<count { emitter.emit(String(number + 1)) }
            emitter.end()
        default:
            listeners.withLock { $0.append(emitter) }
        }
    }

    public func stopStream(_ emitter: StreamEmitter) {
        listeners.withLock { $0.removeAll { $0 === emitter } }
    }
}

enum EchoError: Error, CustomStringConvertible {
    case badCount(String)

    var description: String {
        switch self {
        case .badCount(let input): "count needs a whole number from 0 to 10000, got '\(input)'"
        }
    }
}
