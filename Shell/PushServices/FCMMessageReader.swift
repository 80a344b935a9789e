import HTTPMessage
import OrderedJSON

/// One pass over the bytes of the message nearly every sender sends: `{"message":{…}}` with
/// a `token`, string `data` and a `notification`'s `title` and `body`, its strings ASCII with
/// no escape. The data is kept as its own text (`JSONStringMap`). It answers the message FCM
/// accepts, or nil as soon as it meets anything else (another member or block,
/// `validate_only`, an escape, a byte past ASCII, a repeated name, a value of another type, a
/// reserved data key, more than `JSONStringMap.maxPlainMembers` data keys, a token that is not
/// one, a message past the size limit, a syntax error); `FCMRequest` then reads the body into
/// a tree and judges it, so every refusal and every other message is still the tree's.
/// `ValidatorDifferentialTests` compares the two over the scenarios' bodies and random ones.
///
/// It exists for speed: the tree and the walk over it were ~10k instructions of an FCM
/// message's ~73k (Docs/Performance.md, "Instructions per push").
struct FCMMessageReader {
    private let base: UnsafePointer<UInt8>
    private let count: Int
    private var index = 0

    private init(base: UnsafePointer<UInt8>, count: Int) {
        self.base = base
        self.count = count
    }

    /// The message `body` holds, when it is one this reader reads and FCM accepts; nil
    /// when the tree should judge it.
    static func message(_ body: UnsafeBufferPointer<UInt8>) -> FCMMessage? {
        guard let base = body.baseAddress, body.count <= JSONLimits.default.maxBytes else { return nil }
        var reader = FCMMessageReader(base: base, count: body.count)
        guard reader.take(UInt8(ascii: "{")), reader.name() == .message, let message = reader.message(),
            reader.take(UInt8(ascii: "}"))
        else { return nil }
        reader.skipSpace()
        return reader.index == reader.count ? message : nil
    }

    /// The names this reader knows; any other is `.other`.
    private enum Name {
        case message, token, data, notification, title, body, other
    }

    private mutating func message() -> FCMMessage? {
        var token: String?
        var data: (map: JSONStringMap, contentBytes: Int)?
        var notification: (title: String?, body: String?)?
        guard take(UInt8(ascii: "{")) else { return nil }
        repeat {
            switch name() {
            case .token where token == nil:
                guard let bytes = plainBytes(), FCMRequest.isTokenShaped(bytes) else { return nil }
                token = String(decoding: bytes, as: UTF8.self)
            case .data where data == nil:
                guard let read = JSONStringMap.read(in: base, count: count, from: index),
                    !read.map.containsKey(where: FCMRequest.isReservedDataKey)
                else { return nil }
                index = read.end
                data = (read.map, read.contentBytes)
            case .notification where notification == nil:
                guard let texts = titleAndBody() else { return nil }
                notification = texts
            default: return nil
            }
        } while take(UInt8(ascii: ","))
        guard take(UInt8(ascii: "}")), let token else { return nil }
        guard
            FCMRequest.fitsPayload(
                dataBytes: data?.contentBytes ?? 0, title: notification?.title, body: notification?.body)
        else { return nil }
        return FCMMessage(
            target: .token(token), data: data?.map ?? JSONStringMap(), title: notification?.title,
            body: notification?.body, tag: nil,
            collapseKey: nil, priority: nil, isNotificationMessage: notification != nil)
    }

    /// `{"title":…,"body":…}`, either or both, or neither.
    private mutating func titleAndBody() -> (title: String?, body: String?)? {
        guard take(UInt8(ascii: "{")) else { return nil }
        var texts: (title: String?, body: String?) = (nil, nil)
        if take(UInt8(ascii: "}")) { return texts }
        repeat {
            switch name() {
            case .title where texts.title == nil:
                guard let title = string() else { return nil }
                texts.title = title
            case .body where texts.body == nil:
                guard let body = string() else { return nil }
                texts.body = body
            default: return nil
            }
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "}")) ? texts : nil
    }

    /// A member's name and the colon after it.
    private mutating func name() -> Name {
        guard let bytes = plainBytes(), take(UInt8(ascii: ":")) else { return .other }
        func named(_ literal: StaticString) -> Bool { bytes.equalsBytes(of: literal) }
        switch bytes.count {
        case 4 where named("data"): return .data
        case 4 where named("body"): return .body
        case 5 where named("token"): return .token
        case 5 where named("title"): return .title
        case 7 where named("message"): return .message
        case 12 where named("notification"): return .notification
        default: return .other
        }
    }

    private mutating func string() -> String? {
        plainBytes().map(SmallASCII.string)
    }

    /// The bytes of the string at `index` (after space), when they are printable ASCII with
    /// no escape; `index` then stands past its closing quote.
    private mutating func plainBytes() -> UnsafeBufferPointer<UInt8>? {
        guard take(UInt8(ascii: "\"")), let end = ByteWord.plainStringEnd(in: base, count: count, from: index) else {
            return nil
        }
        defer { index = end + 1 }
        return UnsafeBufferPointer(start: base + index, count: end - index)
    }

    /// Whether `byte` comes next (after space); the reader then stands past it.
    private mutating func take(_ byte: UInt8) -> Bool {
        skipSpace()
        guard index < count, base[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func skipSpace() { index = JSONSpace.skip(in: base, count: count, from: index) }
}
