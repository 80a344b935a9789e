import OrderedJSON
import PushServices

/// A device registered with PubNub's push gateway: its push type and token, and for
/// APNs over HTTP/2 (`apns2`) the bundle topic and environment (PN-1).
struct PubNubDevice: Hashable, Sendable {
    enum Gateway: String, Sendable {
        case gcm, fcm, apns, apns2

        var isApple: Bool { self == .apns || self == .apns2 }
    }

    var gateway: Gateway
    var token: String
    var topic: String?
    var environment: APNsEnvironment?
}

/// Which devices are registered on which channels, per subscribe key: the gateway's
/// state, with its rules (a device's channels in the order added; a channel's devices
/// in the order they registered).
struct PubNubRegistrations {
    private var channelsOfDevice: [String: [PubNubDevice: [String]]] = [:]
    private var devicesOfChannel: [String: [String: [PubNubDevice]]] = [:]

    mutating func add(_ channels: [String], for device: PubNubDevice, subKey: String) {
        for channel in channels where !(channelsOfDevice[subKey]?[device]?.contains(channel) ?? false) {
            channelsOfDevice[subKey, default: [:]][device, default: []].append(channel)
            devicesOfChannel[subKey, default: [:]][channel, default: []].append(device)
        }
    }

    mutating func remove(_ channels: [String], for device: PubNubDevice, subKey: String) {
        for channel in channels {
            channelsOfDevice[subKey]?[device]?.removeAll { $0 == channel }
            devicesOfChannel[subKey]?[channel]?.removeAll { $0 == device }
        }
        if channelsOfDevice[subKey]?[device]?.isEmpty == true { channelsOfDevice[subKey]?[device] = nil }
    }

    mutating func removeDevice(_ device: PubNubDevice, subKey: String) {
        remove(channels(of: device, subKey: subKey), for: device, subKey: subKey)
    }

    func channels(of device: PubNubDevice, subKey: String) -> [String] {
        channelsOfDevice[subKey]?[device] ?? []
    }

    func devices(on channel: String, subKey: String) -> [PubNubDevice] {
        devicesOfChannel[subKey]?[channel] ?? []
    }
}

extension PubNubRegistrations {
    /// The registrations as a state file keeps them (WorldSnapshot): per subscribe key,
    /// each device with its channels, and each channel with its devices, both in order.
    var saved: JSON {
        func device(_ device: PubNubDevice) -> JSONObject {
            JSONObject([
                ("gateway", .string(device.gateway.rawValue)), ("token", .string(device.token)),
                ("topic", device.topic.map(JSON.string) ?? .null),
                ("environment", device.environment.map { .string($0.rawValue) } ?? .null),
            ])
        }
        return .array(
            channelsOfDevice.keys.sorted().map { subKey in
                let devices = (channelsOfDevice[subKey] ?? [:]).sorted { $0.key.token < $1.key.token }.map { entry in
                    var object = device(entry.key)
                    object["channels"] = .array(entry.value.map(JSON.string))
                    return JSON.object(object)
                }
                let channels = (devicesOfChannel[subKey] ?? [:]).filter { !$0.value.isEmpty }.sorted { $0.key < $1.key }
                    .map { entry in
                        JSON.object(
                            JSONObject([
                                ("channel", .string(entry.key)),
                                ("devices", .array(entry.value.map { .object(device($0)) })),
                            ]))
                    }
                return .object(
                    JSONObject([
                        ("sub_key", .string(subKey)), ("devices", .array(devices)), ("channels", .array(channels)),
                    ]))
            })
    }

    /// Registrations read back from `saved`; a sentence naming what does not read.
    static func restored(from keys: [WorldSnapshot.Reader]) throws(WorldSnapshot.Refusal) -> PubNubRegistrations {
        func device(_ reader: WorldSnapshot.Reader) throws(WorldSnapshot.Refusal) -> PubNubDevice {
            let environment = try reader.optionalString("environment")
            return PubNubDevice(
                gateway: try reader.value("gateway", PubNubDevice.Gateway.self), token: try reader.string("token"),
                topic: try reader.optionalString("topic"),
                environment: try environment.map { text throws(WorldSnapshot.Refusal) in
                    guard let value = APNsEnvironment(rawValue: text) else {
                        throw reader.wrong("environment", "production or development")
                    }
                    return value
                })
        }
        var registrations = PubNubRegistrations()
        for key in keys {
            let subKey = try key.string("sub_key")
            for entry in try key.objects("devices") {
                registrations.channelsOfDevice[subKey, default: [:]][try device(entry)] = try entry.strings("channels")
            }
            for entry in try key.objects("channels") {
                var devices: [PubNubDevice] = []
                for item in try entry.objects("devices") { devices.append(try device(item)) }
                registrations.devicesOfChannel[subKey, default: [:]][try entry.string("channel")] = devices
            }
        }
        return registrations
    }
}
