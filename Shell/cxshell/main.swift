import Foundation

/// cxshell: the Linux headless shell. Subcommands: serve, test, run, ca, healthcheck, mcp.
let usage = """
    usage: cxshell <command> [arguments]

    The headless shell runs the cx host and its plugins on a simulated phone, and
    accepts pushes shaped as a backend sends them to APNs, `xcrun simctl push` and FCM.

    commands:
      serve          the line protocol on standard input and output
      test PATH…     run scenario files (or folders of *.cxs) and report each
      run FILE…      play scenarios and print what the core received
      ca DIR         make the front door's private test CA and server certificate
      healthcheck    exit 0 when a running world's /readyz answers 200
      mcp            the Model Context Protocol over standard input and output, for agents

    `cxshell <command> --help` describes a command. Docs/Shell.md has the details.
    """

/// Each command's help text and what it runs with the rest of the arguments.
let commands: [String: (help: String, run: ([String]) -> Int32)] = [
    "serve": (Serve.help, Serve.run),
    "test": (ScenarioCommands.testHelp, ScenarioCommands.test),
    "run": (ScenarioCommands.runHelp, ScenarioCommands.run),
    "ca": (CACommand.help, CACommand.run),
    "healthcheck": (HealthCheck.help, HealthCheck.run),
    "mcp": (MCPCommand.help, MCPCommand.run),
]

let arguments = Array(CommandLine.arguments.dropFirst())
let rest = Array(arguments.dropFirst())
let status: Int32
if let name = arguments.first, let command = commands[name] {
    if rest.contains("--help") || rest.contains("-h") {
        print(command.help)
        status = 0
    } else {
        status = command.run(rest)
    }
} else if ["--help", "-h", "help"].contains(arguments.first) {
    print(usage)
    status = 0
} else {
    FileHandle.standardError.write(Data((usage + "\n").utf8))
    status = 2
}
exit(status)
