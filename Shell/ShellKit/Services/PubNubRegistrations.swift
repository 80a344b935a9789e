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
