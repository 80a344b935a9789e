import Foundation

/// A directory of its own under the system's temporary one, for one test, taken away
/// with all it holds by `remove()` (which a test defers) or when it is let go of (a
/// suite's property, at the end of its test). Left behind, every run of the suite added
/// test CAs' private keys and built libraries to the temporary directory.
final class ScratchDirectory: Sendable {
    let path: String

    init(_ prefix: String) {
        path = NSTemporaryDirectory() + "\(prefix)-\(UUID().uuidString)"
    }

    var url: URL { URL(fileURLWithPath: path, isDirectory: true) }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    deinit { remove() }
}
