#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encoded image bytes already in memory.
public struct RawImageDataProvider: ImageDataProvider {
    /// The encoded image.
    public let data: Data
    /// The key the image is cached under.
    public let cacheKey: String

    /// A provider of `data`, cached under `cacheKey`.
    public init(data: Data, cacheKey: String) {
        self.data = data
        self.cacheKey = cacheKey
    }

    public func data() async throws(AlcedoError) -> Data { data }
}
