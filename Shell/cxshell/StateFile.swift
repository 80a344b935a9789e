import Foundation

/// `serve --state FILE`: where the world is kept across restarts. Each save writes a file
/// beside it and renames it over the old one, so a reader, or a crash mid-write, finds
/// either the last state or the one before, never half of one. The last save (at a clean
/// stop) closes it: a periodic save still under way after it is dropped.
final class StateFile: @unchecked Sendable {
    let path: String
    private let lock = NSLock()
    private var closed = false

    init(path: String) { self.path = path }

    /// The file's bytes; nil when there is none yet; a sentence when it cannot be read.
    func read() -> Result<[UInt8]?, Problem> {
        guard FileManager.default.fileExists(atPath: path) else { return .success(nil) }
        guard let data = FileManager.default.contents(atPath: path) else {
            return .failure(Problem("it cannot be read"))
        }
        return .success(Array(data))
    }

    /// Replaces the file with `bytes`, atomically; a sentence when it cannot. `last`: no
    /// save after this one.
    @discardableResult
    func write(_ bytes: [UInt8], last: Bool = false) -> Problem? {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return nil }
        if last { closed = true }
        let temporary = path + ".\(getpid()).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return Problem(String(cString: strerror(errno))) }
        let written = writeAll(bytes, to: descriptor) && fsync(descriptor) == 0
        let problem = written ? nil : Problem(String(cString: strerror(errno)))
        close(descriptor)
        guard problem == nil, rename(temporary, path) == 0 else {
            let why = problem ?? Problem(String(cString: strerror(errno)))
            unlink(temporary)
            return why
        }
        return nil
    }

    struct Problem: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
