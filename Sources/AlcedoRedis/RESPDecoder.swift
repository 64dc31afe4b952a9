import NIOCore

/// Why a RESP2 reply could not be decoded.
public enum RESPDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The first byte of a reply is not one of `+ - : $ *`.
    case unknownType(UInt8)
    /// A length or integer line is not a valid decimal integer.
    case invalidInteger(String)
    /// A line is longer than ``RESPDecoder/Limits/maxLineLength`` without its `\r\n`.
    case lineTooLong(limit: Int)
    /// A bulk string declares more bytes than ``RESPDecoder/Limits/maxBulkLength``.
    case bulkTooLong(length: Int64, limit: Int)
    /// An array declares more elements than ``RESPDecoder/Limits/maxArrayLength``.
    case arrayTooLong(count: Int64, limit: Int)
    /// Arrays are nested deeper than ``RESPDecoder/Limits/maxDepth``.
    case nestedTooDeep(limit: Int)
    /// The reply as a whole declares more than ``RESPDecoder/Limits/maxReplySize`` bytes.
    case replyTooLarge(limit: Int)
    /// A negative length other than -1, or a bulk string not followed by `\r\n`.
    case malformed(String)

    public var description: String {
        switch self {
        case .unknownType(let byte): return "unknown reply type byte 0x\(String(byte, radix: 16))"
        case .invalidInteger(let text): return "invalid integer \"\(text.prefix(40))\""
        case .lineTooLong(let limit): return "a line longer than \(limit) bytes"
        case .bulkTooLong(let length, let limit): return "a bulk string of \(length) bytes, over the limit of \(limit)"
        case .arrayTooLong(let count, let limit): return "an array of \(count) elements, over the limit of \(limit)"
        case .nestedTooDeep(let limit): return "arrays nested deeper than \(limit)"
        case .replyTooLarge(let limit): return "a reply larger than \(limit) bytes"
        case .malformed(let message): return message
        }
    }
}

/// Decodes RESP2 replies from a byte stream, one at a time, with a cap on every length a
/// server declares: a broken or hostile server cannot make the client allocate without bound.
/// A reply that breaks a limit is an error before anything is allocated for it; the
/// connection is then closed, since the stream can no longer be trusted.
public struct RESPDecoder: ByteToMessageDecoder, Sendable {
    public typealias InboundOut = RESPValue

    /// The caps the decoder enforces.
    public struct Limits: Sendable, Hashable {
        /// The longest bulk string, in bytes. Default 16 MiB.
        public var maxBulkLength: Int
        /// The most elements in one array. Default 65,536.
        public var maxArrayLength: Int
        /// The deepest nesting of arrays (an array in an array is depth 2). Default 8.
        public var maxDepth: Int
        /// The longest simple string, error or integer line, in bytes. Default 64 KiB.
        public var maxLineLength: Int
        /// The most bytes one reply may declare in all (bulk bytes plus 16 per element).
        /// Default 64 MiB.
        public var maxReplySize: Int

        /// Creates limits; every parameter has the default stated on its property.
        public init(maxBulkLength: Int = 16 << 20, maxArrayLength: Int = 65_536, maxDepth: Int = 8,
                    maxLineLength: Int = 64 << 10, maxReplySize: Int = 64 << 20) {
            self.maxBulkLength = maxBulkLength
            self.maxArrayLength = maxArrayLength
            self.maxDepth = maxDepth
            self.maxLineLength = maxLineLength
            self.maxReplySize = maxReplySize
        }
    }

    /// The caps in force.
    public let limits: Limits

    /// Creates a decoder with `limits` (default ``Limits/init(maxBulkLength:maxArrayLength:maxDepth:maxLineLength:maxReplySize:)``).
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let value = try next(from: &buffer) else { return .needMoreData }
        context.fireChannelRead(self.wrapInboundOut(value))
        return .continue
    }

    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        try decode(context: context, buffer: &buffer)
    }

    /// Reads one whole reply from the front of `buffer`, or returns `nil` (leaving `buffer`
    /// untouched) when more bytes are needed.
    /// - Throws: ``RESPDecodingError`` when the bytes break the protocol or a limit.
    public func next(from buffer: inout ByteBuffer) throws(RESPDecodingError) -> RESPValue? {
        var copy = buffer
        var budget = limits.maxReplySize
        guard let value = try parse(&copy, depth: 1, budget: &budget) else { return nil }
        buffer = copy
        return value
    }

    private func parse(_ buffer: inout ByteBuffer, depth: Int, budget: inout Int) throws(RESPDecodingError) -> RESPValue? {
        guard let type = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) else { return nil }
        switch type {
        case UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: ":"), UInt8(ascii: "$"), UInt8(ascii: "*"): break
        default: throw .unknownType(type)
        }
        var probe = buffer
        probe.moveReaderIndex(forwardBy: 1)
        guard let line = try readLine(&probe) else { return nil }
        switch type {
        case UInt8(ascii: "+"):
            buffer = probe
            return .simpleString(line)
        case UInt8(ascii: "-"):
            buffer = probe
            return .error(line)
        case UInt8(ascii: ":"):
            buffer = probe
            return .integer(try Self.integer(line))
        case UInt8(ascii: "$"):
            let length = try Self.integer(line)
            if length == -1 {
                buffer = probe
                return .bulkString(nil)
            }
            guard length >= 0 else { throw .malformed("negative bulk length \(length)") }
            guard length <= limits.maxBulkLength else { throw .bulkTooLong(length: length, limit: limits.maxBulkLength) }
            let count = Int(length)
            budget -= count
            guard budget >= 0 else { throw .replyTooLarge(limit: limits.maxReplySize) }
            guard probe.readableBytes >= count + 2 else { return nil }
            let body = probe.readSlice(length: count)!
            guard probe.readInteger(as: UInt8.self) == 13, probe.readInteger(as: UInt8.self) == 10 else {
                throw .malformed("a bulk string of \(count) bytes not followed by CRLF")
            }
            buffer = probe
            return .bulkString(body)
        default:  // "*"
            let length = try Self.integer(line)
            if length == -1 {
                buffer = probe
                return .array(nil)
            }
            guard length >= 0 else { throw .malformed("negative array length \(length)") }
            guard length <= limits.maxArrayLength else { throw .arrayTooLong(count: length, limit: limits.maxArrayLength) }
            let count = Int(length)
            if count > 0 && depth >= limits.maxDepth { throw .nestedTooDeep(limit: limits.maxDepth) }
            budget -= 16 * count
            guard budget >= 0 else { throw .replyTooLarge(limit: limits.maxReplySize) }
            var elements: [RESPValue] = []
            elements.reserveCapacity(min(count, 1024))
            for _ in 0..<count {
                guard let element = try parse(&probe, depth: depth + 1, budget: &budget) else { return nil }
                elements.append(element)
            }
            buffer = probe
            return .array(elements)
        }
    }

    /// The text up to the next CRLF (consumed), or `nil` when it has not arrived yet.
    private func readLine(_ buffer: inout ByteBuffer) throws(RESPDecodingError) -> String? {
        let searchable = min(buffer.readableBytes, limits.maxLineLength + 2)
        let found: Int? = buffer.withUnsafeReadableBytes { bytes in
            var index = 0
            while index + 1 < searchable {
                if bytes[index] == 13 {
                    if bytes[index + 1] == 10 { return index }
                }
                index += 1
            }
            return nil
        }
        guard let end = found else {
            if buffer.readableBytes > limits.maxLineLength + 1 { throw .lineTooLong(limit: limits.maxLineLength) }
            return nil
        }
        guard end <= limits.maxLineLength else { throw .lineTooLong(limit: limits.maxLineLength) }
        let text = buffer.readString(length: end) ?? ""
        buffer.moveReaderIndex(forwardBy: 2)
        return text
    }

    /// A strict decimal integer: an optional `-`, then 1 to 19 digits, no overflow.
    static func integer(_ text: String) throws(RESPDecodingError) -> Int64 {
        var utf8 = Substring(text).utf8[...]
        var negative = false
        if utf8.first == UInt8(ascii: "-") {
            negative = true
            utf8 = utf8.dropFirst()
        }
        guard !utf8.isEmpty, utf8.count <= 19 else { throw .invalidInteger(text) }
        var value: Int64 = 0
        for byte in utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { throw .invalidInteger(text) }
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !o1, !o2 else { throw .invalidInteger(text) }
            value = sum
        }
        return negative ? -value : value
    }
}

/// Encodes commands as RESP2 arrays of bulk strings.
public enum RESPEncoder {
    /// Appends `arguments` as one command (`*n` then `$len arg` each) to `buffer`.
    public static func encode(_ arguments: [RedisArgument], into buffer: inout ByteBuffer) {
        buffer.writeString("*\(arguments.count)\r\n")
        for argument in arguments {
            switch argument {
            case .string(let text):
                buffer.writeString("$\(text.utf8.count)\r\n")
                buffer.writeString(text)
            case .bytes(let bytes):
                buffer.writeString("$\(bytes.readableBytes)\r\n")
                buffer.writeImmutableBuffer(bytes)
            }
            buffer.writeStaticString("\r\n")
        }
    }
}

/// One argument of a Redis command: text or bytes.
public enum RedisArgument: Sendable, Hashable, ExpressibleByStringLiteral {
    /// UTF-8 text.
    case string(String)
    /// Binary bytes.
    case bytes(ByteBuffer)

    public init(stringLiteral value: String) { self = .string(value) }
}
