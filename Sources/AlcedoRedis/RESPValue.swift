import NIOCore

/// One RESP2 reply from a Redis server.
public enum RESPValue: Sendable, Hashable {
    /// `+OK`: a simple string.
    case simpleString(String)
    /// `-ERR …`: an error reply, with its message (the error code first, as Redis sends it).
    case error(String)
    /// `:42`: an integer.
    case integer(Int64)
    /// `$5 hello`: a binary-safe string; `nil` for the null bulk string (`$-1`), a missing key.
    case bulkString(ByteBuffer?)
    /// `*2 …`: an array of replies; `nil` for the null array (`*-1`).
    case array([RESPValue]?)

    /// The text of a simple or bulk string (UTF-8, lossy), or `nil` for other replies.
    public var string: String? {
        switch self {
        case .simpleString(let text): return text
        case .bulkString(let buffer?): return String(buffer: buffer)
        default: return nil
        }
    }

    /// The integer of an integer reply, or `nil`.
    public var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// `true` for a null bulk string or null array.
    public var isNull: Bool {
        switch self {
        case .bulkString(nil), .array(nil): return true
        default: return false
        }
    }
}
