import Foundation
import ShellKit

/// What `cxshell serve` was asked for, from its flags and, for each flag not given, its
/// `CXSHELL_*` variable (Docs/Install.md): a flag wins over its variable, and a variable
/// that is empty counts as unset. A pure function of the arguments and the environment.
struct ServeOptions: Equatable {
    var listen: String?
    var caDirectory = ".cxshell/ca"
    var keepRunning = false
    var logMax = RequestLog.defaultMax
    var apiToken: String?
    var apiHosts: [String] = []
    var inspector = true
    var broker = false
    var logSecrets = false
    var plugins: [String] = []
    var state: String?
    var stateEvery = 10
    var fixture: String?

    /// Each variable, the flag it stands for, and how it is read (Docs/Install.md).
    static let variables: [(name: String, flag: String, kind: Kind)] = [
        ("CXSHELL_LISTEN", "--listen", .value),
        ("CXSHELL_CA_DIR", "--ca-dir", .value),
        ("CXSHELL_KEEP_RUNNING", "--keep-running", .boolean),
        ("CXSHELL_LOG_MAX", "--log-max", .value),
        ("CXSHELL_API_TOKEN", "--api-token", .value),
        ("CXSHELL_API_HOST", "--api-host", .list(",")),
        ("CXSHELL_NO_INSPECTOR", "--no-inspector", .boolean),
        ("CXSHELL_BROKER", "--broker", .boolean),
        ("CXSHELL_LOG_SECRETS", "--log-secrets", .boolean),
        ("CXSHELL_PLUGINS", "--plugin", .list(":")),
        ("CXSHELL_STATE", "--state", .value),
        ("CXSHELL_STATE_EVERY", "--state-every", .value),
        ("CXSHELL_FIXTURE", "--fixture", .value),
    ]

    enum Kind: Equatable {
        /// One value, as the flag takes it.
        case value
        /// A switch: 1, true, yes or on sets it; 0, false, no or off leaves it unset.
        case boolean
        /// Several values, split at the separator, each as a repeated flag.
        case list(Character)
    }

    /// The options, or the sentence that refuses them (naming the flag, or the variable
    /// when the value came from one).
    static func parse(_ arguments: [String], environment: [String: String]) -> Result<ServeOptions, Refusal> {
        var given: [(flag: String, value: String?, source: String)] = []
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--keep-running", "--no-inspector", "--broker", "--log-secrets":
                given.append((argument, nil, argument))
            case "--listen", "--ca-dir", "--log-max", "--api-token", "--api-host", "--plugin", "--fixture", "--state",
                "--state-every":
                given.append((argument, rest.popFirst(), argument))
            default:
                return .failure(Refusal("unknown argument '\(argument)'"))
            }
        }
        let flagsGiven = Set(given.map(\.flag))
        var fromEnvironment: [(flag: String, value: String?, source: String)] = []
        for variable in variables where !flagsGiven.contains(variable.flag) {
            guard let text = environment[variable.name], !text.isEmpty else { continue }
            switch variable.kind {
            case .value: fromEnvironment.append((variable.flag, text, variable.name))
            case .boolean:
                switch text.lowercased() {
                case "1", "true", "yes", "on": fromEnvironment.append((variable.flag, nil, variable.name))
                case "0", "false", "no", "off": break
                default:
                    return .failure(
                        Refusal("\(variable.name) is '\(text)': it takes 1, true, yes or on, or 0, false, no or off"))
                }
            case .list(let separator):
                for item in text.split(separator: separator, omittingEmptySubsequences: true) {
                    fromEnvironment.append((variable.flag, item.trimmingCharacters(in: .whitespaces), variable.name))
                }
            }
        }
        var options = ServeOptions()
        for (flag, value, source) in fromEnvironment + given {
            if let refusal = options.apply(flag, value, source: source) { return .failure(refusal) }
        }
        return .success(options)
    }

    /// Sets what one flag says; a sentence naming `source` when its value is not one.
    private mutating func apply(_ flag: String, _ value: String?, source: String) -> Refusal? {
        let fromVariable = source.hasPrefix("CXSHELL_")
        func refuse(_ expected: String) -> Refusal {
            if fromVariable { return Refusal("\(source) is '\(value ?? "")': it takes \(expected)") }
            return Refusal("\(flag) takes \(expected)" + (value.map { ", not '\($0)'" } ?? ""))
        }
        switch flag {
        case "--keep-running": keepRunning = true
        case "--no-inspector": inspector = false
        case "--broker": broker = true
        case "--log-secrets": logSecrets = true
        case "--listen":
            guard let value, Self.splitAddress(value) != nil else {
                return refuse("ADDRESS:PORT (a port from 0 to 65535)")
            }
            listen = value
        case "--ca-dir":
            guard let value, !value.isEmpty else { return refuse("a directory") }
            caDirectory = value
        case "--log-max":
            guard let number = value.flatMap({ Int($0) }), number >= 0 else {
                return refuse("a number of entries (0 or more)")
            }
            logMax = number
        case "--api-token":
            guard let value, !value.isEmpty else { return refuse("a token") }
            apiToken = value
        case "--api-host":
            guard let value, !value.isEmpty else { return refuse("a host name") }
            apiHosts.append(value.lowercased())
        case "--plugin":
            guard let value, !value.isEmpty else { return refuse("the path of a shared library") }
            plugins.append(value)
        case "--state":
            guard let value, !value.isEmpty else { return refuse("the path of a state file") }
            state = value
        case "--state-every":
            guard let seconds = value.flatMap({ Int($0) }), (1...86_400).contains(seconds) else {
                return refuse("a number of seconds from 1 to 86400")
            }
            stateEvery = seconds
        case "--fixture":
            guard let value, !value.isEmpty else { return refuse("the path of a fixture file") }
            fixture = value
        default: return Refusal("unknown argument '\(flag)'")
        }
        return nil
    }

    /// The address and port of `ADDRESS:PORT` (an IPv6 address may be in brackets).
    static func splitAddress(_ listen: String) -> (address: String, port: Int)? {
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]),
            (0...65_535).contains(port)
        else { return nil }
        let address = String(listen[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        guard !address.isEmpty else { return nil }
        return (address, port)
    }

    struct Refusal: Error, Equatable, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
