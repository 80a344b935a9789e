import Foundation

/// cxshell: the Linux headless shell. Subcommands: serve, test, run.
let arguments = Array(CommandLine.arguments.dropFirst())
let usage = """
    usage: cxshell <command> [arguments]

    The headless shell runs the cx host and its plugins on a simulated phone, and
    accepts pushes shaped as a backend sends them to APNs, `xcrun simctl push` and FCM.

    commands:
      serve          the line protocol on standard input and output
      test PATH…     run scenario files (or folders of *.cxs) and report each
      run FILE…      play scenarios and print what the core received

    `cxshell <command> --help` describes a command. Docs/Shell.md has the details.
    """

func wantsHelp(_ rest: [String]) -> Bool { rest.contains("--help") || rest.contains("-h") }

let status: Int32
switch arguments.first {
case "serve":
    if wantsHelp(Array(arguments.dropFirst())) {
        print(Serve.help)
        status = 0
    } else {
        status = Serve.run()
    }
case "test":
    let rest = Array(arguments.dropFirst())
    if wantsHelp(rest) {
        print(ScenarioCommands.testHelp)
        status = 0
    } else {
        status = ScenarioCommands.test(rest)
    }
case "run":
    let rest = Array(arguments.dropFirst())
    if wantsHelp(rest) {
        print(ScenarioCommands.runHelp)
        status = 0
    } else {
        status = ScenarioCommands.run(rest)
    }
case "--help", "-h", "help":
    print(usage)
    status = 0
default:
    FileHandle.standardError.write(Data((usage + "\n").utf8))
    status = 2
}
exit(status)
