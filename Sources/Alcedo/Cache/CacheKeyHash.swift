import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The SHA-256 of a cache key: the name of the key's file in the disk cache. Being a fixed
/// set of hex digits, no key, however hostile (`/`, `..`, NUL, kilobytes of text), can name
/// a path outside the cache folder.
struct CacheKeyHash: Hashable, Sendable {
    private let w0, w1, w2, w3: UInt64

    /// The hash of `key`'s UTF-8 bytes.
    init(key: String) {
        var key = key
        let digest = key.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) }
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        digest.withUnsafeBytes { raw in
            func word(_ index: Int) -> UInt64 {
                var value: UInt64 = 0
                for byte in raw[index * 8..<index * 8 + 8] { value = value << 8 | UInt64(byte) }
                return value
            }
            words = (word(0), word(1), word(2), word(3))
        }
        (w0, w1, w2, w3) = words
    }

    /// Parses 64 lower-case hex digits; `nil` for anything else.
    init?(hex: some StringProtocol) {
        var text = String(hex)
        guard let parsed = text.withUTF8({ CacheKeyHash(hexBytes: $0) }), text.utf8.count == 64 else { return nil }
        self = parsed
    }

    /// Parses the first 64 bytes of `bytes` as lower-case hex digits (a file name in a scan).
    init?(hexBytes bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count >= 64 else { return nil }
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        for word in 0..<4 {
            var value: UInt64 = 0
            for index in word * 16..<word * 16 + 16 {
                let char = bytes[index]
                let nibble: UInt8
                switch char {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = char &- UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = char &- UInt8(ascii: "a") &+ 10
                default: return nil
                }
                value = value << 4 | UInt64(nibble)
            }
            switch word {
            case 0: words.0 = value
            case 1: words.1 = value
            case 2: words.2 = value
            default: words.3 = value
            }
        }
        (w0, w1, w2, w3) = words
    }

    /// The words of a SHA-256 are uniformly distributed: one is enough to hash.
    func hash(into hasher: inout Hasher) { hasher.combine(w0) }

    /// The 64 lower-case hex digits.
    var hex: String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        return String(unsafeUninitializedCapacity: 64) { buffer in
            var position = 0
            for word in [w0, w1, w2, w3] {
                var shift: UInt64 = 60
                for _ in 0..<16 {
                    buffer[position] = digits[Int((word >> shift) & 0xF)]
                    position += 1
                    shift &-= 4
                }
            }
            return 64
        }
    }
}

extension CacheKeyHash {
    /// A small number derived from the hash, to pick one of `count` lock stripes.
    func stripe(of count: Int) -> Int { Int(w0 % UInt64(count)) }
}
