import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `cxshell serve --broker` stops cleanly however it is told to (Docs/Reliability.md,
/// "Stopping"): SIGTERM, SIGINT, or the reader of its output going away. Each way it
/// exits 0 and leaves neither its mosquitto nor the broker's directory behind; with
/// --keep-running a gone reader does not stop it.
@Suite(.serialized) struct ServeStopTests {
    /// A `cxshell serve --broker` process, its broker's pid and directory. Started with
    /// posix_spawn and waited for with waitpid: Foundation's Process can miss the exit of
    /// a child that a signal ended while a test thread waits on its run loop.
    final class Served {
        let pid: pid_t
        /// Our ends of its standard input and output.
        let input: FileHandle
        var output: FileHandle?
        let broker: pid_t
        let brokerDirectory: String
        var port: Int?

        init(_ more: [String]) throws {
            var toChild: [Int32] = [-1, -1]
            var fromChild: [Int32] = [-1, -1]
            #expect(pipe(&toChild) == 0 && pipe(&fromChild) == 0)
            // Ours alone: a child another test spawns must not hold this shell's input or
            // output open (dup2 gives the shell its own copies without the flag).
            for end in toChild + fromChild { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
            posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
            for end in toChild + fromChild { posix_spawn_file_actions_addclose(&actions, end) }
            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            var signals = sigset_t()
            sigemptyset(&signals)
            posix_spawnattr_setsigmask(&attributes, &signals)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
            let arguments = [ServeProcessTests.executable.path, "serve", "--broker"] + more
            var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
            defer { for argument in argv { free(argument) } }
            var child: pid_t = 0
            #expect(posix_spawn(&child, arguments[0], &actions, &attributes, &argv, environ) == 0)
            pid = child
            close(toChild[0])
            close(fromChild[1])
            input = FileHandle(fileDescriptor: toChild[1], closeOnDealloc: true)
            let output = FileHandle(fileDescriptor: fromChild[0], closeOnDealloc: false)
            self.output = output
            var pending: [UInt8] = []
            func line() throws -> String {
                while true {
                    if let newline = pending.firstIndex(of: 0x0A) {
                        defer { pending.removeSubrange(...newline) }
                        return String(decoding: pending[..<newline], as: UTF8.self)
                    }
                    let data = output.availableData
                    guard !data.isEmpty else { throw FrontDoorTests.Shell.EndOfOutput() }
                    pending += data
                }
            }
            #expect(try line().hasPrefix(#"{"broker":"mqtt://127.0.0.1:"#))
            if more.contains("--listen") {
                let address = try line().split(separator: "\"").first { $0.hasPrefix("127.0.0.1:") }
                port = address.flatMap { Int($0.split(separator: ":").last ?? "") }
            }
            broker = try #require(Self.children(of: pid).first)
            let command = (try? String(contentsOfFile: "/proc/\(broker)/cmdline", encoding: .utf8)) ?? ""
            let configuration = try #require(command.split(separator: "\0").last { $0.hasSuffix("mosquitto.conf") })
            brokerDirectory = String(configuration.dropLast("/mosquitto.conf".count))
            #expect(FileManager.default.fileExists(atPath: brokerDirectory))
        }

        /// Closes our end of its output: its reader is gone.
        func closeOutput() {
            if let output { close(output.fileDescriptor) }
            output = nil
        }

        /// How it ended: its exit status, or nil when a signal ended it.
        func waitForExit() -> Int32? {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            closeOutput()
            return status & 0x7f == 0 ? (status >> 8) & 0xff : nil
        }

        /// The pids whose parent is `pid` (from /proc, which every Linux has).
        static func children(of pid: pid_t) -> [pid_t] {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return entries.compactMap { Int32($0) }.filter { candidate in
                let stat = (try? String(contentsOfFile: "/proc/\(candidate)/stat", encoding: .utf8)) ?? ""
                let fields = stat[(stat.lastIndex(of: ")") ?? stat.startIndex)...].split(separator: " ")
                return fields.count > 2 && Int32(fields[2]) == pid
            }
        }

        /// Whether the broker process is gone (reaped by the shell, not a zombie of it).
        var brokerGone: Bool {
            let stat = (try? String(contentsOfFile: "/proc/\(broker)/stat", encoding: .utf8)) ?? ""
            return stat.isEmpty || !stat.contains("mosquitto")
        }

    }

    @Test(arguments: [SIGTERM, SIGINT]) func aSignalStopsTheBrokerRemovesItsFilesAndExitsZero(signal: Int32) throws {
        let served = try Served(["--keep-running"])
        kill(served.pid, signal)
        #expect(served.waitForExit() == 0)
        #expect(served.brokerGone)
        #expect(!FileManager.default.fileExists(atPath: served.brokerDirectory))
    }

    @Test func aGoneReaderEndsTheShellCleanly() throws {
        let served = try Served([])
        served.closeOutput()
        served.input.write(Data(#"{"op":"device","platform":"ios"}"#.utf8 + [0x0A]))
        #expect(served.waitForExit() == 0)
        #expect(served.brokerGone)
        #expect(!FileManager.default.fileExists(atPath: served.brokerDirectory))
    }

    @Test func aGoneReaderLeavesAKeptRunningShellServing() throws {
        let ca = ScratchDirectory("cx-stop-ca")
        defer { ca.remove() }
        let served = try Served(["--keep-running", "--listen", "127.0.0.1:0", "--ca-dir", ca.path])
        let port = try #require(served.port)
        served.closeOutput()
        served.input.write(Data(#"{"op":"device","platform":"ios"}"#.utf8 + [0x0A]))
        // The line's reply found no reader; the world made the device all the same, and
        // the API still answers.
        let logged = try FrontDoorTests.Shell.curl(["http://127.0.0.1:\(port)/api/v1/log?source=line&wait=20"])
        #expect(logged.contains(#""op":"device""#), "\(logged)")
        let answer = try FrontDoorTests.Shell.curl(["http://127.0.0.1:\(port)/api/v1/devices/d1"])
        #expect(answer.contains(#""device":"d1""#), "\(answer)")
        #expect(!served.brokerGone)
        kill(served.pid, SIGTERM)
        #expect(served.waitForExit() == 0)
        #expect(served.brokerGone)
    }
}
