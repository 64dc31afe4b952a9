import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Kingfisher's `kf` helpers on strings: the SHA-256 of a key and the file extension a key
// names, as its disk cache derives file names from them.

extension String {
    /// Kingfisher's namespace for the string helpers (`key.kf.sha256`, `key.kf.ext`).
    public var kf: KingfisherWrapper<String> { KingfisherWrapper(self) }
}

extension KingfisherWrapper where Base == String {
    /// The SHA-256 of the string's UTF-8 bytes, as 64 lower-case hex digits.
    public var sha256: String { lowercaseHex(SHA256.hash(data: Data(base.utf8))) }

    /// The file extension the key names (`"png"` for `https://example.com/image.png@round-corner`:
    /// a processor identifier after `@` is left out), or `nil` when there is none or it is not a
    /// plausible extension (empty, longer than 20 characters, or not only letters and digits,
    /// so that it never holds a path separator).
    public var ext: String? {
        guard let beforeIdentifier = base.split(separator: "@").first,
              let dot = beforeIdentifier.lastIndex(of: ".") else { return nil }
        let candidate = beforeIdentifier[beforeIdentifier.index(after: dot)...]
        guard !candidate.isEmpty, candidate.count <= 20, candidate.allSatisfy({ $0.isLetter || $0.isNumber }) else { return nil }
        return String(candidate)
    }
}
