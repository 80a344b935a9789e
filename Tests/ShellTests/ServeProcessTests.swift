import Foundation
import OrderedJSON
import Testing

/// `cxshell serve` as a driver sees it: a process, lines in, lines out.
@Suite struct ServeProcessTests {
    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("cxshell")
    }

    func serve(_ input: Data) throws -> (status: Int32, lines: [String]) {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = ["serve"]
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
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
