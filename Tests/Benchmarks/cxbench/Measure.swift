import Foundation
import ShellKit

/// CXBENCH_SCALE divides every iteration count (for profiling under valgrind).
let scale = max(Int(ProcessInfo.processInfo.environment["CXBENCH_SCALE"] ?? "") ?? 1, 1)

/// Nanoseconds per run of each body, measured side by side: the rounds interleave
/// (a, b, c, a, b, c, …) so that a burst of load on the shared machine hits every
/// contender alike, and each keeps its best round.
func sideBySide(iterations: Int, rounds: Int = 9, _ bodies: [() -> Void]) -> [Double] {
    let iterations = max(iterations / scale, 1)
    for body in bodies {
        for _ in 0..<max(iterations / 10, 1) { body() }
    }
    var best = [Double](repeating: .infinity, count: bodies.count)
    for _ in 0..<rounds {
        for (index, body) in bodies.enumerated() {
            let start = ContinuousClock.now
            for _ in 0..<iterations { body() }
            best[index] = min(best[index], (ContinuousClock.now - start).seconds * 1e9 / Double(iterations))
        }
    }
    return best
}

/// The cores this process may run on (`taskset` narrows them).
let cores: Int = {
    // `Cpus_allowed: 3` in /proc/self/status: a hex mask, one bit per core.
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") })
    else { return 0 }
    return line.dropFirst("Cpus_allowed:".count).reduce(0) { count, digit in
        count + (Int(String(digit), radix: 16)?.nonzeroBitCount ?? 0)
    }
}()

/// Resident set size of this process, in bytes (Linux /proc).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// What a `/proc/…/stat` file says of its process or thread: its name and the CPU seconds
/// it has used in user space and in the kernel; nil when it is gone.
private func procStat(_ path: String) -> (name: String, user: Double, system: Double)? {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8),
        let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")")
    else { return nil }
    // After the name's closing parenthesis: state is field 3, utime 14, stime 15.
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
    let tick = Double(sysconf(Int32(_SC_CLK_TCK)))
    return (String(text[text.index(after: open)..<close]), user / tick, system / tick)
}

/// CPU seconds each of a process's threads has used, in user space and in the kernel, by
/// the thread's name (Linux /proc/<pid>/task; threads of one name summed).
func threadSeconds(of pid: Int32) -> [String: (user: Double, system: Double)] {
    var seconds: [String: (user: Double, system: Double)] = [:]
    for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? [] {
        guard let stat = procStat("/proc/\(pid)/task/\(task)/stat") else { continue }
        let sum = seconds[stat.name] ?? (0, 0)
        seconds[stat.name] = (sum.user + stat.user, sum.system + stat.system)
    }
    return seconds
}

/// What the scheduler did with a process's threads, summed over them (Linux
/// `/proc/<pid>/task/*/schedstat` and `status`): nanoseconds run on a CPU, nanoseconds
/// spent ready to run but waiting for one, and times each was switched out (voluntary:
/// it slept; involuntary: another task took its CPU).
struct SchedulerCounts {
    var runNanoseconds = 0.0
    var waitNanoseconds = 0.0
    var voluntarySwitches = 0.0
    var involuntarySwitches = 0.0

    init() {}

    init(of pid: Int32) {
        for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? [] {
            let directory = "/proc/\(pid)/task/\(task)/"
            if let text = try? String(contentsOfFile: directory + "schedstat", encoding: .utf8) {
                let fields = text.split(separator: " ").compactMap {
                    Double($0.trimmingCharacters(in: .whitespacesAndNewlines))
                }
                if fields.count >= 2 {
                    runNanoseconds += fields[0]
                    waitNanoseconds += fields[1]
                }
            }
            guard let status = try? String(contentsOfFile: directory + "status", encoding: .utf8) else { continue }
            for line in status.split(separator: "\n") {
                let parts = line.split(separator: ":")
                guard parts.count == 2, let value = Double(parts[1].trimmingCharacters(in: .whitespaces)) else {
                    continue
                }
                if parts[0] == "voluntary_ctxt_switches" { voluntarySwitches += value }
                if parts[0] == "nonvoluntary_ctxt_switches" { involuntarySwitches += value }
            }
        }
    }

    /// What was counted from `earlier` to this, divided by `count` (per request).
    func since(_ earlier: SchedulerCounts, per count: Int) -> SchedulerCounts {
        let divisor = Double(max(count, 1))
        var per = SchedulerCounts()
        per.runNanoseconds = (runNanoseconds - earlier.runNanoseconds) / divisor
        per.waitNanoseconds = (waitNanoseconds - earlier.waitNanoseconds) / divisor
        per.voluntarySwitches = (voluntarySwitches - earlier.voluntarySwitches) / divisor
        per.involuntarySwitches = (involuntarySwitches - earlier.involuntarySwitches) / divisor
        return per
    }
}

/// CPU seconds a process has used, user and system (Linux /proc), nil when it is gone.
func cpuSeconds(of pid: Int32) -> Double? {
    procStat("/proc/\(pid)/stat").map { $0.user + $0.system }
}

/// A C program of the benchmarks' own (`Tests/Benchmarks/<source>`), built with `cc -O2`
/// and `libraries` into `binary` for the run; nil when it could not be.
func buildC(_ source: String, libraries: [String], to binary: URL) -> URL? {
    let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(source).path
    let cc = Process()
    cc.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    cc.arguments = ["cc", "-O2", path] + libraries.map { "-l" + $0 } + ["-o", binary.path]
    guard (try? cc.run()) != nil else { return nil }
    cc.waitUntilExit()
    return cc.terminationStatus == 0 ? binary : nil
}

/// One figure: a JSON line with the name, the values and the target verdict.
func report(_ figure: String, _ values: [(String, Double)], target: String, met: Bool, note: String? = nil) {
    var fields = ["\"figure\":\"\(figure)\""]
    for (name, value) in values {
        let text = value.rounded() == value && abs(value) < 1e15 ? String(Int(value)) : String(format: "%.3f", value)
        fields.append("\"\(name)\":\(text)")
    }
    if let note { fields.append("\"note\":\"\(note)\"") }
    fields.append("\"target\":\"\(target)\"")
    fields.append("\"met\":\(met)")
    print("{" + fields.joined(separator: ",") + "}")
}

/// Nanoseconds per request line in each world, side by side (`sideBySide`), each cycling
/// through its 4,096 lines made ahead, so both measure only the shell's work.
func nanosecondsPerLine(_ worlds: [(session: Session, lines: [[UInt8]])]) -> [Double] {
    var next = [Int](repeating: 0, count: worlds.count)
    return sideBySide(
        iterations: 20_000,
        worlds.indices.map { index in
            {
                _ = worlds[index].session.handle(line: worlds[index].lines[next[index] & 4095])
                next[index] &+= 1
            }
        })
}
