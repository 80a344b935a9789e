import Foundation
import ShellKit

/// `cxshell serve`: the line protocol on standard input and output.
enum Serve {
    static let help = """
        usage: cxshell serve

        Reads protocol requests from standard input, one JSON object per line, and writes
        replies and deliveries to standard output, one JSON object per line. Each request
        is handled completely, and the app's host is idle, before the next is read; the
        deliveries it caused are written before its reply. A line of white space only
        gets no reply.
        Exits with status 0 at the end of input. The protocol: Docs/Shell.md.
        """

    static func run() -> Int32 {
        let session = Session()
        var output = [UInt8]()
        output.reserveCapacity(1 << 16)
        guard let input = LineReader(descriptor: 0) else { return 1 }
        while let line = input.next() {
            for text in session.handle(line: line) {
                output.append(contentsOf: text.utf8)
                output.append(0x0A)
            }
            // One write per request keeps a driver that waits for the reply from waiting
            // on a buffer, without a system call per line.
            guard writeAll(output, to: 1) else { return 1 }
            output.removeAll(keepingCapacity: true)
        }
        return 0
    }
}

/// Reads lines of any length from a C stream (a 10 MB line is read whole, then
/// refused by the protocol's limit).
struct LineReader {
    let stream: UnsafeMutablePointer<FILE>

    init?(descriptor: Int32) {
        guard let stream = fdopen(descriptor, "r") else { return nil }
        self.stream = stream
    }

    func next() -> [UInt8]? {
        var buffer: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(buffer) }
        let count = getline(&buffer, &capacity, stream)
        guard count >= 0, let buffer else { return nil }
        var length = count
        if length > 0, buffer[length - 1] == 0x0A { length -= 1 }
        return buffer.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }
}

/// Writes every byte to a file descriptor, retrying short writes; false when the
/// reader went away.
func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
    bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }
}
