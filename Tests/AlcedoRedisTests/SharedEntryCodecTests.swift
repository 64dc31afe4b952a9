import Alcedo
import Foundation
import Testing
@testable import AlcedoRedis

@Suite("Shared entry codec")
struct SharedEntryCodecTests {
    let entry = SharedCacheEntry(
        data: Data((0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7) }),
        metadata: .init(key: "https://example.com/a.jpg@resize", creationDate: Date(timeIntervalSince1970: 1_700_000_000),
                        expirationDate: Date(timeIntervalSince1970: 1_800_000_000),
                        httpCacheInfo: HTTPCacheInfo(etag: "\"e\"", maxAge: 60, contentType: "image/jpeg",
                                                     responseDate: Date(timeIntervalSince1970: 1_700_000_000)),
                        format: .jpeg))

    @Test func roundTrips() throws {
        let value = try #require(SharedEntryCodec.encode(entry))
        #expect(value.prefix(4) == Data("ALCR".utf8))
        #expect(value[4] == SharedEntryCodec.version)
        #expect(try SharedEntryCodec.decode(value, key: entry.metadata.key) == entry)
    }

    @Test func everyDamageIsRejected() throws {
        let value = try #require(SharedEntryCodec.encode(entry))
        var flipped = value
        flipped[flipped.count - 10] ^= 0x01
        #expect(throws: SharedEntryCodec.Rejection.checksumMismatch) { try SharedEntryCodec.decode(flipped, key: entry.metadata.key) }
        #expect(throws: SharedEntryCodec.Rejection.checksumMismatch) {
            try SharedEntryCodec.decode(value.prefix(value.count - 1), key: entry.metadata.key)
        }
        #expect(throws: SharedEntryCodec.Rejection.tooShort) { try SharedEntryCodec.decode(value.prefix(10), key: entry.metadata.key) }
        var magic = value
        magic[0] = UInt8(ascii: "X")
        #expect(throws: SharedEntryCodec.Rejection.badMagic) { try SharedEntryCodec.decode(magic, key: entry.metadata.key) }
        var version = value
        version[4] = 9
        #expect(throws: SharedEntryCodec.Rejection.unsupportedVersion(9)) { try SharedEntryCodec.decode(version, key: entry.metadata.key) }
        #expect(throws: SharedEntryCodec.Rejection.wrongKey) { try SharedEntryCodec.decode(value, key: "another") }
    }
}
