import Foundation
import Loopback
import OrderedJSON
import Testing

/// `cxshell serve` configured like a service (Docs/Install.md): every flag also from its
/// `CXSHELL_*` variable, a flag winning over it, a bad value refused at start with a
/// sentence naming the variable; `cxshell healthcheck`; `--fixture` run before the port
/// answers.
@Suite struct ServeConfigurationTests {
    /// Runs `cxshell` with no input to the end: its status, output and errors.
    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> (
        status: Int32, output: String, errors: String
    ) {
        let process = Process()
        process.executableURL = ServeProcessTests.executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CXSHELL_") }
            .merging(environment) { $1 }
        let (output, errors) = (Pipe(), Pipe())
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let written = output.fileHandleForReading.readDataToEndOfFile()
        let said = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: written, as: UTF8.self), String(decoding: said, as: UTF8.self)
        )
    }

    @Test func aVariableSetsWhatItsFlagWouldAndTheFlagWins() throws {
        let directory = NSTemporaryDirectory() + "cxshell-config-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // From the environment alone: the port, the CA's directory, the log's size.
        let shell = try FrontDoorTests.Shell(
            environment: ["CXSHELL_LOG_MAX": "7", "CXSHELL_API_HOST": "world.test, other.test"])
        let api = InspectorTests()
        #expect(try api.call(shell, "GET", "/api/v1/world").json?["log"]?["max"] == 7)
        #expect(try api.call(shell, "GET", "/api/v1/world", host: "other.test").status == 200)
        #expect(try api.call(shell, "GET", "/api/v1/world", host: "elsewhere.test").status == 421)
        #expect(shell.stop() == 0)
        // A flag wins over its variable, even one that would be refused.
        let flagged = try FrontDoorTests.Shell(
            environment: ["CXSHELL_LOG_MAX": "many", "CXSHELL_NO_INSPECTOR": "yes"], arguments: ["--log-max", "3"])
        #expect(try api.call(flagged, "GET", "/api/v1/world").status == 404)  // no inspector
        #expect(flagged.stop() == 0)
        // CXSHELL_LISTEN and CXSHELL_CA_DIR: the first line says where.
        let (status, output, _) = try Self.run(
            ["serve"], environment: ["CXSHELL_LISTEN": "127.0.0.1:0", "CXSHELL_CA_DIR": directory + "/ca"])
        #expect(status == 0)
        #expect(output.hasPrefix(#"{"listening":{"address":"127.0.0.1:"#), "\(output)")
        #expect(output.contains(directory + "/ca/ca.pem"))
    }

    @Test(arguments: [
        (["CXSHELL_LOG_MAX": "-1"], "CXSHELL_LOG_MAX is '-1': it takes a number of entries (0 or more)"),
        (["CXSHELL_LISTEN": "8443"], "CXSHELL_LISTEN is '8443': it takes ADDRESS:PORT (a port from 0 to 65535)"),
        (["CXSHELL_BROKER": "maybe"], "CXSHELL_BROKER is 'maybe': it takes 1, true, yes or on, or 0, false, no or off"),
        (["CXSHELL_LISTEN": "10.1.2.3:0", "CXSHELL_NO_INSPECTOR": "no"], "is not a loopback address"),
        (["CXSHELL_STATE_EVERY": "0"], "CXSHELL_STATE_EVERY is '0': it takes a number of seconds from 1 to 86400"),
        (["CXSHELL_PLUGINS": "/nowhere/libnone.so"], "/nowhere/libnone.so"),
        (["CXSHELL_FIXTURE": "/nowhere/fixture.cxs"], "the fixture /nowhere/fixture.cxs cannot be read"),
    ])
    func aBadVariableIsRefusedAtStartByName(environment: [String: String], sentence: String) throws {
        let (status, output, errors) = try Self.run(["serve"], environment: environment)
        #expect(status == 2)
        #expect(output.isEmpty)
        #expect(errors.contains("cxshell serve: " + sentence) || errors.contains(sentence), "\(errors)")
    }

    @Test func aFixtureRunsBeforeThePortAnswersAndARefusedLineStopsTheStart() throws {
        let fixture = NSTemporaryDirectory() + "cxshell-fixture-\(UUID().uuidString).cxs"
        defer { try? FileManager.default.removeItem(atPath: fixture) }
        try Data(
            """
            # two phones, the first ready for pushes
            device {"platform":"ios"}
            launch
            {"op":"device","platform":"android"}

            """.utf8
        ).write(to: URL(fileURLWithPath: fixture))
        let shell = try FrontDoorTests.Shell(environment: ["CXSHELL_FIXTURE": fixture])
        // The first line (the port) comes after the fixture ran: the devices are there.
        let devices = try InspectorTests().call(shell, "GET", "/api/v1/devices").json?["devices"]?.arrayValue ?? []
        #expect(devices.map { $0["device"] } == ["d1", "d2"])
        #expect(devices.first?["state"] == "foreground")
        let log = try InspectorTests().call(shell, "GET", "/api/v1/log?source=fixture").json?["entries"]?.arrayValue
        #expect(log?.count == 3)
        #expect(shell.stop() == 0)

        try Data("device {\"platform\":\"ios\"}\n\ndevice {\"platform\":\"pager\"}\n".utf8).write(
            to: URL(fileURLWithPath: fixture))
        let (status, output, errors) = try Self.run(["serve", "--listen", "127.0.0.1:0", "--fixture", fixture])
        #expect(status == 2)
        #expect(output.isEmpty, "the port never opened")
        #expect(errors.contains("the fixture \(fixture) stopped at line 3"), "\(errors)")
        #expect(errors.contains(#""platform" must be ios, android or web, not 'pager'"#), "\(errors)")
    }

    /// A state file's Appwrite project whose broker cannot be reached at start: the world
    /// starts all the same, says so on standard error by name, and keeps the project.
    @Test func aStateFilesProjectWithNoBrokerIsNamedAtStartAndKept() throws {
        let path = NSTemporaryDirectory() + "cxshell-state-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let closed = try LoopbackPort.free()  // free: nothing listens there
        let endpoint = "mqtt://127.0.0.1:\(closed)"
        try Data(
            #"{"cxshell_state":1,"appwrite":{"appwrite_projects":[{"id":"p1","key":"k1","endpoint":"\#(endpoint)"}]}}"#
                .utf8
        ).write(to: URL(fileURLWithPath: path))
        let (status, _, errors) = try Self.run(["serve", "--listen", "127.0.0.1:0", "--state", path])
        #expect(status == 0, "\(errors)")
        #expect(
            errors.contains(
                "cxshell serve: the state file's Appwrite project p1 has no broker: \(endpoint) could not be set up"),
            "\(errors)")
        let kept = try JSON.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(kept["appwrite"]?["appwrite_projects"]?.arrayValue?.first?["endpoint"]?.stringValue == endpoint)
    }

    @Test func aHealthCheckIsZeroOnlyWhenReadyzAnswers200() throws {
        let shell = try FrontDoorTests.Shell()
        let url = "http://127.0.0.1:\(shell.port)"
        #expect(try Self.run(["healthcheck", "--url", url]).status == 0)
        #expect(try Self.run(["healthcheck"], environment: ["CXSHELL_LISTEN": "0.0.0.0:\(shell.port)"]).status == 0)
        #expect(shell.stop() == 0)
        // Nothing listens there now.
        let gone = try Self.run(["healthcheck", "--url", url])
        #expect(gone.status == 1)
        #expect(gone.errors.contains("\(url)/readyz: cannot connect"), "\(gone.errors)")
        // Wrong arguments are 2, with the sentence.
        let refused = try Self.run(["healthcheck", "--url", "https://127.0.0.1:1"])
        #expect(refused.status == 2)
        #expect(refused.errors.contains("--url: the URL must start with http://"), "\(refused.errors)")
        let unset = try Self.run(["healthcheck"])
        #expect(unset.status == 2)
        #expect(unset.errors.contains("give --url http://HOST:PORT, or set CXSHELL_LISTEN"))
    }
}
