import CXHost
import PushPlugin
import PushServices

/// What APNs and FCM know of every token a world's devices were ever issued: one
/// table from token (or FCM installation id) to the device and install that holds
/// it, so a push finds its device in O(1), as the real services route by token.
/// Tokens are never removed: a retired one keeps answering 410 / `UNREGISTERED`.
public final class TokenRegistry: Sendable {
    public struct Entry: Sendable {
        public var platform: PushPlatform
        public var environment: APNsEnvironment
        /// When an uninstall or a rotation retired it (ms since 1970); nil while active.
        public var retiredAt: Int64?
        /// The names, which never change once issued, shared by every copy: an entry is
        /// copied out of the table for each push, and with its four strings of its own,
        /// each copy counted four references up and down (~0.5k instructions an APNs push).
        private let names: Names

        public var deviceID: String { names.deviceID }
        /// The device the token was issued to, while it lives: a push reaches it with no
        /// lookup by id (the world's table of String ids cost ~0.3k instructions a push,
        /// and more when the process's hash seed made its keys collide). Nil for an entry
        /// read back from a state document: its device is found by `deviceID`. A token
        /// that is not retired is always its installed device's: removing a device from
        /// the world uninstalls it first, which retires its tokens.
        public var device: Device? { names.device }
        public var bundleID: String { names.bundleID }
        public var project: String { names.project }
        public var team: String { names.team }

        private final class Names: Sendable {
            let deviceID: String
            let bundleID: String
            let project: String
            let team: String
            weak let device: Device?

            init(deviceID: String, bundleID: String, project: String, team: String, device: Device?) {
                self.deviceID = deviceID
                self.bundleID = bundleID
                self.project = project
                self.team = team
                self.device = device
            }
        }

        public init(
            deviceID: String, platform: PushPlatform, bundleID: String, environment: APNsEnvironment, project: String,
            team: String, retiredAt: Int64?, device: Device? = nil
        ) {
            self.platform = platform
            self.environment = environment
            self.retiredAt = retiredAt
            names = Names(deviceID: deviceID, bundleID: bundleID, project: project, team: team, device: device)
        }

        /// As APNs sees it: only APNs tokens exist for it.
        public var apnsRecord: APNsTokenRecord? {
            guard platform == .ios else { return nil }
            return APNsTokenRecord(bundleID: bundleID, environment: environment, retiredAt: retiredAt, team: team)
        }

        /// As FCM sees it: only Android tokens and installation ids exist for it.
        public var fcmRecord: FCMTokenRecord? {
            guard platform == .android else { return nil }
            return FCMTokenRecord(project: project, retired: retiredAt != nil)
        }
    }

    /// A token as the tables' key, its bytes folded into one word eight at a time when it
    /// is made. `Hasher` is handed that word, and keys whose words differ are told apart
    /// by them before their text is compared: SipHash over all of an FCM token's 163
    /// bytes was ~900 instructions of every message's lookup. The fold is not keyed, so
    /// keys chosen to collide would share a bucket: a push names a token but never adds
    /// one, and tokens come only from the world and from a state document (`--state`,
    /// `POST /api/v1/snapshot`), which whoever writes it already controls the world by.
    struct Key: Hashable {
        let text: String
        let folded: UInt64

        init(_ text: String) {
            self.text = text
            folded = Self.fold(text)
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(folded)
        }

        static func == (left: Key, right: Key) -> Bool {
            left.folded == right.folded && left.text == right.text
        }

        private static func fold(_ text: String) -> UInt64 {
            var text = text
            return text.withUTF8 { bytes in
                guard var at = bytes.baseAddress else { return 0 }
                let end = at + bytes.count
                var folded = UInt64(bytes.count)
                while end - at >= 8 {
                    folded = mix(folded, UnsafeRawPointer(at).loadUnaligned(as: UInt64.self))
                    at += 8
                }
                var tail: UInt64 = 0
                withUnsafeMutableBytes(of: &tail) {
                    $0.copyMemory(from: UnsafeRawBufferPointer(start: at, count: end - at))
                }
                return mix(folded, tail)
            }
        }

        /// One word into the fold: multiplied by an odd constant and its high bits folded
        /// down, so that every bit of every word reaches the bits a table's bucket uses.
        @inline(__always)
        private static func mix(_ folded: UInt64, _ word: UInt64) -> UInt64 {
            let product = (folded ^ word) &* 0x9E37_79B9_7F4A_7C15
            return product ^ (product >> 29)
        }
    }

    private struct Tables {
        var tokens: [Key: Entry] = [:]
        var installationIDs: [Key: Entry] = [:]
    }

    private let tables = Monitor(Tables())

    public init() {}

    /// The entry of a token (APNs tokens lowercase), active or retired.
    public func entry(token: String) -> Entry? {
        tables.withLock { $0.tokens[Key(token)] }
    }

    public func entry(installationID: String) -> Entry? {
        tables.withLock { $0.installationIDs[Key(installationID)] }
    }

    /// As APNs sees the token: only APNs tokens exist for it.
    public func apnsRecord(_ token: String) -> APNsTokenRecord? { entry(token: token)?.apnsRecord }

    /// The entry of an FCM token or installation id; nil for a topic or condition.
    public func entry(_ target: FCMTarget) -> Entry? {
        switch target {
        case .token(let token): entry(token: token)
        case .fid(let fid): entry(installationID: fid)
        case .topic, .condition: nil
        }
    }

    /// Room for `count` more devices' tokens (and, on Android, installation ids), so a
    /// fleet made in bulk does not rehash every token each time the table doubles.
    public func reserveCapacity(devices count: Int, platform: PushPlatform) {
        tables.withLock { tables in
            guard platform != .web else { return }
            tables.tokens.reserveCapacity(tables.tokens.count + count)
            if platform == .android {
                tables.installationIDs.reserveCapacity(tables.installationIDs.count + count)
            }
        }
    }

    /// Every token and installation id with its entry (a world's state file keeps them),
    /// in no particular order.
    public var recorded: (tokens: [(String, Entry)], installationIDs: [(String, Entry)]) {
        tables.withLock { tables in
            (tables.tokens.map { ($0.key.text, $0.value) }, tables.installationIDs.map { ($0.key.text, $0.value) })
        }
    }

    /// Records a token or an installation id read back from a state file.
    public func restore(token: String, _ entry: Entry) { issue(token: token, to: entry) }
    public func restore(installationID: String, _ entry: Entry) { issue(installationID: installationID, to: entry) }

    /// Forgets every token and installation id: the world was reset (`POST /api/v1/reset`),
    /// and its new devices' tokens are the only ones the services know.
    public func removeAll() {
        tables.withLock { $0 = Tables() }
    }

    func issue(token: String, to entry: Entry) {
        tables.withLock { $0.tokens[Key(token)] = entry }
    }

    func issue(installationID: String, to entry: Entry) {
        tables.withLock { $0.installationIDs[Key(installationID)] = entry }
    }

    func retire(token: String?, installationID: String?, at milliseconds: Int64) {
        tables.withLock { tables in
            if let token { tables.tokens[Key(token)]?.retiredAt = milliseconds }
            if let installationID { tables.installationIDs[Key(installationID)]?.retiredAt = milliseconds }
        }
    }
}
