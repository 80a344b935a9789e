import Credentials
import HTTPMessage

/// Provider tokens and OAuth forms, as the network hands them over: any text as an
/// `authorization` header never traps and is accepted only when it is a well-formed
/// ES256 JWT of the app's team (no key is registered, so signatures are not checked);
/// any bytes as a form body decode to UTF-8 fields.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCredentials(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)
    var tokens = APNsProviderTokens()
    if case .success = tokens.check(authorization: "bearer " + text, team: "TEAM000001", now: 1_700_000_000) {
        guard let jwt = try? JWT(text) else { fatalError("accepted a token that is not a JWT") }
        precondition(jwt.header["alg"] == "ES256" && jwt.claims["iss"] == "TEAM000001")
        precondition(jwt.signature.count == 64)
    }
    _ = try? JWT(text)
    for (name, value) in HTTPRequest.formFields(bytes) {
        precondition(!name.utf8.contains(0x26) || bytes.contains(0x25), "an unescaped & inside a field name")
        _ = value
    }
    return 0
}
