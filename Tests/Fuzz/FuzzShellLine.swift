import OrderedJSON
import ShellKit

/// The shell's line handling, on one long-lived session (state carries over between
/// inputs, as in `cxshell serve`). Every line gets exactly one reply, last, whose
/// first key is "reply"; every line before it is a delivery.
nonisolated(unsafe) let session = Session()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzShellLine(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let output = session.handle(line: UnsafeBufferPointer(start: data, count: size))
    guard let reply = output.last.flatMap({ try? JSON.parse(text: $0).objectValue }) else {
        fatalError("no reply")
    }
    precondition(reply.orderedKeys.first == "reply" && (reply["ok"] == true || reply["ok"] == false))
    for line in output.dropLast() {
        precondition((try? JSON.parse(text: line).objectValue?.orderedKeys.first) == "delivery")
    }
    return 0
}
