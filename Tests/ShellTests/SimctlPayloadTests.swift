import OrderedJSON
import PushServices
import Testing

@Suite struct SimctlPayloadTests {
    func reason(_ file: String, bundle: String? = nil) -> String? {
        let payload = SimctlPayload(file: Array(file.utf8), bundleArgument: bundle)
        if case .failure(let rejection) = payload.validate(installedBundle: "com.example.app") {
            return "\(rejection.status) \(rejection.reason)"
        }
        return nil
    }

    @Test func acceptsAFileThatNamesItsBundleAndKeepsItAsWritten() throws {
        let file = #"{"Simulator Target Bundle":"com.example.app","aps":{"alert":"hi"},"k":1}"#
        let accepted = try SimctlPayload(file: Array(file.utf8), bundleArgument: nil)
            .validate(installedBundle: "com.example.app").get()
        #expect(accepted.bundle == "com.example.app")
        #expect(accepted.payload.compactText == file)
    }

    @Test func theCommandLineBundleWins() throws {
        let file = #"{"Simulator Target Bundle":"com.other.app","aps":{}}"#
        let accepted = try SimctlPayload(file: Array(file.utf8), bundleArgument: "com.example.app")
            .validate(installedBundle: "com.example.app").get()
        #expect(accepted.bundle == "com.example.app")
    }

    @Test func eachRuleHasItsReason() {
        #expect(reason("") == "400 PayloadEmpty")
        #expect(
            reason(#"{"aps":{},"p":""# + String(repeating: "x", count: 4100) + #""}"#, bundle: "com.example.app")
                == "413 PayloadTooLarge")
        #expect(reason("{aps", bundle: "com.example.app") == "400 InvalidJSON")
        #expect(reason("[]", bundle: "com.example.app") == "400 NotAnObject")
        #expect(reason(#"{"k":1}"#, bundle: "com.example.app") == "400 MissingAps")
        #expect(reason(#"{"aps":[]}"#, bundle: "com.example.app") == "400 InvalidAps")
        #expect(reason(#"{"aps":{},"Simulator Target Bundle":7}"#) == "400 InvalidTargetBundle")
        #expect(reason(#"{"aps":{}}"#) == "400 MissingBundle")
        #expect(reason(#"{"aps":{}}"#, bundle: "com.other.app") == "400 AppNotInstalled")
    }

    /// A caller that already parsed the file (the protocol's `file` field) gets the
    /// same rules: the size counts the bytes, the shape is checked on the value.
    @Test func aParsedFileMeetsTheSameRules() throws {
        let large: JSON = ["aps": ["alert": "x"], "pad": .string(String(repeating: "x", count: 4100))]
        let tooLarge = SimctlPayload(file: large.compactBytes, parsedFile: large, bundleArgument: "com.example.app")
        #expect(throws: APNsRejection.self) { try tooLarge.validate(installedBundle: "com.example.app").get() }
        let noAps: JSON = ["alert": "x"]
        let missing = SimctlPayload(file: noAps.compactBytes, parsedFile: noAps, bundleArgument: "com.example.app")
        if case .failure(let rejection) = missing.validate(installedBundle: "com.example.app") {
            #expect(rejection.status == 400 && rejection.reason == "MissingAps")
        } else {
            Issue.record("a parsed file without aps was accepted")
        }
    }
}
