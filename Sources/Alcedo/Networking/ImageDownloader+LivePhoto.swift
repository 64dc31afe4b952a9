#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The bytes of one Live Photo file (Kingfisher's `LivePhotoResourceDownloadingResult`).
public struct LivePhotoResourceDownloadingResult: Sendable {
    /// The URL the caller asked for.
    public let url: URL?
    /// The body as downloaded (after the downloader's delegate, if any, rewrote it).
    public let originalData: Data

    /// Creates a result (the downloader makes its own).
    public init(originalData: Data, url: URL? = nil) {
        self.originalData = originalData
        self.url = url
    }
}

extension ImageDownloader {
    /// Downloads the bytes of one Live Photo file (its still image or its video), as Kingfisher's
    /// `downloadLivePhotoResource(with:options:)`: the same request path as
    /// `downloadData(with:options:progressBlock:)` (priority, request
    /// modifier, redirect handler, retry strategy from `options`; the downloader's limits and
    /// delegate) without the check that the body is an image, since a video is not.
    /// Requests for the same URL made this way share one download; they are not shared with image
    /// downloads of the URL.
    /// - Throws: ``AlcedoError``; `.requestError(.cancelled)` when the calling task is cancelled.
    public func downloadLivePhotoResource(with url: URL, options: AlcedoParsedOptionsInfo) async throws(AlcedoError) -> LivePhotoResourceDownloadingResult {
        let downloadOptions = options.downloadOptions
        let key = FetchKey(url: url, validators: nil, bodyLimit: downloadOptions.maximumBodySize, acceptsAnyBody: true)
        let outcome = try await dataFetches.value(for: key, priority: PriorityTicket(priority: downloadOptions.priority), progress: nil,
                                                  work: { [self] context in await fetch(key, options: downloadOptions, context: context) })
        switch outcome {
        case .downloaded(let data, _):
            return LivePhotoResourceDownloadingResult(originalData: data, url: url)
        case .notModified(let response):
            // Only conditional requests accept a 304, and this is not one.
            throw .responseError(reason: .invalidHTTPStatusCode(response: response))
        }
    }
}
