import CArguments
import CCX
import CXHost

/// A plugin written in C, registered through `cx_register_plugin`.
final class CPlugin: Plugin {
    let descriptor: PluginDescriptor
    private let functions: Functions
    private unowned let owner: CHost
    /// The handle issued for each live emitter, to name it again in stop_stream.
    private let emitterHandles = Monitor<[ObjectIdentifier: UInt64]>([:])

    /// The plugin's table. The header promises its functions may be called from any
    /// thread, which is what makes sharing it sound.
    struct Functions: @unchecked Sendable {
        let table: cx_plugin
    }

    struct Failure: Error, CustomStringConvertible {
        let code: Int32
        var description: String { "status \(code)" }
    }

    init(descriptor: PluginDescriptor, table: cx_plugin, owner: CHost) {
        self.descriptor = descriptor
        functions = Functions(table: table)
        self.owner = owner
    }

    func call(_ op: String, input: String, reply: Reply) throws {
        guard let call = functions.table.call else { throw Failure(code: -1) }
        let handle = owner.issue(.reply(CReply(reply, owner: owner)))
        let code = Self.withBytes(op) { op, opLength in
            Self.withBytes(input) { input, inputLength in
                call(functions.table.context, op, opLength, input, inputLength, handle)
            }
        }
        if code != 0 {
            // cx.h: a non-zero return releases the reply; the host answers for it.
            owner.release(handle)
            throw Failure(code: code)
        }
    }

    func startStream(_ stream: String, input: String, emitter: StreamEmitter) throws {
        guard let start = functions.table.start_stream else {
            emitter.end()
            return
        }
        let handle = owner.issue(.emitter(CEmitter(emitter, owner: owner)))
        let id = HandleTable<HandleEntry>.id(handle)
        emitterHandles.withLock { $0[ObjectIdentifier(emitter)] = id }
        Self.withBytes(stream) { stream, streamLength in
            Self.withBytes(input) { input, inputLength in
                start(functions.table.context, stream, streamLength, input, inputLength, handle)
            }
        }
    }

    func stopStream(_ emitter: StreamEmitter) {
        let id = emitterHandles.withLock { $0.removeValue(forKey: ObjectIdentifier(emitter)) }
        guard let id, let stop = functions.table.stop_stream else { return }
        stop(functions.table.context, OpaquePointer(bitPattern: UInt(id)))
    }

    /// The host is being destroyed: the plugin frees its context.
    func release() {
        functions.table.release?(functions.table.context)
    }

    private static func withBytes<Result>(
        _ text: String, _ body: (UnsafePointer<CChar>?, Int) -> Result
    ) -> Result {
        var text = text
        return text.withUTF8 { bytes in
            body(bytes.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }, bytes.count)
        }
    }
}
