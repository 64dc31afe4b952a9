#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Kingfisher's forms of the downloader's calls, which take an options list
/// (`options: nil` or `options: [.processor(p)]`) instead of ``DownloadOptions``. The options
/// that matter to a download are used: priority, processor, decoding limits,
/// ``AlcedoOptionsInfoItem/onlyLoadFirstFrame``, request modifier, redirect handler, retry
/// strategy and scale factor; the caching options are ignored (the downloader has no cache).
extension ImageDownloader {
    /// Downloads, decodes and processes the image at `url` with an options list (Kingfisher's
    /// form); see the form that takes ``DownloadOptions``.
    public func downloadImage(with url: URL, options: AlcedoOptionsInfo?,
                              progressBlock: DownloadProgressBlock? = nil) async throws(AlcedoError) -> ImageLoadingResult {
        try await downloadImage(with: url, options: AlcedoParsedOptionsInfo(options).downloadOptions, progressBlock: progressBlock)
    }

    /// Downloads, decodes and processes the image at `url` with an options list, calling
    /// `completionHandler` once (Kingfisher's form; a trailing closure is the completion handler).
    @discardableResult
    public func downloadImage(with url: URL, options: AlcedoOptionsInfo?, progressBlock: DownloadProgressBlock? = nil,
                              completionHandler: @escaping @Sendable (Result<ImageLoadingResult, AlcedoError>) -> Void) -> DownloadTask {
        downloadImage(with: url, options: AlcedoParsedOptionsInfo(options).downloadOptions, progressBlock: progressBlock,
                      completionHandler: completionHandler)
    }

    /// Starts downloading the image at `url` with an options list (default `nil`: none) and no
    /// completion handler (Kingfisher's `downloader.downloadImage(with: url)` or
    /// `downloader.downloadImage(with: url, options: [.requestModifier(modifier)])` in code that is
    /// not `async`).
    @discardableResult
    public func downloadImage(with url: URL, options: AlcedoOptionsInfo? = nil) -> DownloadTask {
        downloadImage(with: url, options: options, progressBlock: nil) { _ in }
    }

    /// Downloads with parsed options (Kingfisher 8's `downloadImage(with:options:completionHandler:)`
    /// taking `KingfisherParsedOptionsInfo`), calling `completionHandler` (default `nil`) once.
    @discardableResult
    public func downloadImage(with url: URL, options: AlcedoParsedOptionsInfo,
                              completionHandler: (@Sendable (Result<ImageLoadingResult, AlcedoError>) -> Void)? = nil) -> DownloadTask {
        downloadImage(with: url, options: options.downloadOptions, progressBlock: nil) { result in completionHandler?(result) }
    }

    /// Downloads with parsed options, `async` (Kingfisher 8's form taking `KingfisherParsedOptionsInfo`).
    public func downloadImage(with url: URL, options: AlcedoParsedOptionsInfo) async throws(AlcedoError) -> ImageLoadingResult {
        try await downloadImage(with: url, options: options.downloadOptions, progressBlock: nil)
    }
}
