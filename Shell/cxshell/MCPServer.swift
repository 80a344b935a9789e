import Foundation
import OrderedJSON
import ShellKit

/// `cxshell mcp`: the Model Context Protocol over standard input and output (JSON-RPC 2.0,
/// one message a line), its tools (MCPTools) answered by a running world's inspector. A
/// world's refusal is a tool result with `isError` and the world's sentence word for
/// word, never a protocol error; a message that is not JSON-RPC gets JSON-RPC's error.
struct MCPServer {
    /// The protocol revisions this server speaks; a client's offer among them is answered
    /// in kind, any other with the newest.
    static let versions = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]

    let inspector: InspectorClient

    /// The answer to one message line; nil for a notification (nothing is answered).
    func handle(line: [UInt8]) -> JSON? {
        guard let message = try? JSON.parse(line), let object = message.objectValue else {
            return Self.error(id: .null, code: -32700, "the message is not JSON")
        }
        guard let method = object["method"]?.stringValue else {
            return object["id"] == nil ? nil : Self.error(id: object["id"] ?? .null, code: -32600, "no method")
        }
        guard let id = object["id"] else { return nil }  // a notification: initialized, cancelled, …
        let parameters = object["params"]?.objectValue ?? JSONObject()
        switch method {
        case "initialize":
            let offered = parameters["protocolVersion"]?.stringValue ?? ""
            return Self.result(
                id: id,
                [
                    ("protocolVersion", .string(Self.versions.contains(offered) ? offered : Self.versions.last!)),
                    ("capabilities", .object(JSONObject([("tools", .object(JSONObject([("listChanged", false)])))]))),
                    (
                        "serverInfo",
                        .object(JSONObject([("name", "cxshell"), ("version", .string(Session.version))]))
                    ),
                    (
                        "instructions",
                        "A world of simulated phones: make devices, act as their users, send APNs and FCM pushes, read and wait on the log, add faults, move the clock, reset. Every result is the world's JSON."
                    ),
                ])
        case "ping": return Self.result(id: id, [])
        case "tools/list":
            let tools = MCPTools.all.map { tool in
                JSON.object(
                    JSONObject([
                        ("name", .string(tool.name)), ("description", .string(tool.description)),
                        ("inputSchema", tool.inputSchema),
                    ]))
            }
            return Self.result(id: id, [("tools", .array(tools))])
        case "tools/call":
            guard let name = parameters["name"]?.stringValue, let tool = MCPTools.all.first(where: { $0.name == name })
            else {
                return Self.error(
                    id: id, code: -32602, "no tool '\(parameters["name"]?.stringValue ?? "")'; tools/list names them")
            }
            let arguments = parameters["arguments"]?.objectValue ?? JSONObject()
            return Self.result(id: id, call(tool, arguments))
        default:
            return Self.error(id: id, code: -32601, "no method '\(method)'")
        }
    }

    /// A tool's result: the world's JSON as text, `isError` with its sentence when refused.
    func call(_ tool: MCPTool, _ arguments: JSONObject) -> [(String, JSON)] {
        func failed(_ sentence: String) -> [(String, JSON)] {
            [("content", .array([Self.text(sentence)])), ("isError", true)]
        }
        let request: MCPRequest
        switch tool.request(arguments) {
        case .failure(let refusal): return failed(refusal.sentence)
        case .success(let made): request = made
        }
        let wait = request.path.contains("wait=") ? 45 : 60
        let answer: InspectorClient.Answer
        switch inspector.send(request.method, request.path, body: request.body?.compactBytes, timeoutSeconds: wait) {
        case .failure(let problem): return failed("the world at \(inspector.shown) did not answer: \(problem)")
        case .success(let answered): answer = answered
        }
        let value = try? JSON.parse(answer.body)
        if answer.status >= 400 {
            return failed(value?["error"]?.stringValue ?? "the world answered \(answer.status)")
        }
        let text = answer.body.isEmpty ? "{\"status\":\(answer.status)}" : String(decoding: answer.body, as: UTF8.self)
        // A line-protocol request answers 200 with its reply last: refused when not ok.
        if request.lineOp, let reply = value?["lines"]?.arrayValue?.last, reply["ok"] == false {
            var result = failed(reply["error"]?.stringValue ?? reply["error"]?.compactText ?? "refused")
            result[0] = ("content", .array([Self.text(reply["error"]?.stringValue ?? "refused"), Self.text(text)]))
            return result
        }
        return [("content", .array([Self.text(text)])), ("isError", false)]
    }

    static func text(_ text: String) -> JSON { .object(JSONObject([("type", "text"), ("text", .string(text))])) }

    static func result(id: JSON, _ members: [(String, JSON)]) -> JSON {
        .object(JSONObject([("jsonrpc", "2.0"), ("id", id), ("result", .object(JSONObject(members)))]))
    }

    static func error(id: JSON, code: Int64, _ message: String) -> JSON {
        .object(
            JSONObject([
                ("jsonrpc", "2.0"), ("id", id),
                ("error", .object(JSONObject([("code", .integer(code)), ("message", .string(message))]))),
            ]))
    }
}
