import OrderedJSON

/// One Appwrite project as the world's Appwrite server keeps it (APW-9 … APW-11): its
/// key and broker, providers, users and their credentials, push targets, topics and
/// subscribers, and the messages sent. Values only; the service applies the rules.
struct AppwriteProject {
    struct Provider {
        var id: String
        var name: String
        /// `appwrite`, `fcm` or `apns`.
        var kind: String
        var enabled: Bool
        /// Appwrite Push: 0, 1, or nil ("let the subscriber choose", sent at least once).
        var qos: Int?
        /// Appwrite Push: seconds a message is kept for offline devices; nil: 7 days.
        var expiry: Int?
        /// FCM: the service account's project; APNs: the app's bundle id and environment.
        var fcmProject: String?
        var bundleID: String?
        var sandbox = false
        var createdAt: Int64
        var updatedAt: Int64
    }

    struct User {
        var id: String
        var name = ""
        var email = ""
        var phone = ""
        var createdAt: Int64
    }

    /// A session secret or a JWT: the broker's password for its user (APW-13).
    struct Credential {
        var secret: String
        /// When a JWT stops working (ms on the world's clock); nil for a session.
        var expiresAt: Int64?
    }

    struct Target {
        var id: String
        var userID: String
        var providerID: String?
        /// The provider's kind: `appwrite`, `fcm` or `apns`.
        var kind: String
        var identifier: String
        var name: String
        var createdAt: Int64
    }

    struct Topic {
        var id: String
        var name: String
        var description: String
        var qos: Int?
        var expiry: Int?
        var createdAt: Int64
    }

    struct Subscriber {
        var id: String
        var topicID: String
        var targetID: String
        var createdAt: Int64
    }

    struct Message {
        var push: AppwritePushRecord
        var status: String
        var deliveredTotal: Int
        var deliveryErrors: [String]
        var createdAt: Int64
    }

    /// What one Appwrite Push publication was, for replay's rules (APW-14).
    struct Publication {
        var number: Int
        var messageID: String
        var topic: String
        var publishedAt: Int64
        var expiry: Int
    }

    let id: String
    var key: String
    var endpoint: String
    var admin: (username: String, password: String)?
    var providers: [String: Provider] = [:]
    var users: [String: User] = [:]
    /// Each user's current credential: the session or JWT made last (Docs/Channels.md).
    var credentials: [String: Credential] = [:]
    var targets: [String: Target] = [:]
    var topics: [String: Topic] = [:]
    var subscribers: [String: Subscriber] = [:]
    var messages: [String: Message] = [:]
    /// Publications by MQTT topic, oldest first.
    var publications: [String: [Publication]] = [:]

    /// The user's targets, oldest first.
    func targets(of user: String) -> [Target] {
        targets.values.filter { $0.userID == user }.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    /// The topics a user's targets subscribe to (what the broker lets them receive).
    func topics(of user: String) -> Set<String> {
        Set(subscribers.values.filter { targets[$0.targetID]?.userID == user }.map(\.topicID))
    }

    /// APW-12's route rule: a user with an FCM or APNs target gets messages through those
    /// targets; over Appwrite Push only with no such target, or with an Appwrite push
    /// target beside them (the seed: "Receive messages over Appwrite Push when the user
    /// also has FCM or APNs targets").
    func route(of user: String) -> (direct: [Target], appwrite: Bool) {
        let mine = targets(of: user)
        let direct = mine.filter { $0.kind == "fcm" || $0.kind == "apns" }
        return (direct, direct.isEmpty || mine.contains { $0.kind == "appwrite" })
    }

    /// The enabled Appwrite providers' lowest expiry, or 7 days.
    var defaultExpiry: Int {
        providers.values.filter { $0.kind == "appwrite" && $0.enabled }.compactMap(\.expiry).min() ?? 604_800
    }

    /// The enabled Appwrite providers' lowest QoS (nil lets the subscriber choose: 1).
    var providerQoS: Int {
        providers.values.filter { $0.kind == "appwrite" && $0.enabled }.compactMap(\.qos).min() ?? 1
    }
}

/// A sent push as the Message document shows it.
struct AppwritePushRecord {
    var id: String
    var users: [String]
    var topics: [String]
    var targets: [String]
    var data: JSONObject
}
