import Credentials
import Foundation
import HTTPMessage
import OrderedJSON
import PushServices

/// Appwrite's documents and errors as the SDKs' models parse them (APW-9), and the ids,
/// secrets and JWTs the service makes.
extension AppwriteService {
    func resolveID(_ value: JSON?, _ parameter: String) -> Result<String, AppwriteError> {
        guard case .string(let given)? = value else {
            return .failure(.invalid("Param \"\(parameter)\" is not optional."))
        }
        return AppwriteID.resolve(given, parameter: parameter, make: makeID)
    }

    func makeID() -> String {
        nextID += 1
        return String(format: "%08llx%012x", UInt64(world.clock() / 1000) & 0xffff_ffff, nextID)
    }

    static func secret() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    /// A JWT as Appwrite makes one (HS256 over the user and its expiry), with a random
    /// key: only the broker checks it, as its password.
    static func jwt(user: String, expires: Int64) -> String {
        let header = JSON.object(JSONObject([("typ", "JWT"), ("alg", "HS256")])).compactBytes
        let claims = JSON.object(
            JSONObject([
                ("userId", .string(user)), ("sessionId", .string(secret().prefix(20).description)),
                ("exp", .integer(expires / 1000)),
            ])
        ).compactBytes
        return JWT.base64URLEncode(header) + "." + JWT.base64URLEncode(claims) + "."
            + JWT.base64URLEncode((0..<32).map { _ in UInt8.random(in: 0...255) })
    }

    static func time(_ milliseconds: Int64) -> JSON { .string(RequestLog.timestamp(milliseconds)) }

    static func stamps(_ id: String, _ created: Int64, _ updated: Int64? = nil) -> [(String, JSON)] {
        [("$id", .string(id)), ("$createdAt", time(created)), ("$updatedAt", time(updated ?? created))]
    }

    static func acl(_ command: String, role: String, type: String, topic: String) -> JSONObject {
        JSONObject([
            ("command", .string(command)), ("rolename", .string(role)), ("acltype", .string(type)),
            ("topic", .string(topic)),
            ("allow", true),
        ])
    }

    static func notFound(_ what: String) -> AppwriteError {
        AppwriteError(
            404, "\(what)_not_found",
            "\(what.prefix(1).uppercased() + what.dropFirst()) with the requested ID could not be found.")
    }

    static func document(_ provider: AppwriteProject.Provider) -> JSONObject {
        var options = JSONObject()
        if provider.kind == "appwrite" {
            options["qos"] = provider.qos.map { .integer(Int64($0)) } ?? .null
            options["expiry"] = provider.expiry.map { .integer(Int64($0)) } ?? .null
        }
        if let bundle = provider.bundleID { options["bundleId"] = .string(bundle) }
        if provider.kind == "apns" { options["sandbox"] = .bool(provider.sandbox) }
        return JSONObject(
            stamps(provider.id, provider.createdAt, provider.updatedAt) + [
                ("name", .string(provider.name)), ("provider", .string(provider.kind)),
                ("enabled", .bool(provider.enabled)),
                ("type", "push"), ("credentials", .object(JSONObject())), ("options", .object(options)),
            ])
    }

    static func document(_ target: AppwriteProject.Target) -> JSONObject {
        JSONObject(
            stamps(target.id, target.createdAt) + [
                ("name", .string(target.name)), ("userId", .string(target.userID)),
                ("providerId", target.providerID.map(JSON.string) ?? .null), ("providerType", "push"),
                ("identifier", .string(target.identifier)), ("expired", false),
            ])
    }

    func document(_ user: AppwriteProject.User, in project: String) -> JSONObject {
        let targets = projects[project]?.targets(of: user.id).map { JSON.object(Self.document($0)) } ?? []
        return JSONObject(
            Self.stamps(user.id, user.createdAt) + [
                ("name", .string(user.name)), ("registration", Self.time(user.createdAt)), ("status", true),
                ("labels", .array([])), ("passwordUpdate", ""), ("email", .string(user.email)),
                ("phone", .string(user.phone)),
                ("emailVerification", false), ("phoneVerification", false), ("mfa", false),
                ("prefs", .object(JSONObject())),
                ("targets", .array(targets)), ("accessedAt", Self.time(user.createdAt)),
            ])
    }

    func document(_ topic: AppwriteProject.Topic, in project: String) -> JSONObject {
        let total = projects[project]?.subscribers.values.filter { $0.topicID == topic.id }.count ?? 0
        return JSONObject(
            Self.stamps(topic.id, topic.createdAt) + [
                ("name", .string(topic.name)), ("description", .string(topic.description)), ("emailTotal", 0),
                ("smsTotal", 0), ("pushTotal", .integer(Int64(total))), ("subscribe", .array([])),
                ("qos", topic.qos.map { .integer(Int64($0)) } ?? .null),
                ("expiry", topic.expiry.map { .integer(Int64($0)) } ?? .null),
            ])
    }

    func document(_ subscriber: AppwriteProject.Subscriber, in project: String) -> JSONObject {
        let target = projects[project]?.targets[subscriber.targetID]
        let user = target.flatMap { projects[project]?.users[$0.userID] }
        return JSONObject(
            Self.stamps(subscriber.id, subscriber.createdAt) + [
                ("targetId", .string(subscriber.targetID)),
                ("target", target.map { .object(Self.document($0)) } ?? .null),
                ("userId", .string(target?.userID ?? "")), ("userName", .string(user?.name ?? "")),
                ("topicId", .string(subscriber.topicID)), ("providerType", "push"),
            ])
    }

    static func document(_ message: AppwriteProject.Message) -> JSONObject {
        var document = JSONObject(
            stamps(message.push.id, message.createdAt) + [
                ("providerType", "push"), ("topics", .array(message.push.topics.map(JSON.string))),
                ("users", .array(message.push.users.map(JSON.string))),
                ("targets", .array(message.push.targets.map(JSON.string))),
                ("deliveredTotal", .integer(Int64(message.deliveredTotal))), ("data", .object(message.push.data)),
                ("status", .string(message.status)),
            ])
        if message.status != "draft" { document["deliveredAt"] = time(message.createdAt) }
        if !message.deliveryErrors.isEmpty {
            document["deliveryErrors"] = .array(message.deliveryErrors.map(JSON.string))
        }
        return document
    }

    static func session(id: String, user: String, secret: String, now: Int64) -> JSONObject {
        var fields = stamps(id, now)
        fields += [("userId", .string(user)), ("expire", time(now + 365 * 24 * 3600 * 1000)), ("provider", "server")]
        for name in [
            "providerUid", "providerAccessToken", "providerAccessTokenExpiry", "providerRefreshToken", "ip", "osCode",
            "osName", "osVersion", "clientType", "clientCode", "clientName", "clientVersion", "clientEngine",
            "clientEngineVersion", "deviceName", "deviceBrand", "deviceModel", "countryCode", "countryName",
        ] {
            fields.append((name, ""))
        }
        fields += [("current", false), ("factors", .array([])), ("secret", .string(secret)), ("mfaUpdatedAt", "")]
        return JSONObject(fields)
    }

    /// An error answer, as Appwrite gives it, and its report line.
    static func failure(_ error: AppwriteError, _ request: HTTPRequest, project: String? = nil) -> ServiceAnswer {
        failure(error, route: "\(request.method ?? "?") \(request.path ?? "")", project: project)
    }

    static func failure(_ error: AppwriteError, route: String?, project: String? = nil) -> ServiceAnswer {
        var report = JSONObject([("network", "appwrite"), ("status", .integer(Int64(error.status)))])
        if let project { report["project"] = .string(project) }
        if let route { report["route"] = .string(route) }
        report["effect"] = .string("refused: \(error.type): \(error.message)")
        report["error"] = .string(error.type)
        return (
            Report(report),
            HTTPResponse.json(status: error.status, body: JSON.object(error.body).compactBytes)
        )
    }
}

extension JSON {
    /// A whole number, written as `1` or `1.0` (the SDKs send numbers as floats).
    var wholeNumber: Int? {
        guard let number = numberValue, number.doubleValue.rounded() == number.doubleValue,
            abs(number.doubleValue) < 1e15
        else { return nil }
        return Int(number.doubleValue)
    }
}
