import Foundation

/// Why a cache operation failed.
public enum CacheErrorReason: Sendable, CustomStringConvertible {
    /// Nothing is cached for the key (returned where a hit was required, as with `onlyFromCache`).
    case notCached(key: String)

    public var description: String {
        switch self {
        case .notCached(let key): return "nothing cached for key \"\(key)\""
        }
    }
}
