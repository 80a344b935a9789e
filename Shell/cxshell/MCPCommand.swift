import Foundation
import OrderedJSON

/// `cxshell mcp`: the Model Context Protocol server for agents (Docs/Clients.md, "MCP").
enum MCPCommand {
    static let help = """
        usage: cxshell mcp [--url http://HOST:PORT] [--token TOKEN]

        Speaks the Model Context Protocol over standard input and output (one JSON-RPC
        message a line) to a running world's inspector at --url (or $CXSHELL_URL), with
        --token (or $CXSHELL_API_TOKEN) when it has one. Without a URL it starts a world
        of its own (`cxshell serve --listen 127.0.0.1:0 --keep-running`, its CA in a
        directory of its own) and stops it when the client goes. Its tools make and list
        devices, act as a phone's user, send APNs and FCM pushes, read and wait on the log,
        add and remove chaos rules, advance the clock and reset; a world's refusal comes
        back as the tool's result with isError and the world's sentence.
        """

    static func run(_ arguments: [String]) -> Int32 {
        func refuse(_ sentence: String) -> Int32 {
            FileHandle.standardError.write(Data("cxshell mcp: \(sentence)\n".utf8))
            return 2
        }
        let environment = ProcessInfo.processInfo.environment
        var url = environment["CXSHELL_URL"].flatMap { $0.isEmpty ? nil : $0 }
        var token = environment["CXSHELL_API_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--url":
                guard let value = rest.popFirst() else { return refuse("--url takes http://HOST:PORT") }
                url = value
            case "--token":
                guard let value = rest.popFirst(), !value.isEmpty else { return refuse("--token takes a token") }
                token = value
            default: return refuse("unknown argument '\(argument)'\n\(help)")
            }
        }
        var own: OwnWorld?
        let inspector: InspectorClient
        if let url {
            switch InspectorClient.parse(url: url) {
            case .failure(let problem): return refuse("--url: \(problem)")
            case .success(let (host, port, _)): inspector = InspectorClient(host: host, port: port, token: token)
            }
        } else {
            switch OwnWorld.start() {
            case .failure(let problem): return refuse("the world could not start: \(problem)")
            case .success(let started):
                own = started
                inspector = InspectorClient(host: "127.0.0.1", port: started.port, token: nil)
            }
        }
        let server = MCPServer(inspector: inspector)
        guard let input = LineReader(descriptor: 0) else { return 1 }
        while let line = input.next() {
            guard let answer = server.handle(line: line) else { continue }
            guard writeAll(answer.compactBytes + [0x0A], to: 1) else { break }
        }
        own?.stop()
        return 0
    }
}

/// A world `cxshell mcp` started for itself: stopped (SIGTERM) and its files removed when
/// the client goes.
final class OwnWorld {
    let process: Process
    let port: Int
    let directory: String

    private init(process: Process, port: Int, directory: String) {
        self.process = process
        self.port = port
        self.directory = directory
    }

    static func start() -> Result<OwnWorld, InspectorClient.Problem> {
        let directory = NSTemporaryDirectory() + "cxshell-mcp-\(UUID().uuidString)"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["serve", "--listen", "127.0.0.1:0", "--keep-running", "--ca-dir", directory + "/ca"]
        // Its own environment's settings would not be this world's.
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CXSHELL_") }
        let output = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            return .failure(InspectorClient.Problem("\(error)"))
        }
        let reader = output.fileHandleForReading
        var pending: [UInt8] = []
        while true {
            if let newline = pending.firstIndex(of: 0x0A) {
                let line = Array(pending[..<newline])
                pending.removeSubrange(...newline)
                guard let address = (try? JSON.parse(line))?["listening"]?["address"]?.stringValue else { continue }
                guard let port = address.split(separator: ":").last.flatMap({ Int($0) }) else { break }
                // Its lines (deliveries, reports) are read and dropped: the API has them.
                Thread.detachNewThread { while !reader.availableData.isEmpty {} }
                return .success(OwnWorld(process: process, port: port, directory: directory))
            }
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            pending += chunk
        }
        process.waitUntilExit()
        return .failure(InspectorClient.Problem("cxshell serve ended with status \(process.terminationStatus)"))
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
