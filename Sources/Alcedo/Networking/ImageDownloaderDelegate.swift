#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Sees every complete response body before it is delivered, decoded or cached, and may
/// reject it or rewrite it (decrypt, strip a wrapper).
///
/// It runs once per network download, not once per caller; the bytes it returns are the
/// "original data" callers receive, so checks for "is it an image" apply to them.
public protocol ImageDownloaderDelegate: Sendable {
    /// Returns the bytes to use for `data` received with `response`, or throws an
    /// ``AlcedoError`` (such as ``ResponseErrorReason/rejected(_:message:)``) to fail the download.
    func imageDownloader(_ downloader: ImageDownloader, didDownload data: Data,
                         with response: DownloadResponse) async throws(AlcedoError) -> Data
}
