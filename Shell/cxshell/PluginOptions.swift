import CXHost
import Foundation
import PluginLoader
import ShellKit

/// `--plugin PATH` (repeatable) of `serve`, `test` and `run`: the libraries, loaded in
/// order at start, each refused with a sentence naming its file (PluginLibrary).
enum PluginOptions {
    /// The arguments without their `--plugin PATH` pairs, and the loaded libraries'
    /// plugins for every app host; a sentence when a library is refused.
    static func load(_ arguments: [String]) -> Result<
        (rest: [String], plugins: @Sendable (PluginHost) -> @Sendable () -> Void), PluginLibrary.Refusal
    > {
        var rest: [String] = []
        var paths: [String] = []
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            guard argument == "--plugin" else {
                rest.append(argument)
                continue
            }
            guard let path = remaining.popFirst() else {
                return .failure(PluginLibrary.Refusal(description: "--plugin takes the path of a shared library"))
            }
            paths.append(path)
        }
        return load(paths: paths).map { (rest, $0) }
    }

    /// The libraries at `paths`, loaded in order: their plugins for every app host.
    static func load(paths: [String]) -> Result<@Sendable (PluginHost) -> @Sendable () -> Void, PluginLibrary.Refusal> {
        var libraries: [PluginLibrary] = []
        for path in paths {
            let taken = Session.builtInPlugins + libraries.flatMap(\.descriptors)
            do {
                libraries.append(try PluginLibrary(path: path, taken: taken))
            } catch {
                return .failure(error)
            }
        }
        let loaded = libraries
        return .success({ host in
            let ends = loaded.map { $0.install(into: host) }
            return { for end in ends { end() } }
        })
    }
}
