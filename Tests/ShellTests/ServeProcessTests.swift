import Foundation
import OrderedJSON
import Testing

/// `cxshell serve` as a driver sees it: a process, lines in, lines out.
@Suite struct ServeProcessTests {
    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("cxshell")
    }

    /// A running `cxshell serve` with pipes on its standard input and output.
    static func start(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> (
        process: Process, stdin: Pipe, stdout: Pipe
    ) {
        let process = Process()
        process.executableURL = executable
        process.arguments = ["serve"]
        process.environment = environment
        let (stdin, stdout) = (Pipe(), Pipe())
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        return (process, stdin, stdout)
    }

    func serve(_ input: Data) throws -> (status: Int32, lines: [String]) {
        let (process, stdin, stdout) = try Self.start()
        // Write on another thread so a full output pipe cannot block the writer.
        let writer = Thread {
            stdin.fileHandleForWriting.write(input)
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
        return (process.terminationStatus, lines)
    }

    @Test func servesUntilEndOfInputAndExitsZero() throws {
        let requests = [
            #"{"op":"device","platform":"ios"}"#, #"{"op":"launch"}"#,
            #"{"op":"subscribe","key":"c","plugin":"echo","stream":"count","input":"2"}"#, "", "garbage",
            #"{"op":"state","id":9}"#,
        ]
        let (status, lines) = try serve(Data((requests.joined(separator: "\n") + "\n").utf8))
        #expect(status == 0)
        #expect(lines.count == 8)  // five replies, two items, one end; the blank line is not a request
        #expect(lines[2] == #"{"delivery":"c","device":"d1","ok":true,"output":"1"}"#)
        #expect(lines[4] == #"{"delivery":"c","device":"d1","end":true}"#)
        #expect(lines[6].contains("not JSON"))
        #expect(lines[7].hasPrefix(#"{"reply":9,"ok":true,"state":"foreground""#))
    }

    @Test func aTenMegabyteLineIsRefusedAndServingGoesOn() throws {
        var input = Data(#"{"op":"device","platform":"android","pad":""#.utf8)
        input.append(Data(repeating: UInt8(ascii: "x"), count: 10 << 20))
        input.append(Data("\"}\n{\"op\":\"state\"}\n".utf8))
        let (status, lines) = try serve(input)
        #expect(status == 0)
        #expect(lines.count == 2)
        #expect(lines.first?.contains("the limit is 1048576") == true)
        #expect(lines.last?.contains("there is no device yet") == true)
    }

    @Test func endOfInputWithoutANewlineStillGetsItsReply() throws {
        let (status, lines) = try serve(Data(#"{"op":"device","platform":"web"}"#.utf8))
        #expect(
            status == 0
                && lines == [#"{"reply":null,"ok":true,"device":"d1","platform":"web","bundle":"com.example.app"}"#])
    }
}

/// `cxshell serve` starts itself again on glibc's huge-page heap (HeapTunables), keeping
/// its pid and its pipes, and leaves a choice the caller made alone.
@Suite struct ServeHugePageTests {
    /// Whether the serving process's heap is marked for huge pages (`hg` in its
    /// /proc/PID/smaps flags), read once it has answered a request, so after any second
    /// start. `tunables`: its GLIBC_TUNABLES (nil: not set).
    func heapAsksForHugePages(tunables: String?) throws -> Bool {
        var environment = ProcessInfo.processInfo.environment
        environment["GLIBC_TUNABLES"] = tunables
        let (process, stdin, stdout) = try ServeProcessTests.start(environment: environment)
        defer {
            try? stdin.fileHandleForWriting.close()
            process.waitUntilExit()
        }
        stdin.fileHandleForWriting.write(Data("{\"op\":\"device\",\"platform\":\"ios\"}\n".utf8))
        var reply = Data()
        while !reply.contains(UInt8(ascii: "\n")) {
            let chunk = stdout.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            reply.append(chunk)
        }
        #expect(String(decoding: reply, as: UTF8.self).contains(#""ok":true"#))
        // glibc rewrites GLIBC_TUNABLES in place as it reads it, so /proc/PID/environ does
        // not show what it was given: the heap's flags show what it did.
        let smaps = try String(contentsOfFile: "/proc/\(process.processIdentifier)/smaps", encoding: .utf8)
        let heap = try #require(smaps.range(of: "[heap]"))
        let flags = try #require(smaps[heap.upperBound...].split(separator: "\n").first { $0.hasPrefix("VmFlags:") })
        return flags.split(separator: " ").contains("hg")
    }

    /// Without THP in the kernel, madvise refuses and no heap is marked; under
    /// AddressSanitizer (whose runs build cxshell with it too), its allocator replaces
    /// glibc's, and glibc's tunable has nothing to act on.
    static let glibcHeapCanAsk =
        FileManager.default.fileExists(atPath: "/sys/kernel/mm/transparent_hugepage/enabled")
        && dlsym(dlopen(nil, RTLD_NOW), "__asan_init") == nil

    @Test(.enabled(if: glibcHeapCanAsk)) func servingStartsAgainOnHugePages() throws {
        #expect(try heapAsksForHugePages(tunables: nil))
    }

    @Test(.enabled(if: glibcHeapCanAsk)) func theCallersOtherTunablesDoNotStopIt() throws {
        #expect(try heapAsksForHugePages(tunables: "glibc.malloc.tcache_count=0"))
    }

    @Test(.enabled(if: glibcHeapCanAsk)) func aHugePageChoiceTheCallerMadeIsLeftAlone() throws {
        #expect(try !heapAsksForHugePages(tunables: "glibc.malloc.hugetlb=0"))
    }
}
