import OrderedJSON

/// The parts of the world a reset clears (`POST /api/v1/reset`, the `reset` op), each
/// kept when named in `keep` (Docs/Install.md, "Reset").
enum WorldPart: String, CaseIterable, Sendable {
    /// Devices, the tokens they were issued, their topics, and what the services keep
    /// for them: offline queues, PubNub registrations, webhook replay ids.
    case devices
    /// APNs signing keys and Google service-account keys registered, and the OAuth
    /// access tokens issued.
    case credentials
    /// Chaos rules.
    case chaos
    /// Appwrite projects: their users, targets, topics, messages and broker connections.
    case appwrite
    /// What `clock` ops added to real time.
    case clock
    /// The log's entries (seqs go on: a stream's Last-Event-ID stays meaningful).
    case log
}

/// A service that keeps state of its own: it clears what belongs to `part`, and says how
/// many things went.
protocol WorldService: AnyObject {
    func clear(_ part: WorldPart) -> Int
    /// The members this service adds to `part` in a state document (WorldSnapshot).
    func save(_ part: WorldPart) -> JSONObject
    /// Reads back what `save` wrote, changing nothing: the change to make after a reset.
    func restoring(_ part: WorldPart, from saved: WorldSnapshot.Reader) throws(WorldSnapshot.Refusal) -> (() -> Void)?
}

extension WorldService {
    func save(_ part: WorldPart) -> JSONObject { JSONObject() }
    func restoring(_ part: WorldPart, from saved: WorldSnapshot.Reader) throws(WorldSnapshot.Refusal) -> (() -> Void)? {
        nil
    }
}

/// A service the world reaches without keeping it alive (the session owns it).
struct WeakService {
    weak var service: (any WorldService)?
}

extension World {
    /// Makes the world as new but for the parts in `keep`: each part cleared, with how
    /// many things went from it (devices, rules, keys…; the clock's milliseconds taken
    /// back). The front door's address, the CA, loaded plugins, the world's broker and
    /// the counters of `/metrics` are the process's and stay.
    func reset(keeping keep: Set<WorldPart>) -> JSONObject {
        var cleared = JSONObject()
        for part in WorldPart.allCases where !keep.contains(part) {
            var count = services.reduce(0) { $0 + ($1.service?.clear(part) ?? 0) }
            switch part {
            case .devices: count += removeAllDevices()
            case .chaos:
                count += chaos.rules.count
                _ = chaos.remove("all")
            case .clock: count += Int(resetClock())
            case .log:
                count += log.retained
                log.clear()
            case .credentials, .appwrite: break
            }
            cleared[part.rawValue] = .integer(Int64(count))
        }
        return cleared
    }

    /// The parts named by a `keep` value: an array of part names; a sentence otherwise.
    static func parts(_ value: JSON?) -> Result<Set<WorldPart>, ResetRefusal> {
        guard let value else { return .success([]) }
        let names = WorldPart.allCases.map(\.rawValue).joined(separator: ", ")
        guard let items = value.arrayValue else {
            return .failure(ResetRefusal(description: "\"keep\" must be an array of parts: \(names)"))
        }
        var parts = Set<WorldPart>()
        for item in items {
            guard let name = item.stringValue, let part = WorldPart(rawValue: name) else {
                return .failure(
                    ResetRefusal(
                        description: "\"keep\" names no part of the world: \(item.compactText); the parts are \(names)")
                )
            }
            parts.insert(part)
        }
        return .success(parts)
    }

    struct ResetRefusal: Error, CustomStringConvertible {
        let description: String
    }
}
