/// FCM's error envelope: `{"code":400,"status":"INVALID_ARGUMENT","message":…}`.
public struct FCMError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: Int
    public let status: String
    public let message: String

    public init(code: Int, status: String, message: String) {
        self.code = code
        self.status = status
        self.message = message
    }

    public static func invalidArgument(_ message: String) -> FCMError {
        FCMError(code: 400, status: "INVALID_ARGUMENT", message: message)
    }

    public static let unregistered = FCMError(
        code: 404, status: "UNREGISTERED", message: "Requested entity was not found.")

    public var description: String { "\(code) \(status): \(message)" }
}
