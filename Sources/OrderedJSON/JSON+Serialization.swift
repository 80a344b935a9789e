extension JSON {
    /// Compact JSON text: members in their order, no white space, strings as UTF-8
    /// with only `"`, `\` and control characters escaped.
    public var compactText: String {
        String(decoding: compactBytes, as: UTF8.self)
    }

    /// Compact JSON as UTF-8 bytes; see `compactText`.
    public var compactBytes: [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        write(to: &output)
        return output
    }

    /// Appends the compact serialization to `output`.
    public func write(to output: inout [UInt8]) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let number): output.append(contentsOf: number.text.utf8)
        case .string(let value): JSON.writeString(value, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                element.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            object.write(to: &output)
        }
    }

    /// Writes `value` as a quoted JSON string.
    public static func writeString(_ value: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { bytes in
            var runStart = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                runStart = index + 1
                output.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""): output.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): output.append(UInt8(ascii: "\\"))
                case 0x08: output.append(UInt8(ascii: "b"))
                case 0x0C: output.append(UInt8(ascii: "f"))
                case 0x0A: output.append(UInt8(ascii: "n"))
                case 0x0D: output.append(UInt8(ascii: "r"))
                case 0x09: output.append(UInt8(ascii: "t"))
                default:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    output.append(contentsOf: [
                        UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)],
                    ])
                }
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
        }
        output.append(UInt8(ascii: "\""))
    }
}

extension JSONObject {
    /// Appends the compact serialization to `output`, members in order.
    public func write(to output: inout [UInt8]) {
        output.append(UInt8(ascii: "{"))
        for index in keys.indices {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            JSON.writeString(keys[index], to: &output)
            output.append(UInt8(ascii: ":"))
            values[index].write(to: &output)
        }
        output.append(UInt8(ascii: "}"))
    }

    /// Compact JSON text of this object.
    public var compactText: String {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        write(to: &output)
        return String(decoding: output, as: UTF8.self)
    }
}
