import OrderedJSON

/// The JSON layer: any bytes either fail with a JSONError or parse to a value whose
/// compact text parses back to the same value (numbers: the same text) and
/// serializes to the same bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    guard let value = try? JSON.parse(bytes) else { return 0 }
    let text = value.compactBytes
    guard let again = try? JSON.parse(text) else { fatalError("serialized output does not parse: \(text)") }
    // Numbers compare by their text, so this also says no number changed a digit.
    precondition(again == value, "round trip changed the value")
    precondition(again.compactBytes == text, "serialization is not stable")
    return 0
}
