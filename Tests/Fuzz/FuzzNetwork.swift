import Foundation
import HTTPMessage
import OrderedJSON
import ShellKit

/// The front door's services, as the transport hands them requests: the router (host,
/// then path) and APNs, FCM and OAuth behind it, on a long-lived world with one iOS and
/// one Android device. The input is `METHOD\nPATH\nHOST\nname: value…\n\nBODY`. Every
/// request gets an answer with a real status and exactly one report line, last.
nonisolated(unsafe) var world = Session()
nonisolated(unsafe) var requests = 0

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNetwork(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    if requests % 10_000 == 0 {
        world = Session()
        for line in [
            #"{"op":"device","platform":"android","fcm_project":"demo"}"#, #"{"op":"launch"}"#,
            #"{"op":"device","platform":"ios"}"#, #"{"op":"launch"}"#,
        ] { _ = world.handle(line) }
    }
    requests += 1
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let blank = bytes.indices.first { bytes[$0] == 0x0A && $0 + 1 < bytes.count && bytes[$0 + 1] == 0x0A }
    let head = String(decoding: bytes[..<(blank ?? bytes.count)], as: UTF8.self).split(separator: "\n")
    let body = blank.map { Array(bytes[($0 + 2)...]) } ?? []
    var headers: [(name: String, value: String)] = []
    if head.count > 0 { headers.append((":method", String(head[0]))) }
    if head.count > 1 { headers.append((":path", String(head[1]))) }
    if head.count > 2 { headers.append((":authority", String(head[2]))) }
    for line in head.dropFirst(3) {
        let parts = line.split(separator: ":", maxSplits: 1)
        if parts.count == 2 { headers.append((parts[0].lowercased(), parts[1].trimmingCharacters(in: .whitespaces))) }
    }
    let exchange = world.handle(
        network: HTTPRequest(headers: headers, body: body, serverName: nil, tls: size % 2 == 0, http2: size % 3 != 0))
    precondition((200...599).contains(exchange.response.status), "status \(exchange.response.status)")
    guard let report = exchange.lines.last.flatMap({ try? JSON.parse(text: $0).objectValue }) else {
        fatalError("no report line")
    }
    precondition(report.orderedKeys.first == "network" && report["effect"]?.stringValue != nil)
    for line in exchange.lines.dropLast() {
        precondition((try? JSON.parse(text: line).objectValue?.orderedKeys.first) == "delivery")
    }
    return 0
}
