import CXHost
import Foundation
import PluginLoader
import ShellKit

/// `cxshell test` and `cxshell run`.
enum ScenarioCommands {
    static let testHelp = """
        usage: cxshell test [--plugin LIBRARY]... PATH…

        Runs scenario files (PATH may be a folder: every *.cxs below it, in name order)
        and prints PASS or FAIL for each; a failure shows the line, what was expected and
        what the shell wrote. Ends with "Scenarios: N passed, M failed"; exits 1 when any
        scenario failed, 2 when a file cannot be read or parsed.
        The scenario format: Docs/Shell.md. --plugin LIBRARY loads a plugin library into
        every app (as cxshell serve does; Docs/Rust.md).
        """

    static let runHelp = """
        usage: cxshell run [--plugin LIBRARY]... FILE…

        Plays scenario files and prints a readable transcript: each request, what the
        core received (← key  output), and the reply. Colour on a terminal, plain
        otherwise (or with NO_COLOR set). Exits 1 when an expectation in a file failed.
        """

    static func test(_ arguments: [String]) -> Int32 {
        let paths: [String]
        let plugins: @Sendable (PluginHost) -> @Sendable () -> Void
        switch PluginOptions.load(arguments) {
        case .failure(let refusal): return refuse("test", refusal)
        case .success(let loaded): (paths, plugins) = loaded
        }
        guard !paths.isEmpty else {
            print(testHelp)
            return 2
        }
        var passed = 0
        var failed = 0
        for file in files(paths) {
            guard let scenario = load(file) else { return 2 }
            let run = ScenarioRunner.run(scenario, plugins: plugins)
            if run.passed {
                passed += 1
                print("PASS \(file) (\(run.exchanges.count) requests)")
            } else {
                failed += 1
                print("FAIL \(file)")
                if let failure = run.firstFailure {
                    print("  while: \(failure.request)")
                    print("  " + (failure.failure ?? ""))
                }
            }
        }
        print("Scenarios: \(passed) passed, \(failed) failed")
        return failed == 0 ? 0 : 1
    }

    static func run(_ arguments: [String]) -> Int32 {
        let paths: [String]
        let plugins: @Sendable (PluginHost) -> @Sendable () -> Void
        switch PluginOptions.load(arguments) {
        case .failure(let refusal): return refuse("run", refusal)
        case .success(let loaded): (paths, plugins) = loaded
        }
        guard !paths.isEmpty else {
            print(runHelp)
            return 2
        }
        let color = isatty(1) != 0 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
        var allPassed = true
        for file in files(paths) {
            guard let scenario = load(file) else { return 2 }
            let run = ScenarioRunner.run(scenario, plugins: plugins)
            allPassed = allPassed && run.passed
            print(Transcript.render(run, color: color))
            print()
        }
        return allPassed ? 0 : 1
    }

    static func refuse(_ command: String, _ refusal: PluginLibrary.Refusal) -> Int32 {
        FileHandle.standardError.write(Data("cxshell \(command): \(refusal)\n".utf8))
        return 2
    }

    /// Files as given, and every *.cxs below a folder, in name order.
    static func files(_ paths: [String]) -> [String] {
        paths.flatMap { path -> [String] in
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else {
                return [path]
            }
            let found = FileManager.default.enumerator(atPath: path)?.compactMap { $0 as? String } ?? []
            return found.filter { $0.hasSuffix(".cxs") }.sorted().map { (path as NSString).appendingPathComponent($0) }
        }
    }

    static func load(_ file: String) -> Scenario? {
        guard let data = FileManager.default.contents(atPath: file) else {
            FileHandle.standardError.write(Data("cxshell: cannot read \(file)\n".utf8))
            return nil
        }
        do {
            return try Scenario(name: file, text: String(decoding: data, as: UTF8.self))
        } catch {
            FileHandle.standardError.write(Data("cxshell: \(file): \(error)\n".utf8))
            return nil
        }
    }
}
