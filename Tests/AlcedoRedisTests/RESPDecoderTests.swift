import AlcedoTestSupport
import NIOCore
import Testing
@testable import AlcedoRedis

@Suite("RESP decoder")
struct RESPDecoderTests {
    private func decode(_ text: String, limits: RESPDecoder.Limits = .init()) throws(RESPDecodingError) -> [RESPValue] {
        var buffer = ByteBuffer(string: text)
        var values: [RESPValue] = []
        let decoder = RESPDecoder(limits: limits)
        while let value = try decoder.next(from: &buffer) { values.append(value) }
        #expect(buffer.readableBytes == 0, "everything consumed")
        return values
    }

    @Test func everyReplyType() throws {
        let values = try decode("+OK\r\n-ERR wrong type\r\n:42\r\n:-7\r\n$5\r\nhello\r\n$0\r\n\r\n$-1\r\n*-1\r\n*0\r\n"
                                + "*3\r\n:1\r\n$3\r\nb\r\n\r\n*1\r\n+x\r\n")
        #expect(values == [
            .simpleString("OK"), .error("ERR wrong type"), .integer(42), .integer(-7),
            .bulkString(ByteBuffer(string: "hello")), .bulkString(ByteBuffer()), .bulkString(nil), .array(nil), .array([]),
            .array([.integer(1), .bulkString(ByteBuffer(string: "b\r\n")), .array([.simpleString("x")])]),
        ])
        #expect(values[4].string == "hello")
        #expect(values[2].integer == 42)
        #expect(values[6].isNull && values[7].isNull)
    }

    @Test func binaryBulkStringsKeepEveryByte() throws {
        let bytes = (0...255).map { UInt8($0) } + [13, 10, 13]
        var buffer = ByteBuffer(string: "$\(bytes.count)\r\n")
        buffer.writeBytes(bytes)
        buffer.writeString("\r\n")
        let value = try #require(try RESPDecoder().next(from: &buffer))
        guard case .bulkString(let body?) = value else { Issue.record("bulk"); return }
        #expect(Array(body.readableBytesView) == bytes)
    }

    @Test func partialReadsWaitForTheWholeReplyAtEverySplit() throws {
        let text = "*3\r\n$5\r\nhello\r\n*2\r\n:1\r\n-ERR x\r\n+done\r\n"
        let whole = try decode(text)
        let bytes = Array(text.utf8)
        for split in 1..<bytes.count {
            let decoder = RESPDecoder()
            var buffer = ByteBuffer(bytes: bytes[..<split])
            #expect(try decoder.next(from: &buffer) == nil, "split at \(split)")
            #expect(buffer.readableBytes == split, "nothing consumed before the reply is whole")
            buffer.writeBytes(bytes[split...])
            #expect(try decoder.next(from: &buffer) == whole[0])
        }
        // Byte by byte.
        let decoder = RESPDecoder()
        var buffer = ByteBuffer()
        var got: RESPValue?
        for byte in bytes {
            buffer.writeInteger(byte)
            if let value = try decoder.next(from: &buffer) { got = value }
        }
        #expect(got == whole[0])
    }

    @Test func oversizedLengthsFailBeforeTheBytesArrive() {
        let limits = RESPDecoder.Limits(maxBulkLength: 1000, maxArrayLength: 10, maxDepth: 3, maxLineLength: 32, maxReplySize: 5000)
        #expect(throws: RESPDecodingError.bulkTooLong(length: 1001, limit: 1000)) { try decode("$1001\r\n", limits: limits) }
        #expect(throws: RESPDecodingError.bulkTooLong(length: 9_223_372_036_854_775_807, limit: 1000)) {
            try decode("$9223372036854775807\r\n", limits: limits)
        }
        #expect(throws: RESPDecodingError.arrayTooLong(count: 11, limit: 10)) { try decode("*11\r\n", limits: limits) }
        #expect(throws: RESPDecodingError.nestedTooDeep(limit: 3)) { try decode("*1\r\n*1\r\n*1\r\n:1\r\n", limits: limits) }
        #expect(throws: RESPDecodingError.lineTooLong(limit: 32)) { try decode("+" + String(repeating: "a", count: 40), limits: limits) }
        #expect(throws: RESPDecodingError.replyTooLarge(limit: 5000)) {
            // 16 x 10 for the elements, then 1000 per bulk: the fifth bulk's header is over 5000.
            let bulk = "$1000\r\n" + String(repeating: "a", count: 1000) + "\r\n"
            _ = try decode("*10\r\n" + String(repeating: bulk, count: 4) + "$1000\r\n", limits: limits)
        }
        // At the limits exactly, fine.
        #expect(throws: Never.self) { _ = try decode("*1\r\n*1\r\n:1\r\n", limits: limits) }
    }

    @Test func malformedFramesAreErrors() {
        #expect(throws: RESPDecodingError.unknownType(UInt8(ascii: "%"))) { try decode("%1\r\n") }
        #expect(throws: RESPDecodingError.invalidInteger("12a")) { try decode(":12a\r\n") }
        #expect(throws: RESPDecodingError.invalidInteger("")) { try decode("$\r\n") }
        #expect(throws: RESPDecodingError.invalidInteger("99999999999999999999")) { try decode(":99999999999999999999\r\n") }
        #expect(throws: RESPDecodingError.malformed("negative bulk length -2")) { try decode("$-2\r\n") }
        #expect(throws: RESPDecodingError.malformed("negative array length -5")) { try decode("*-5\r\n") }
        #expect(throws: RESPDecodingError.malformed("a bulk string of 3 bytes not followed by CRLF")) { try decode("$3\r\nabcde\r\n") }
    }

    /// Random valid replies, encoded and cut at random places, decode to themselves; the same
    /// bytes with random corruption never crash, never hang and never exceed the limits.
    @Test func fuzzedWithASeededGenerator() throws {
        var random = SeededRandom(seed: 0xA1CE_D0)
        let limits = RESPDecoder.Limits(maxBulkLength: 4096, maxArrayLength: 64, maxDepth: 4, maxLineLength: 256, maxReplySize: 1 << 20)
        let decoder = RESPDecoder(limits: limits)
        for _ in 0..<400 {
            let value = Self.randomValue(&random, depth: 1, maxDepth: limits.maxDepth)
            var encoded = ByteBuffer()
            Self.encode(value, into: &encoded)
            let bytes = Array(encoded.readableBytesView)
            // Whole, then in random chunks.
            var buffer = ByteBuffer(bytes: bytes)
            #expect(try decoder.next(from: &buffer) == value)
            var streamed = ByteBuffer()
            var offset = 0
            var decoded: RESPValue?
            while offset < bytes.count {
                let chunk = Int.random(in: 1...max(1, bytes.count / 3), using: &random)
                streamed.writeBytes(bytes[offset..<min(bytes.count, offset + chunk)])
                offset += chunk
                if let got = try decoder.next(from: &streamed) { decoded = got }
            }
            #expect(decoded == value)

            // Corrupt a few bytes: any outcome but a crash or an unbounded allocation is fine.
            var corrupt = bytes
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                corrupt[Int.random(in: 0..<corrupt.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            var hostile = ByteBuffer(bytes: corrupt)
            while true {
                do {
                    guard let got = try decoder.next(from: &hostile) else { break }
                    #expect(Self.size(of: got) <= limits.maxReplySize)
                } catch {
                    break
                }
            }
        }
    }

    static func randomValue(_ random: inout SeededRandom, depth: Int, maxDepth: Int) -> RESPValue {
        switch Int.random(in: 0..<(depth < maxDepth ? 6 : 5), using: &random) {
        case 0: return .simpleString(String((0..<Int.random(in: 0...20, using: &random)).map { _ in Character(UnicodeScalar(UInt8.random(in: 32...126, using: &random))) }))
        case 1: return .error("ERR " + String(Int.random(in: 0...1000, using: &random)))
        case 2: return .integer(Int64.random(in: Int64.min + 1...Int64.max, using: &random))
        case 3:
            let bytes = (0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            return .bulkString(ByteBuffer(bytes: bytes))
        case 4: return Bool.random(using: &random) ? .bulkString(nil) : .array(nil)
        default:
            return .array((0..<Int.random(in: 0...5, using: &random)).map { _ in randomValue(&random, depth: depth + 1, maxDepth: maxDepth) })
        }
    }

    static func encode(_ value: RESPValue, into buffer: inout ByteBuffer) {
        switch value {
        case .simpleString(let text): buffer.writeString("+\(text)\r\n")
        case .error(let text): buffer.writeString("-\(text)\r\n")
        case .integer(let number): buffer.writeString(":\(number)\r\n")
        case .bulkString(nil): buffer.writeString("$-1\r\n")
        case .bulkString(let body?):
            buffer.writeString("$\(body.readableBytes)\r\n")
            buffer.writeImmutableBuffer(body)
            buffer.writeString("\r\n")
        case .array(nil): buffer.writeString("*-1\r\n")
        case .array(let elements?):
            buffer.writeString("*\(elements.count)\r\n")
            for element in elements { encode(element, into: &buffer) }
        }
    }

    static func size(of value: RESPValue) -> Int {
        switch value {
        case .bulkString(let body?): return body.readableBytes
        case .array(let elements?): return elements.reduce(16 * elements.count) { $0 + size(of: $1) }
        default: return 0
        }
    }

    @Test func commandsAreEncodedAsArraysOfBulkStrings() {
        var buffer = ByteBuffer()
        RESPEncoder.encode(["SET", "k", .bytes(ByteBuffer(bytes: [0, 13, 10])), "PX", "100"], into: &buffer)
        #expect(String(buffer: buffer) == "*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\n\u{0}\r\n\r\n$2\r\nPX\r\n$3\r\n100\r\n")
    }
}
