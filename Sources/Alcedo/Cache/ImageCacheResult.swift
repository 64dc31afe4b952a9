/// What ``ImageCache/retrieveImage(forKey:processorIdentifier:forcedExtension:options:cacheSerializer:extendingExpiration:)``
/// found.
public enum ImageCacheResult: Sendable {
    /// Found on disk (and now also in memory).
    case disk(AlcedoImage)
    /// Found in memory.
    case memory(AlcedoImage)
    /// Not cached.
    case none

    /// The image, or `nil` for ``none``.
    public var image: AlcedoImage? {
        switch self {
        case .disk(let image), .memory(let image): return image
        case .none: return nil
        }
    }

    /// Where the image was found.
    public var cacheType: CacheType {
        switch self {
        case .disk: return .disk
        case .memory: return .memory
        case .none: return .none
        }
    }
}
