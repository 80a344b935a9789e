import Foundation

/// `cxshell healthcheck`: exits 0 when a running world's `/readyz` answers 200, for
/// container health checks in images that have no curl (Docs/Install.md).
enum HealthCheck {
    static let help = """
        usage: cxshell healthcheck [--url http://HOST:PORT] [--timeout SECONDS]

        Asks a running `cxshell serve --listen` for GET /readyz over HTTP/1.1 and exits 0
        when it answers 200, 1 when it answers anything else or cannot be reached (the
        reason on standard error), 2 when the arguments are wrong. Without --url it asks
        the address in CXSHELL_LISTEN (0.0.0.0 and :: as loopback), as a container whose
        `serve` reads the same environment has it. --timeout (default 5) bounds the whole
        check.
        """

    static func run(_ arguments: [String]) -> Int32 {
        func fail(_ status: Int32, _ sentence: String) -> Int32 {
            FileHandle.standardError.write(Data("cxshell healthcheck: \(sentence)\n".utf8))
            return status
        }
        var url: String?
        var timeout = 5
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--url":
                guard let value = rest.popFirst() else { return fail(2, "--url takes http://HOST:PORT") }
                url = value
            case "--timeout":
                guard let value = rest.popFirst().flatMap({ Int($0) }), (1...300).contains(value) else {
                    return fail(2, "--timeout takes a number of seconds from 1 to 300")
                }
                timeout = value
            default: return fail(2, "unknown argument '\(argument)'\n\(help)")
            }
        }
        let target: Target
        switch Target.resolve(url: url, listen: ProcessInfo.processInfo.environment["CXSHELL_LISTEN"]) {
        case .failure(let refusal): return fail(2, refusal.description)
        case .success(let resolved): target = resolved
        }
        switch target.ask(timeoutSeconds: timeout) {
        case .success(200): return 0
        case .success(let status): return fail(1, "\(target.shown) answered \(status)")
        case .failure(let problem): return fail(1, "\(target.shown): \(problem.description)")
        }
    }

    /// Where to ask: a host, a port and a path.
    struct Target: Equatable {
        var host: String
        var port: Int
        var path: String

        var shown: String { "http://\(host.contains(":") ? "[\(host)]" : host):\(port)\(path)" }

        /// From `--url`, else from the address `serve` listens on.
        static func resolve(url: String?, listen: String?) -> Result<Target, Problem> {
            if let url {
                switch InspectorClient.parse(url: url) {
                case .failure(let problem): return .failure(Problem("--url: \(problem)"))
                case .success(let (host, port, path)):
                    return .success(
                        Target(host: host, port: port, path: path.isEmpty || path == "/" ? "/readyz" : path))
                }
            }
            guard let listen, !listen.isEmpty else {
                return .failure(Problem("give --url http://HOST:PORT, or set CXSHELL_LISTEN as serve has it"))
            }
            guard let (address, port) = ServeOptions.splitAddress(listen), port > 0 else {
                return .failure(
                    Problem("CXSHELL_LISTEN is '\(listen)': it takes ADDRESS:PORT with a port from 1 to 65535"))
            }
            let host = address == "0.0.0.0" ? "127.0.0.1" : address == "::" ? "::1" : address
            return .success(Target(host: host, port: port, path: "/readyz"))
        }

        /// The status the world answered, or why there is none.
        func ask(timeoutSeconds: Int) -> Result<Int, Problem> {
            switch InspectorClient(host: host, port: port).send("GET", path, timeoutSeconds: timeoutSeconds) {
            case .success(let answer): return .success(answer.status)
            case .failure(let problem): return .failure(Problem(problem.description))
            }
        }
    }

    struct Problem: Error, Equatable, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
