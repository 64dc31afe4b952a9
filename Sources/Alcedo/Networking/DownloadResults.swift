#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A downloaded, decoded and processed image.
public struct ImageLoadingResult: Sendable {
    /// The image after the processor ran.
    public let image: AlcedoImage
    /// The bytes as downloaded (after the downloader's delegate, if any, rewrote them).
    public let originalData: Data
    /// The URL requested, as Kingfisher's: the one the caller asked for, or the one the request
    /// modifier put in its place (``DownloadResponse/originalURL`` is always the caller's;
    /// ``DownloadResponse/url`` is the one that answered, after redirects).
    public let url: URL
    /// The final response head, with its ``DownloadResponse/cacheInfo``.
    public let response: DownloadResponse
}

/// Downloaded bytes that are an image (their format sniffed), not yet decoded.
public struct ImageDataResult: Sendable {
    /// The body (after the downloader's delegate, if any, rewrote it).
    public let data: Data
    /// The URL the caller asked for.
    public let url: URL
    /// The final response head.
    public let response: DownloadResponse

    /// The validators and freshness to keep with the bytes in a cache.
    public var cacheInfo: HTTPCacheInfo { response.cacheInfo }
    /// The sniffed format of ``data``.
    public var format: ImageFormat { ImageFormat.sniff(data) }
}

/// The answer to a conditional request.
public enum RevalidationResult: Sendable {
    /// `304 Not Modified`: the cached bytes are still good. The ``HTTPCacheInfo`` is the cached
    /// one refreshed with the 304's headers (new freshness, possibly new validators).
    case notModified(HTTPCacheInfo, response: DownloadResponse)
    /// The entry changed: here are the new bytes, to replace the cached ones.
    case modified(ImageDataResult)

    /// The validators and freshness to store from now on.
    public var cacheInfo: HTTPCacheInfo {
        switch self {
        case .notModified(let info, _): return info
        case .modified(let result): return result.cacheInfo
        }
    }
}
