#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
    /// The source for this resource: `.network(self)`. The manager downloads an `http(s)` URL;
    /// it reads a `file://` URL from disk only under ``AlcedoOptionsInfoItem/allowLocalFiles``
    /// and fails with ``RequestErrorReason/localFileNotAllowed(_:)`` otherwise.
    public func convertToSource() -> Source {
        .network(self)
    }
}

extension URL: Resource {
    /// The URL's cache key: for a `file://` URL, Kingfisher's stable local-file key (the path
    /// from the last `.app` or `.appex` folder on, after a fixed prefix, with the query); for
    /// any other URL, its key under ``CacheKeyRule/global`` (default: the absolute string).
    public var cacheKey: String { isFileURL ? localFileCacheKey : CacheKeyRule.global.cacheKey(for: self) }
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
