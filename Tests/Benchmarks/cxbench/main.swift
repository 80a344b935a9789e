import Foundation
import ShellKit

// cxbench: every performance figure of the project, one JSON line each, measured side
// by side in one run. Build and run in release mode: `make bench`.
#if DEBUG
    FileHandle.standardError.write(Data("cxbench: a debug build measures the debugger's code; use `make bench`\n".utf8))
#endif
// On the heap `cxshell serve` asks for (`HeapTunables`, Docs/Scaling.md), which the
// processes it starts (the shell under callgrind among them) inherit.
HeapTunables.adopt()
let here = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
let only = Set(CommandLine.arguments.dropFirst())
func wanted(_ name: String) -> Bool { only.isEmpty || only.contains(name) }

if wanted("payload") { PayloadBenchmark.run() }
if wanted("host") || only.contains("stream") { HostBenchmark.stream() }
if wanted("host") || only.contains("call") { HostBenchmark.calls() }
if wanted("shell") { ShellBenchmark.run(executable: here.appendingPathComponent("cxshell")) }
/// Runs a benchmark whose figures are the growth of this process's resident memory in a
/// process of its own, unless it is the only one asked for: memory an earlier benchmark
/// freed stays resident and is used again, and hid most of a world's growth
/// (`cxbench shell world` read 2,178 bytes a device, `cxbench world` 5,362).
func measureApart(_ name: String, _ body: () -> Void) {
    guard wanted(name) else { return }
    guard only != [name] else { return body() }
    // Its lines go to the same standard output, after every line written so far.
    fflush(nil)
    let child = Process()
    child.executableURL = Bundle.main.executableURL
    child.arguments = [name]
    do {
        try child.run()
        child.waitUntilExit()
    } catch {
        return FileHandle.standardError.write(Data("cxbench: \(name) did not start: \(error)\n".utf8))
    }
    if child.terminationStatus != 0 {
        FileHandle.standardError.write(Data("cxbench: \(name) ended with status \(child.terminationStatus)\n".utf8))
    }
}

measureApart("memory") { MemoryBenchmark.run() }
measureApart("world") { WorldBenchmark.run() }
// Profiling aids, run only when named: not figures.
for side in ["world-one", "world-many"] where only.contains(side) { WorldBenchmark.profile(many: side == "world-many") }
if wanted("history") { HistoryBenchmark.run() }
measureApart("fleet") { FleetBenchmark.run() }
if wanted("mqtt") { MQTTBenchmark.run() }
if wanted("frontdoor") { FrontDoorBenchmark.run(executable: here.appendingPathComponent("cxshell")) }
if wanted("frontdoor") || only.contains("fcm") {
    FrontDoorBenchmark.fcm(executable: here.appendingPathComponent("cxshell"))
}
if wanted("instructions") { InstructionBenchmark.run(executable: here.appendingPathComponent("cxshell")) }
if wanted("frontdoor") || only.contains("logcost") {
    FrontDoorBenchmark.logCost(executable: here.appendingPathComponent("cxshell"))
}
