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
            var index = 0
            while index < bytes.count {
                // Eight bytes at a time while none needs escaping: most text has none.
                if index + 8 <= bytes.count,
                    !needsEscape(UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self))
                {
                    index += 8
                    continue
                }
                let byte = bytes[index]
                index += 1
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index - 1]))
                runStart = index
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

    /// Whether any of eight bytes is below 0x20, `"` or `\\` (the bytes a JSON string
    /// escapes). The whole-word tests ("has a zero byte", "has a byte below n") are exact
    /// as yes-or-no answers, though not in which byte they flag, which is all this asks.
    @inline(__always)
    static func needsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ value: UInt64) -> Bool { (value &- ones) & ~value & highs != 0 }
        let control = (word &- ones &* 0x20) & ~word & highs != 0
        return control || hasZeroByte(word ^ (ones &* 0x22)) || hasZeroByte(word ^ (ones &* 0x5C))
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
