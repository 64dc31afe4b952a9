import Foundation
import Synchronization
@testable import Alcedo

/// A clock the tests move by hand: expiration is checked without waiting.
final class TestClock: Sendable {
    private let current: Mutex<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        current = Mutex(start)
    }

    var now: Date { current.withLock { $0 } }

    func advance(_ seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    /// The closure the storages call.
    var function: @Sendable () -> Date { { [self] in self.now } }
}

/// A value with a chosen memory cost.
struct CostedValue: CacheCostCalculable, Sendable, Equatable {
    let id: Int
    let cacheCost: Int
}

/// Deterministic bytes for `key`: every byte depends on the key, the writer and the position,
/// and the first 16 bytes carry a digest of the rest, so a torn or mixed-up entry never checks out.
enum EntryBytes {
    static func make(key: String, writer: Int = 0, count: Int) -> Data {
        var state = UInt64(truncatingIfNeeded: writer) &* 0x9E37_79B9_7F4A_7C15 ^ fnv(Array(key.utf8))
        var body = [UInt8](repeating: 0, count: max(count - 16, 0))
        for index in body.indices {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            body[index] = UInt8(truncatingIfNeeded: state >> 33)
        }
        var bytes = [UInt8](repeating: 0, count: 16)
        withUnsafeBytes(of: fnv(body).littleEndian) { bytes.replaceSubrange(0..<8, with: $0) }
        withUnsafeBytes(of: UInt64(body.count).littleEndian) { bytes.replaceSubrange(8..<16, with: $0) }
        return Data(bytes + body)
    }

    /// `true` when `data` is whole: its digest and length match its body.
    static func isIntact(_ data: Data) -> Bool {
        guard data.count >= 16 else { return false }
        let bytes = [UInt8](data)
        let digest = bytes[0..<8].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        let length = bytes[8..<16].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        let body = Array(bytes[16...])
        return length == UInt64(body.count) && digest == fnv(body)
    }

    static func fnv(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return hash
    }
}
