import OrderedJSON
import ShellKit

/// The shell's line handling, on one long-lived session (state carries over between
/// inputs, as in `cxshell serve`, 10,000 inputs at a time). Every line but one of
/// white space only gets exactly one reply, last, whose first key is "reply"; every
/// line before it is a delivery.
nonisolated(unsafe) var session = Session()
nonisolated(unsafe) var inputs = 0

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzShellLine(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    // A world only grows (devices are never removed), so it starts afresh now and then.
    inputs += 1
    if inputs % 10_000 == 0 { session = Session() }
    let line = UnsafeBufferPointer(start: data, count: size)
    let output = session.handle(line: line)
    if line.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
        precondition(output.isEmpty, "a line of white space only is not a request")
        return 0
    }
    guard let reply = output.last.flatMap({ try? JSON.parse(text: $0).objectValue }) else {
        fatalError("no reply")
    }
    precondition(reply.orderedKeys.first == "reply" && (reply["ok"] == true || reply["ok"] == false))
    for line in output.dropLast() {
        precondition((try? JSON.parse(text: line).objectValue?.orderedKeys.first) == "delivery")
    }
    return 0
}
