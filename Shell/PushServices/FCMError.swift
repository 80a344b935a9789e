/// FCM's error envelope: `{"code":400,"status":"INVALID_ARGUMENT","message":…}`, with
/// FCM's own `errorCode` in `details` when it names one (`UNREGISTERED`,
/// `SENDER_ID_MISMATCH`).
public struct FCMError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: Int
    public let status: String
    public let message: String
    /// `details[0].errorCode` of type `google.firebase.fcm.v1.FcmError`.
    public let errorCode: String?

    public init(code: Int, status: String, message: String, errorCode: String? = nil) {
        self.code = code
        self.status = status
        self.message = message
        self.errorCode = errorCode
    }

    public static func invalidArgument(_ message: String) -> FCMError {
        FCMError(code: 400, status: "INVALID_ARGUMENT", message: message)
    }

    /// An unknown or retired token: 404 `NOT_FOUND`, `UNREGISTERED`.
    public static let unregistered = FCMError(
        code: 404, status: "NOT_FOUND", message: "Requested entity was not found.", errorCode: "UNREGISTERED")

    /// A token of an app in another Firebase project than the request's.
    public static func senderIDMismatch(project: String) -> FCMError {
        FCMError(
            code: 403, status: "PERMISSION_DENIED",
            message: "SenderId mismatch: the token is not of project '\(project)'",
            errorCode: "SENDER_ID_MISMATCH")
    }

    public var description: String { "\(code) \(status): \(message)" }
}
