import OrderedJSON
import PushServices
import Testing

@Suite struct SimctlPayloadTests {
    func reason(_ file: String, bundle: String? = nil) -> String? {
        let payload = SimctlPayload(file: Array(file.utf8), bundleArgument: bundle)
        if case .failure(let rejection) = payload.validate(installedBundle: "com.example.app") {
            return rejection.reason
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
        #expect(reason("") == "PayloadEmpty")
        #expect(
            reason(#"{"aps":{},"p":""# + String(repeating: "x", count: 4100) + #""}"#, bundle: "com.example.app")
                == "PayloadTooLarge")
        #expect(reason("{aps", bundle: "com.example.app") == "InvalidJSON")
        #expect(reason("[]", bundle: "com.example.app") == "NotAnObject")
        #expect(reason(#"{"k":1}"#, bundle: "com.example.app") == "MissingAps")
        #expect(reason(#"{"aps":[]}"#, bundle: "com.example.app") == "InvalidAps")
        #expect(reason(#"{"aps":{},"Simulator Target Bundle":7}"#) == "InvalidTargetBundle")
        #expect(reason(#"{"aps":{}}"#) == "MissingBundle")
        #expect(reason(#"{"aps":{}}"#, bundle: "com.other.app") == "AppNotInstalled")
    }

    @Test func aParsedFileIsUsedAsGiven() throws {
        let value: JSON = ["aps": ["alert": "x"]]
        let accepted = try SimctlPayload(file: value.compactBytes, parsedFile: value, bundleArgument: "com.example.app")
            .validate(installedBundle: "com.example.app").get()
        #expect(JSON.object(accepted.payload) == value)
    }
}
