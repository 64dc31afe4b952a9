#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The header at the start of every disk cache file. See ``DiskStorage`` for why the
/// metadata lives here.
///
/// ```
/// offset  size  field
///      0     8  magic "ALCEDOC1" (the last byte is the format version)
///      8     4  header length: where the data starts (UInt32, little-endian, as all fields)
///     12     4  slot capacity: payload bytes each record slot can hold
///     16     8  data length: the original byte size of the entry
///     24     8  last access, ms since 1970        ┐ mutable: rewritten in place on
///     32     8  expiration, ms since 1970         │ access by one aligned pwrite
///     40     8  cache time in ms (-1: absolute)   ┘
///     48        record slot 0, then record slot 1, each:
///                 8 sequence number (0: empty) · 4 payload length · 4 zero
///                 8 FNV-1a-64 checksum of sequence, length and payload
///                 capacity bytes of payload: UInt32 key length, key (UTF-8),
///                 Int64 creation ms, UInt32 HTTP info length, HTTPCacheInfo as JSON
///         data
/// ```
/// The valid slot with the highest sequence number is the current record. A metadata update
/// writes the other slot and leaves the current one untouched, so a crash or a concurrent
/// reader during the update still sees one complete record.
struct DiskEntryHeader: Equatable {
    static let magic: [UInt8] = Array("ALCEDOC1".utf8)
    static let fixedSize = 48
    static let slotHeaderSize = 24
    /// The largest slot capacity a reader accepts (a 4 KB key and a large HTTP header fit).
    static let maxSlotCapacity = 1 << 20
    /// Offset and size of the mutable fields.
    static let mutableOffset: Int64 = 24
    /// The `expiration` value that means "never".
    static let never = Int64.max
    /// Room left in each slot for a later metadata update to grow into.
    static let slotSlack = 96

    var slotCapacity: Int
    var dataLength: Int
    var lastAccess: Int64
    var expiration: Int64
    var cacheTime: Int64

    var headerLength: Int { Self.fixedSize + 2 * (Self.slotHeaderSize + slotCapacity) }
    var fileSize: Int { headerLength + dataLength }

    static func slotOffset(_ index: Int, capacity: Int) -> Int {
        fixedSize + index * (slotHeaderSize + capacity)
    }

    /// The fixed 48 bytes of a file; `nil` unless the magic and the lengths agree, and agree
    /// with `fileSize` when it is given.
    init?(fixedBytes bytes: UnsafeRawBufferPointer, fileSize: Int?) {
        guard bytes.count >= Self.fixedSize, bytes.prefix(8).elementsEqual(Self.magic) else { return nil }
        let headerLength = Int(bytes.loadLE(UInt32.self, at: 8))
        let capacity = Int(bytes.loadLE(UInt32.self, at: 12))
        let dataLength = bytes.loadLE(UInt64.self, at: 16)
        guard capacity <= Self.maxSlotCapacity,
              headerLength == Self.fixedSize + 2 * (Self.slotHeaderSize + capacity),
              dataLength <= UInt64(Int.max - headerLength),
              fileSize == nil || headerLength + Int(dataLength) == fileSize else { return nil }
        self.slotCapacity = capacity
        self.dataLength = Int(dataLength)
        self.lastAccess = Int64(bitPattern: bytes.loadLE(UInt64.self, at: 24))
        self.expiration = Int64(bitPattern: bytes.loadLE(UInt64.self, at: 32))
        self.cacheTime = Int64(bitPattern: bytes.loadLE(UInt64.self, at: 40))
    }

    init(slotCapacity: Int, dataLength: Int, lastAccess: Int64, expiration: Int64, cacheTime: Int64) {
        self.slotCapacity = slotCapacity
        self.dataLength = dataLength
        self.lastAccess = lastAccess
        self.expiration = expiration
        self.cacheTime = cacheTime
    }

    /// The capacity to give slots for a first record of `payloadSize` bytes.
    static func capacity(forPayload payloadSize: Int) -> Int {
        (payloadSize + slotSlack + 63) / 64 * 64
    }

    /// The whole header: fixed part, `record` in slot 0 with sequence 1, slot 1 empty.
    func encoded(record payload: [UInt8]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: headerLength)
        bytes.replaceSubrange(0..<8, with: Self.magic)
        bytes.storeLE(UInt32(headerLength), at: 8)
        bytes.storeLE(UInt32(slotCapacity), at: 12)
        bytes.storeLE(UInt64(dataLength), at: 16)
        bytes.replaceSubrange(24..<48, with: mutableBytes(includingExpiration: true))
        let slot = Self.encodedSlot(sequence: 1, payload: payload)
        bytes.replaceSubrange(Self.fixedSize..<Self.fixedSize + slot.count, with: slot)
        return bytes
    }

    /// The mutable fields from offset 24: last access alone (8 bytes), or with expiration
    /// and cache time (24 bytes).
    func mutableBytes(includingExpiration: Bool) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: includingExpiration ? 24 : 8)
        bytes.storeLE(UInt64(bitPattern: lastAccess), at: 0)
        if includingExpiration {
            bytes.storeLE(UInt64(bitPattern: expiration), at: 8)
            bytes.storeLE(UInt64(bitPattern: cacheTime), at: 16)
        }
        return bytes
    }

    /// A slot's header and payload (without the unused tail of its capacity).
    static func encodedSlot(sequence: UInt64, payload: [UInt8]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: slotHeaderSize)
        bytes.storeLE(sequence, at: 0)
        bytes.storeLE(UInt32(payload.count), at: 8)
        bytes.storeLE(checksum(sequence: sequence, payload: payload), at: 16)
        bytes.append(contentsOf: payload)
        return bytes
    }

    /// The current record in a header buffer holding at least ``headerLength`` bytes: the
    /// payload and sequence of the valid slot with the highest sequence, or `nil` when no slot
    /// is valid.
    func currentRecord(in header: UnsafeRawBufferPointer) -> (payload: [UInt8], sequence: UInt64, slot: Int)? {
        guard header.count >= headerLength else { return nil }
        var best: (payload: [UInt8], sequence: UInt64, slot: Int)?
        for index in 0..<2 {
            let offset = Self.slotOffset(index, capacity: slotCapacity)
            let sequence = header.loadLE(UInt64.self, at: offset)
            let length = Int(header.loadLE(UInt32.self, at: offset + 8))
            guard sequence != 0, length <= slotCapacity else { continue }
            let start = offset + Self.slotHeaderSize
            let payload = Array(header[start..<start + length])
            guard header.loadLE(UInt64.self, at: offset + 16) == Self.checksum(sequence: sequence, payload: payload)
            else { continue }
            if best == nil || sequence > best!.sequence { best = (payload, sequence, index) }
        }
        return best
    }

    /// FNV-1a, 64 bits, over the sequence, the length and the payload: enough to tell a torn
    /// slot from a whole one.
    static func checksum(sequence: UInt64, payload: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        for shift in stride(from: 0, to: 64, by: 8) { mix(UInt8(truncatingIfNeeded: sequence >> UInt64(shift))) }
        let length = UInt32(payload.count)
        for shift in stride(from: 0, to: 32, by: 8) { mix(UInt8(truncatingIfNeeded: length >> UInt32(shift))) }
        for byte in payload { mix(byte) }
        return hash
    }
}

/// The record kept in a header slot: the key, the creation date and the HTTP metadata.
struct DiskEntryRecord: Equatable {
    var key: String
    var creation: Int64
    var httpCacheInfo: HTTPCacheInfo?

    init(key: String, creation: Int64, httpCacheInfo: HTTPCacheInfo?) {
        self.key = key
        self.creation = creation
        self.httpCacheInfo = httpCacheInfo
    }

    /// The payload bytes; HTTPCacheInfo is JSON so that fields added later still round-trip.
    func encoded() -> [UInt8] {
        let keyBytes = Array(key.utf8)
        let info: [UInt8] = httpCacheInfo.flatMap { try? Self.encoder.encode($0) }.map { Array($0) } ?? []
        var bytes = [UInt8](repeating: 0, count: 4 + keyBytes.count + 8 + 4 + info.count)
        bytes.storeLE(UInt32(keyBytes.count), at: 0)
        bytes.replaceSubrange(4..<4 + keyBytes.count, with: keyBytes)
        bytes.storeLE(UInt64(bitPattern: creation), at: 4 + keyBytes.count)
        bytes.storeLE(UInt32(info.count), at: 12 + keyBytes.count)
        bytes.replaceSubrange(16 + keyBytes.count..<bytes.count, with: info)
        return bytes
    }

    /// Parses a payload; `nil` when the lengths do not fit. HTTP info that does not decode is
    /// dropped rather than failing the entry.
    init?(payload: [UInt8]) {
        guard let parsed = payload.withUnsafeBytes({ bytes -> (String, Int64, ArraySlice<UInt8>)? in
            guard bytes.count >= 16 else { return nil }
            let keyLength = Int(bytes.loadLE(UInt32.self, at: 0))
            guard keyLength <= bytes.count - 16 else { return nil }
            let key = String(decoding: bytes[4..<4 + keyLength], as: UTF8.self)
            let creation = Int64(bitPattern: bytes.loadLE(UInt64.self, at: 4 + keyLength))
            let infoLength = Int(bytes.loadLE(UInt32.self, at: 12 + keyLength))
            guard infoLength == bytes.count - 16 - keyLength else { return nil }
            return (key, creation, payload[(16 + keyLength)...])
        }) else { return nil }
        key = parsed.0
        creation = parsed.1
        httpCacheInfo = parsed.2.isEmpty ? nil : try? Self.decoder.decode(HTTPCacheInfo.self, from: Data(parsed.2))
    }

    /// `true` when the payload's key bytes are exactly `key`'s UTF-8, without decoding the rest.
    static func payload(_ payload: [UInt8], hasKey key: String) -> Bool {
        payload.withUnsafeBytes { bytes in
            guard bytes.count >= 16 else { return false }
            let keyLength = Int(bytes.loadLE(UInt32.self, at: 0))
            guard keyLength <= bytes.count - 16 else { return false }
            return bytes[4..<4 + keyLength].elementsEqual(key.utf8)
        }
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()
    private static let decoder = JSONDecoder()
}

/// Milliseconds since 1970, the unit of every time in a header.
enum DiskTime {
    static func milliseconds(_ date: Date) -> Int64 {
        if date == .distantFuture { return DiskEntryHeader.never }
        let value = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard value.isFinite else { return value > 0 ? DiskEntryHeader.never : Int64.min }
        if value >= Double(Int64.max) { return DiskEntryHeader.never }
        if value <= Double(Int64.min) { return Int64.min }
        return Int64(value)
    }

    static func date(_ milliseconds: Int64) -> Date {
        milliseconds == DiskEntryHeader.never ? .distantFuture
            : Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000)
    }
}

extension UnsafeRawBufferPointer {
    /// The little-endian integer at `offset` (unaligned reads allowed). The caller checks bounds.
    func loadLE<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

extension Array where Element == UInt8 {
    /// Writes `value` little-endian at `offset`. The caller checks bounds.
    mutating func storeLE<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self) }
    }
}
