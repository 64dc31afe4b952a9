import Alcedo
import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a ``Alcedo/SharedCacheEntry`` is laid out in one Redis value:
///
/// ```
/// "ALCR"  version (1 byte)  checksum (8 bytes)  metadata length (4 bytes, big-endian)
/// metadata (JSON)  data
/// ```
/// The checksum is the first 8 bytes of the SHA-256 of everything after it (metadata length,
/// metadata, data). A value that is too short, has another magic or version, a wrong
/// checksum, unreadable metadata or another key is rejected: the storage counts it as a miss
/// and deletes it.
public enum SharedEntryCodec {
    /// The current layout version.
    public static let version: UInt8 = 1
    static let magic: [UInt8] = Array("ALCR".utf8)
    /// Bytes before the metadata.
    static let headerSize = 4 + 1 + 8 + 4
    /// The most bytes the metadata may take.
    static let maxMetadataSize = 64 << 10

    /// Why a stored value was rejected.
    public enum Rejection: Error, Sendable, Hashable, CustomStringConvertible {
        case tooShort
        case badMagic
        case unsupportedVersion(UInt8)
        case checksumMismatch
        case badMetadata
        case wrongKey

        public var description: String {
            switch self {
            case .tooShort: return "value shorter than its header"
            case .badMagic: return "not an Alcedo entry"
            case .unsupportedVersion(let version): return "entry layout version \(version) is not supported"
            case .checksumMismatch: return "checksum mismatch"
            case .badMetadata: return "unreadable metadata"
            case .wrongKey: return "entry stored for another key"
            }
        }
    }

    /// The value for `entry`, or `nil` when its metadata cannot be encoded within the limit.
    public static func encode(_ entry: SharedCacheEntry) -> Data? {
        guard let metadata = try? JSONEncoder().encode(entry.metadata), metadata.count <= maxMetadataSize else { return nil }
        var body = Data(capacity: 4 + metadata.count + entry.data.count)
        let length = UInt32(metadata.count)
        body.append(contentsOf: [UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)])
        body.append(metadata)
        body.append(entry.data)
        var value = Data(capacity: 4 + 1 + 8 + body.count)
        value.append(contentsOf: magic)
        value.append(version)
        value.append(contentsOf: checksum(body))
        value.append(body)
        return value
    }

    /// The entry in `value`, checked against `key`.
    public static func decode(_ value: some Collection<UInt8>, key: String) throws(Rejection) -> SharedCacheEntry {
        let bytes = Array(value)
        guard bytes.count >= headerSize else { throw .tooShort }
        guard Array(bytes[0..<4]) == magic else { throw .badMagic }
        guard bytes[4] == version else { throw .unsupportedVersion(bytes[4]) }
        let body = bytes[13...]
        guard Array(bytes[5..<13]) == checksum(body) else { throw .checksumMismatch }
        let length = Int(bytes[13]) << 24 | Int(bytes[14]) << 16 | Int(bytes[15]) << 8 | Int(bytes[16])
        guard length <= maxMetadataSize, headerSize + length <= bytes.count else { throw .badMetadata }
        let metadataBytes = Data(bytes[headerSize..<(headerSize + length)])
        guard let metadata = try? JSONDecoder().decode(SharedCacheEntry.Metadata.self, from: metadataBytes) else { throw .badMetadata }
        guard metadata.key == key else { throw .wrongKey }
        return SharedCacheEntry(data: Data(bytes[(headerSize + length)...]), metadata: metadata)
    }

    static func checksum(_ bytes: some DataProtocol) -> [UInt8] {
        Array(SHA256.hash(data: bytes).prefix(8))
    }
}
