#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A short, stable, non-cryptographic digest (64-bit FNV-1a) for names and entity tags.
enum ShortHash {
    /// The 64-bit FNV-1a hash of `bytes`.
    static func value(of bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// The first `digits` (1...16) lowercase hexadecimal digits of the hash of `bytes`.
    static func hex(of bytes: some Sequence<UInt8>, digits: Int) -> String {
        let full = String(value(of: bytes), radix: 16)
        let padded = String(repeating: "0", count: 16 - full.count) + full
        return String(padded.prefix(max(1, min(16, digits))))
    }
}
