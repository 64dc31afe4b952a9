/// Where a cached image was found.
public enum CacheType: Sendable, Hashable, CustomStringConvertible {
    /// Not cached: the image was not found in any cache (or was just downloaded).
    case none
    /// Found in the memory cache.
    case memory
    /// Found in the disk cache.
    case disk

    /// `true` for ``memory`` and ``disk``.
    public var cached: Bool {
        switch self {
        case .memory, .disk: return true
        case .none: return false
        }
    }

    public var description: String {
        switch self {
        case .none: return "none"
        case .memory: return "memory"
        case .disk: return "disk"
        }
    }
}
