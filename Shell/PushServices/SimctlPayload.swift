import OrderedJSON

/// An `xcrun simctl push <device> [bundle] file.apns` invocation.
public struct SimctlPayload: Sendable {
    public var file: [UInt8]
    /// The file already parsed, when the caller has it; saves parsing it again.
    public var parsedFile: JSON?
    /// The command line's bundle id argument; wins over the file's `Simulator Target Bundle`.
    public var bundleArgument: String?

    public init(file: [UInt8], parsedFile: JSON? = nil, bundleArgument: String?) {
        self.file = file
        self.parsedFile = parsedFile
        self.bundleArgument = bundleArgument
    }

    public static let targetBundleKey = "Simulator Target Bundle"

    /// Validates as simctl does: at most 4096 bytes, a JSON object with an `aps`
    /// object, and a target bundle (argument or file) that is installed. The payload
    /// is delivered as written, `Simulator Target Bundle` included.
    ///
    /// simctl is not HTTP; a refusal carries the status APNs gives the same problem
    /// (413 for size, 400 for the rest) so that drivers read both alike.
    public func validate(installedBundle: String) -> Result<(bundle: String, payload: JSONObject), APNsRejection> {
        func reject(_ reason: String, _ detail: String) -> Result<(bundle: String, payload: JSONObject), APNsRejection>
        {
            .failure(APNsRejection(status: reason == "PayloadTooLarge" ? 413 : 400, reason: reason, detail: detail))
        }
        if file.isEmpty { return reject("PayloadEmpty", "the payload file is empty") }
        if file.count > 4096 {
            return reject("PayloadTooLarge", "the payload is \(file.count) bytes; simctl allows at most 4096")
        }
        let value: JSON
        do {
            value = try parsedFile ?? JSON.parse(file)
        } catch {
            return reject("InvalidJSON", "the payload file is not JSON: \(error)")
        }
        guard let payload = value.objectValue else {
            return reject("NotAnObject", "the payload must be a JSON object at the top level, not \(value.typeName)")
        }
        guard let aps = payload["aps"] else {
            return reject("MissingAps", "the payload must contain an aps key (simctl is stricter than APNs here)")
        }
        guard aps.objectValue != nil else { return reject("InvalidAps", "aps must be an object, not \(aps.typeName)") }
        let fileBundle = payload[Self.targetBundleKey]
        if let fileBundle, fileBundle.stringValue == nil {
            return reject("InvalidTargetBundle", "\(Self.targetBundleKey) must be a string")
        }
        guard let bundle = bundleArgument ?? fileBundle?.stringValue else {
            return reject(
                "MissingBundle", "no bundle id: pass one on the command line or set \(Self.targetBundleKey) in the file"
            )
        }
        guard bundle == installedBundle else {
            return reject(
                "AppNotInstalled", "no app with bundle id \(bundle) is installed (this device has \(installedBundle))")
        }
        return .success((bundle, payload))
    }
}
