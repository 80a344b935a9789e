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
if wanted("memory") { MemoryBenchmark.run() }
if wanted("world") { WorldBenchmark.run() }
if wanted("history") { HistoryBenchmark.run() }
if wanted("fleet") { FleetBenchmark.run() }
if wanted("mqtt") { MQTTBenchmark.run() }
if wanted("frontdoor") { FrontDoorBenchmark.run(executable: here.appendingPathComponent("cxshell")) }
if wanted("frontdoor") || only.contains("fcm") {
    FrontDoorBenchmark.fcm(executable: here.appendingPathComponent("cxshell"))
}
if wanted("instructions") { InstructionBenchmark.run(executable: here.appendingPathComponent("cxshell")) }
if wanted("frontdoor") || only.contains("logcost") {
    FrontDoorBenchmark.logCost(executable: here.appendingPathComponent("cxshell"))
}
