import CCX

// What every function of the C ABI (libcx and libcxdevice) does with its
// arguments and its answer: checked text in, a cx_status out, nothing traps.

/// A C string argument (pointer + length) as Swift text, or the status that says why not.
public func text(_ pointer: UnsafePointer<CChar>?, _ length: Int) -> Result<String, CXFailure> {
    guard length >= 0 else { return .failure(CXFailure(CX_ERR_INVALID_ARGUMENT)) }
    guard let pointer else { return length == 0 ? .success("") : .failure(CXFailure(CX_ERR_NULL)) }
    let bytes = UnsafeRawBufferPointer(start: pointer, count: length)
    guard let string = String(validating: bytes, as: UTF8.self) else { return .failure(CXFailure(CX_ERR_UTF8)) }
    return .success(string)
}

/// A status as a Swift error, so argument checks compose with `try`.
public struct CXFailure: Error {
    public let status: cx_status
    public init(_ status: cx_status) { self.status = status }
}

/// Runs `body`, turning a `CXFailure` into its status and success into CX_OK.
public func status(_ body: () throws(CXFailure) -> Void) -> cx_status {
    do {
        try body()
        return CX_OK
    } catch {
        return error.status
    }
}
