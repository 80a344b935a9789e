import OrderedJSON
import ShellKit

/// The tools `cxshell mcp` offers an agent (Docs/Clients.md, "MCP"): each a name, a
/// sentence, an input schema (the OpenAPI document's where it has one) and how its
/// arguments become one inspector request. Pure: a tool's call is a function of its
/// arguments; `MCPServer` sends it.
struct MCPTool: Sendable {
    let name: String
    let description: String
    let inputSchema: JSON
    /// The inspector request the arguments make, or the sentence that refuses them.
    let request: @Sendable (JSONObject) -> Result<MCPRequest, MCPRefusal>
}

/// One inspector request: a method, a path with its query, and a JSON body. `lineOp`: the
/// body is a line-protocol request, whose reply says whether it was refused.
struct MCPRequest: Equatable, Sendable {
    var method: String
    var path: String
    var body: JSON?
    var lineOp = false
}

struct MCPRefusal: Error, Equatable, Sendable {
    let sentence: String
}

enum MCPTools {
    static let all: [MCPTool] = {
        let document = (try? JSON.parse(text: Session.openAPIDocument)) ?? .null
        let logFilters = parameters(
            document, path: "/api/v1/log", ["device", "source", "status", "q", "after", "limit"])
        return [
            MCPTool(
                name: "world_summary", description: "The world: version, address, CA, devices, the log's size, counts.",
                inputSchema: object([:]), request: { _ in .success(MCPRequest(method: "GET", path: "/api/v1/world")) }),
            MCPTool(
                name: "list_devices",
                description:
                    "Devices, 100 a page (limit up to 1000; after: the last id of the previous page), by platform and app state.",
                inputSchema: parameters(document, path: "/api/v1/devices", ["platform", "state", "limit", "after"]),
                request: { arguments in .success(MCPRequest(method: "GET", path: "/api/v1/devices" + query(arguments)))
                }),
            MCPTool(
                name: "create_devices",
                description:
                    "Makes devices (all or none): platform ios, android or web; count; ready: launched, registered for pushes and subscribed to push events. Answers their ids and tokens.",
                inputSchema: document["paths"]?["/api/v1/devices"]?["post"]?["requestBody"]?["content"]?[
                    "application/json"]?["schema"] ?? object([:]),
                request: { arguments in
                    .success(MCPRequest(method: "POST", path: "/api/v1/devices", body: .object(arguments)))
                }),
            MCPTool(
                name: "get_device",
                description: "One device: its state, token, tray, topics, and what its app's core received.",
                inputSchema: object(["device": string("the device id, d1…")], required: ["device"]),
                request: { arguments in
                    device(arguments).map { MCPRequest(method: "GET", path: "/api/v1/devices/\($0)") }
                }),
            MCPTool(
                name: "device_action",
                description:
                    "What the phone's user (or its app's core) does: launch, background, foreground, kill, force_stop, grant_permission, deny_permission, rotate_token, uninstall, install, tap (a tray entry: which = t1 …; button = one of its action ids, text for an input action), dismiss (which), focus_on / focus_off and low_power_on / low_power_off (iOS), doze_on / doze_off (Android), register, subscribe (to the push plugin's events).",
                inputSchema: object(
                    [
                        "device": string("the device id, d1…"),
                        "action": .object(
                            JSONObject([
                                ("type", "string"),
                                ("enum", .array(actions.map { .string($0.key) }.sorted { "\($0)" < "\($1)" })),
                            ])),
                        "which": string("for tap and dismiss: the tray entry's id (t1 …), newest or oldest"),
                        "button": string("for tap: one of the entry's action ids, to press that button instead"),
                        "text": string("for tap on an input action: the user's text"),
                    ], required: ["device", "action"]),
                request: { arguments in
                    let id: String
                    switch device(arguments) {
                    case .failure(let refusal): return .failure(refusal)
                    case .success(let named): id = named
                    }
                    guard let action = arguments["action"]?.stringValue, var line = actions[action]?.objectValue else {
                        return .failure(
                            MCPRefusal(
                                sentence: "\"action\" must be one of \(actions.keys.sorted().joined(separator: ", "))"))
                    }
                    line["device"] = .string(id)
                    if action == "tap" || action == "dismiss" { line["which"] = arguments["which"] ?? .null }
                    if action == "tap" {
                        if let button = arguments["button"] { line["action"] = button }
                        if let text = arguments["text"] { line["text"] = text }
                    }
                    return .success(
                        MCPRequest(method: "POST", path: "/api/v1/requests", body: .object(line), lineOp: true))
                }),
            MCPTool(
                name: "send_apns",
                description:
                    "An APNs push, validated as APNs does: to a device (its current token) or a token; headers (apns-topic, apns-push-type, …) and the JSON body.",
                inputSchema: object(
                    [
                        "device": string("the device id, d1…"), "token": string("a device token, instead of device"),
                        "headers": .object(JSONObject([("type", "object")])),
                        "body": .object(JSONObject([("type", "object")])),
                    ], required: ["body"]),
                request: { arguments in line("apns", arguments, keys: ["device", "token", "headers", "body"]) }),
            MCPTool(
                name: "send_fcm",
                description:
                    "An FCM HTTP v1 send, validated as FCM does: body is {\"message\": {token | topic | condition, data, notification, android}}.",
                inputSchema: object(["body": .object(JSONObject([("type", "object")]))], required: ["body"]),
                request: { arguments in line("fcm", arguments, keys: ["body"]) }),
            MCPTool(
                name: "read_log",
                description: "Log entries, oldest first, by device, source, status (200, 4xx) and text.",
                inputSchema: logFilters,
                request: { arguments in .success(MCPRequest(method: "GET", path: "/api/v1/log" + query(arguments))) }),
            MCPTool(
                name: "wait_for_log",
                description:
                    "Waits (up to wait seconds, at most 30) for the first entry after `after` that matches the filters; answers at once when one is there.",
                inputSchema: merged(
                    logFilters, ["wait": .object(JSONObject([("type", "integer"), ("minimum", 0), ("maximum", 30)]))]),
                request: { arguments in
                    var arguments = arguments
                    if arguments["wait"] == nil { arguments["wait"] = 10 }
                    if arguments["limit"] == nil { arguments["limit"] = 1 }
                    return .success(MCPRequest(method: "GET", path: "/api/v1/log" + query(arguments)))
                }),
            MCPTool(
                name: "add_chaos_rule",
                description: "Adds a fault on demand (Docs/Chaos.md); answers the rule with its id.",
                inputSchema: withoutReadOnly(document["components"]?["schemas"]?["ChaosRule"] ?? object([:])),
                request: { arguments in
                    .success(MCPRequest(method: "POST", path: "/api/v1/chaos", body: .object(arguments)))
                }),
            MCPTool(
                name: "remove_chaos_rule", description: "Removes a chaos rule by id (all: every rule).",
                inputSchema: object(["id": string("c1 …, or all")], required: ["id"]),
                request: { arguments in
                    guard let id = arguments["id"]?.stringValue, !id.isEmpty, !id.contains("/") else {
                        return .failure(MCPRefusal(sentence: "\"id\" must be a chaos rule's id (c1 …) or all"))
                    }
                    return .success(
                        MCPRequest(method: "DELETE", path: "/api/v1/chaos/\(id)", body: .object(JSONObject())))
                }),
            MCPTool(
                name: "list_chaos_rules", description: "The chaos rules, each with how many times it still applies.",
                inputSchema: object([:]), request: { _ in .success(MCPRequest(method: "GET", path: "/api/v1/chaos")) }),
            MCPTool(
                name: "advance_clock",
                description: "Lets time pass at once on the world's clock (TTLs, expirations, JWTs).",
                inputSchema: object(
                    ["advance_ms": .object(JSONObject([("type", "integer"), ("minimum", 0)]))], required: ["advance_ms"]
                ),
                request: { arguments in line("clock", arguments, keys: ["advance_ms"]) }),
            MCPTool(
                name: "reset",
                description:
                    "Makes the world as new but for the parts in keep (devices, credentials, chaos, appwrite, clock, log).",
                inputSchema: document["paths"]?["/api/v1/reset"]?["post"]?["requestBody"]?["content"]?[
                    "application/json"]?[
                        "schema"] ?? object([:]),
                request: { arguments in
                    .success(MCPRequest(method: "POST", path: "/api/v1/reset", body: .object(arguments)))
                }),
        ]
    }()

    /// The line-protocol request each `device_action` makes.
    static let actions: [String: JSON] = [
        "launch": ["op": "launch"], "background": ["op": "background"], "foreground": ["op": "foreground"],
        "kill": ["op": "kill"], "force_stop": ["op": "force_stop"],
        "grant_permission": ["op": "permission", "answer": "grant"],
        "deny_permission": ["op": "permission", "answer": "deny"], "rotate_token": ["op": "rotate_token"],
        "uninstall": ["op": "uninstall"], "install": ["op": "install"], "tap": ["op": "tap"],
        "dismiss": ["op": "dismiss"], "focus_on": ["op": "focus", "on": true],
        "focus_off": ["op": "focus", "on": false],
        "low_power_on": ["op": "low_power", "on": true], "low_power_off": ["op": "low_power", "on": false],
        "doze_on": ["op": "idle", "on": true], "doze_off": ["op": "idle", "on": false],
        "register": ["op": "call", "plugin": "push", "method": "register", "input": ""],
        "subscribe": ["op": "subscribe", "key": "push", "plugin": "push", "stream": "events", "input": ""],
    ]

    static func device(_ arguments: JSONObject) -> Result<String, MCPRefusal> {
        guard let id = arguments["device"]?.stringValue, !id.isEmpty, !id.contains("/"), !id.contains("?") else {
            return .failure(MCPRefusal(sentence: "\"device\" must be a device id (d1 …)"))
        }
        return .success(id)
    }

    /// A line-protocol request of `op` with the arguments named in `keys`.
    static func line(_ op: String, _ arguments: JSONObject, keys: [String]) -> Result<MCPRequest, MCPRefusal> {
        var request = JSONObject([("op", .string(op))])
        for key in keys { if let value = arguments[key] { request[key] = value } }
        return .success(MCPRequest(method: "POST", path: "/api/v1/requests", body: .object(request), lineOp: true))
    }

    /// The arguments as a query string (strings and numbers as they are written).
    static func query(_ arguments: JSONObject) -> String {
        let pairs = arguments.compactMap { key, value -> String? in
            let text: String
            switch value {
            case .string(let string): text = string
            case .number(let number): text = number.text
            case .bool(let bool): text = bool ? "true" : "false"
            default: return nil
            }
            let allowed = CharacterSetOfQuery.unreserved
            let encoded = text.unicodeScalars.map { allowed.contains($0) ? String($0) : percent($0) }.joined()
            return "\(key)=\(encoded)"
        }
        return pairs.isEmpty ? "" : "?" + pairs.joined(separator: "&")
    }

    static func percent(_ scalar: Unicode.Scalar) -> String {
        String(scalar).utf8.map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return "%" + (hex.count == 1 ? "0" + hex : hex)
        }.joined()
    }

    enum CharacterSetOfQuery {
        static let unreserved = Set(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".unicodeScalars)
    }

    // MARK: Schemas

    static func object(_ properties: [String: JSON], required: [String] = []) -> JSON {
        var schema = JSONObject([("type", "object")])
        schema["properties"] = .object(JSONObject(properties.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }))
        if !required.isEmpty { schema["required"] = .array(required.map(JSON.string)) }
        return .object(schema)
    }

    static func string(_ description: String) -> JSON {
        .object(JSONObject([("type", "string"), ("description", .string(description))]))
    }

    static func merged(_ schema: JSON, _ more: [String: JSON]) -> JSON {
        guard var object = schema.objectValue, var properties = object["properties"]?.objectValue else { return schema }
        for (key, value) in more.sorted(by: { $0.key < $1.key }) { properties[key] = value }
        object["properties"] = .object(properties)
        return .object(object)
    }

    /// A schema for the query parameters `names` of GET `path`, from the OpenAPI document
    /// (its `$ref`s to shared parameters followed).
    static func parameters(_ document: JSON, path: String, _ names: [String]) -> JSON {
        var properties: [String: JSON] = [:]
        for parameter in document["paths"]?[path]?["get"]?["parameters"]?.arrayValue ?? [] {
            var resolved = parameter
            if let reference = parameter["$ref"]?.stringValue, let name = reference.split(separator: "/").last {
                resolved = document["components"]?["parameters"]?[String(name)] ?? parameter
            }
            guard let name = resolved["name"]?.stringValue, names.contains(name) else { continue }
            var schema = resolved["schema"]?.objectValue ?? JSONObject([("type", "string")])
            if let description = resolved["description"] { schema["description"] = description }
            properties[name] = .object(schema)
        }
        return object(properties)
    }

    /// A schema without the members the server fills in (`id`, `remaining`).
    static func withoutReadOnly(_ schema: JSON) -> JSON {
        guard var object = schema.objectValue, var properties = object["properties"]?.objectValue else { return schema }
        properties["id"] = nil
        properties["remaining"] = nil
        object["properties"] = .object(properties)
        return .object(object)
    }
}
