import Foundation

/// Something to download: the URL to fetch and the key to cache it under.
///
/// A `URL` is a resource whose key is given by ``CacheKeyRule/global`` (by default its
/// absolute string); ``ImageResource`` names the key explicitly, so that URLs that differ
/// only by a token share one cache entry.
public protocol Resource: Sendable {
    /// The key the image is cached under.
    var cacheKey: String { get }
    /// The URL the image is downloaded from.
    var downloadURL: URL { get }
}

extension Resource {
    /// The source for this resource: a `file://` URL is read from disk by a
    /// ``LocalFileImageDataProvider`` (keeping this resource's cache key), any other URL is
    /// downloaded (`.network`).
    public func convertToSource() -> Source {
        if downloadURL.isFileURL {
            return .provider(LocalFileImageDataProvider(fileURL: downloadURL, cacheKey: cacheKey))
        }
        return .network(self)
    }
}

extension URL: Resource {
    /// The URL's cache key under ``CacheKeyRule/global`` (default: the absolute string).
    public var cacheKey: String { CacheKeyRule.global.cacheKey(for: self) }
    /// The URL itself.
    public var downloadURL: URL { self }
}

/// A resource with an explicit cache key: `ImageResource(downloadURL: signedURL, cacheKey: "avatar-42")`.
public struct ImageResource: Resource, Hashable, CustomStringConvertible {
    /// The key the image is cached under.
    public let cacheKey: String
    /// The URL the image is downloaded from.
    public let downloadURL: URL

    /// A resource for `downloadURL` cached under `cacheKey`; `nil` (default) takes the URL's
    /// key under ``CacheKeyRule/global``.
    public init(downloadURL: URL, cacheKey: String? = nil) {
        self.downloadURL = downloadURL
        self.cacheKey = cacheKey ?? downloadURL.cacheKey
    }

    public var description: String {
        cacheKey == downloadURL.absoluteString ? cacheKey : "\(downloadURL.absoluteString) (key \(cacheKey))"
    }
}
