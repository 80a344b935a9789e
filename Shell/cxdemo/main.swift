import CXHost
import EchoPlugin

// Until the headless shell lands: the host and the example plugin, printing what
// the core receives.
let host = PluginHost { delivery in
    switch delivery {
    case .response(let id, let response): print("response \(id): ok=\(response.ok) \(response.output)")
    case .item(let key, let response): print("item [\(key)]: ok=\(response.ok) \(response.output)")
    case .end(let key): print("end [\(key)]")
    }
}
try host.register(EchoPlugin())
try host.subscribe(key: "echoes", plugin: "echo", stream: "echoes")
try host.call("echo", "echo", input: "hello")
try host.call("echo", "ehco", input: "typo")
try host.subscribe(key: "count", plugin: "echo", stream: "count", input: "3")
host.unsubscribe(key: "echoes")
try host.call("echo", "echo", input: "after unsubscribe")
host.waitUntilIdle()
host.shutdown()
