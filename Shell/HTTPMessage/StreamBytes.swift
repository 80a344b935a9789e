import Foundation

/// A piece of a streamed answer on its way to the transport: bytes in a block from
/// `malloc`, which the transport takes as it is and frees. Room left before the bytes
/// (`framingRoom`) lets HTTP/1.1 write its chunk's size line in front of them, so a
/// stream's events reach a clear-text socket with no copy: copying each batch of events
/// into the transport cost a streamed push ~850 instructions (callgrind).
public final class StreamBytes: @unchecked Sendable {
    /// The room before the bytes the transport frames a piece in, with no copy: an
    /// HTTP/1.1 size line of eight hex digits (leading zeros) and CRLF, for any piece
    /// under 4 GiB. With less, the transport copies the piece.
    public static let framingRoom = 10

    /// The block, until the transport takes it. Taken once, by the one transport the
    /// piece is sent to (under its answer's lock), which is why this is `Sendable`.
    private var block: UnsafeMutableRawPointer?
    public let headRoom: Int
    public let count: Int
    /// The block's size, from its start.
    public let size: Int

    /// Takes `block` (from `malloc`, `size` bytes): the bytes are the `count` from
    /// `headRoom` on.
    public init(block: UnsafeMutableRawPointer, headRoom: Int, count: Int, size: Int) {
        precondition(headRoom >= 0 && count >= 0 && headRoom + count <= size, "the bytes lie within the block")
        self.block = block
        self.headRoom = headRoom
        self.count = count
        self.size = size
    }

    /// Hands the block over to whoever frees it; nil after the first call.
    public func take() -> UnsafeMutableRawPointer? {
        defer { block = nil }
        return block
    }

    deinit { free(block) }
}
