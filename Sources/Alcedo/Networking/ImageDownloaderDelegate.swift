#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Follows and steers each network download of an ``ImageDownloader``: sees the request, the
/// response head, every complete body before it is delivered, decoded or cached (and may reject
/// or rewrite it: decrypt, strip a wrapper), the end of each download and each image made.
///
/// Every method has a default, so a delegate implements only what it needs. Alcedo's own hook is
/// `imageDownloader(_:didDownload:with:)` taking a ``DownloadResponse``; the others are Kingfisher's
/// (`imageDownloader(_:didDownload:for:)`, ``imageDownloader(_:didReceive:)``,
/// ``imageDownloader(_:didFinishDownloadingImageForURL:with:error:)``…), so that a delegate written
/// for Kingfisher compiles unchanged.
///
/// The methods run once per network download, not once per caller of a coalesced request. They
/// are called from the downloader's tasks, for different downloads possibly at the same time (as
/// Kingfisher calls them from its session's queue, a delegate that keeps state must protect it).
/// The protocol is not `Sendable`, so that Kingfisher's delegates (non-final classes) conform as
/// they are. Differences from Kingfisher: the downloader holds its delegate strongly (Kingfisher
/// holds it weakly: it is a class there; a struct can be one here), and a `nil` from a data method
/// fails the download with ``ResponseErrorReason/dataModifyingFailed(task:)``, as Kingfisher's does.
public protocol ImageDownloaderDelegate {
    /// Returns the bytes to use for `data` received with `response`, or throws an
    /// ``AlcedoError`` (such as ``ResponseErrorReason/InvalidResponse/rejected(_:message:)``) to
    /// fail the download. Default: Kingfisher's `imageDownloader(_:didDownload:with:)`
    /// for a task of the URL asked for; its `nil` throws ``ResponseErrorReason/dataModifyingFailed(task:)``.
    func imageDownloader(_ downloader: ImageDownloader, didDownload data: Data,
                         with response: DownloadResponse) async throws(AlcedoError) -> Data

    /// Called before each request is sent, with the request after the request modifier
    /// (Kingfisher's; `URLRequest` is ``DownloadRequest``). Default: nothing.
    func imageDownloader(_ downloader: ImageDownloader, willDownloadImageForURL url: URL, with request: DownloadRequest?)

    /// Called once when a network download ends, after its retries: `response` is the last
    /// response head when there was one (Kingfisher's `URLResponse` is ``DownloadResponse``),
    /// `error` the failure (`nil` on success). It is called before the callers' completion
    /// handlers. Default: nothing.
    func imageDownloader(_ downloader: ImageDownloader, didFinishDownloadingImageForURL url: URL,
                         with response: DownloadResponse?, error: (any Error)?)

    /// Returns the bytes to use for `data` downloaded by `task` (Kingfisher's), or `nil` to fail
    /// the download with ``ResponseErrorReason/dataModifyingFailed(task:)``. Default:
    /// `imageDownloader(_:didDownload:for:)` with the task's ``SessionDataTask/originalURL``
    /// (`data` itself when it has none).
    func imageDownloader(_ downloader: ImageDownloader, didDownload data: Data, with task: SessionDataTask) -> Data?

    /// Returns the bytes to use for `data` downloaded from `url` (Kingfisher's), or `nil` to fail
    /// the download with ``ResponseErrorReason/dataModifyingFailed(task:)``. Default: `data`.
    func imageDownloader(_ downloader: ImageDownloader, didDownload data: Data, for url: URL) -> Data?

    /// Called with each image made from a download (decoded and processed; once per processor),
    /// before it is delivered (Kingfisher's). Default: nothing.
    func imageDownloader(_ downloader: ImageDownloader, didDownload image: AlcedoImage, for url: URL,
                         with response: DownloadResponse?)

    /// Whether a final (not redirecting) response's status code is a success (Kingfisher's).
    /// Default: the downloader's ``ImageDownloader/Configuration/acceptableStatusCodes``
    /// (200...299 unless changed; Kingfisher's default is 200..<400).
    func isValidStatusCode(_ code: Int, for downloader: ImageDownloader) -> Bool

    /// Called with a response head whose status code is valid, before its body is read
    /// (Kingfisher's; `URLResponse` is ``DownloadResponse``). `.cancel` fails the download with
    /// ``ResponseErrorReason/cancelledByDelegate(response:)``. Default: `.allow`.
    func imageDownloader(_ downloader: ImageDownloader, didReceive response: DownloadResponse) async -> DownloadResponseDisposition
}

/// What to do with a response head, as ``ImageDownloaderDelegate/imageDownloader(_:didReceive:)``
/// decides (Kingfisher's `URLSession.ResponseDisposition`, of which Alcedo keeps the two cases
/// that apply to an image download).
public enum DownloadResponseDisposition: Sendable, Hashable {
    /// Read the body.
    case allow
    /// Stop: the download fails with ``ResponseErrorReason/cancelledByDelegate(response:)``.
    case cancel
}

extension ImageDownloaderDelegate {
    public func imageDownloader(_ downloader: ImageDownloader, didDownload data: Data,
                                with response: DownloadResponse) async throws(AlcedoError) -> Data {
        let task = SessionDataTask(originalURL: response.originalURL)
        guard let modified = imageDownloader(downloader, didDownload: data, with: task) else {
            throw .responseError(reason: .dataModifyingFailed(task: task))
        }
        return modified
    }

    public func imageDownloader(_ downloader: ImageDownloader, willDownloadImageForURL url: URL, with request: DownloadRequest?) {}

    public func imageDownloader(_ downloader: ImageDownloader, didFinishDownloadingImageForURL url: URL,
                                with response: DownloadResponse?, error: (any Error)?) {}

    public func imageDownloader(_ downloader: ImageDownloader, didDownload data: Data, with task: SessionDataTask) -> Data? {
        guard let url = task.originalURL else { return data }
        return imageDownloader(downloader, didDownload: data, for: url)
    }

    public func imageDownloader(_ downloader: ImageDownloader, didDownload data: Data, for url: URL) -> Data? {
        data
    }

    public func imageDownloader(_ downloader: ImageDownloader, didDownload image: AlcedoImage, for url: URL,
                                with response: DownloadResponse?) {}

    public func isValidStatusCode(_ code: Int, for downloader: ImageDownloader) -> Bool {
        downloader.configuration.acceptableStatusCodes.contains(code)
    }

    public func imageDownloader(_ downloader: ImageDownloader, didReceive response: DownloadResponse) async -> DownloadResponseDisposition {
        .allow
    }
}

/// The delegate as the downloader's configuration keeps it.
///
/// `@unchecked Sendable`: the reference never changes after `init`, and the delegate protocol is
/// not `Sendable` only so that Kingfisher's delegates (non-final classes) conform unchanged; its
/// documentation makes the contract (methods called from the downloader's tasks, possibly at the
/// same time) that Kingfisher's delegates already follow.
final class ImageDownloaderDelegateBox: @unchecked Sendable {
    let delegate: any ImageDownloaderDelegate

    init(_ delegate: any ImageDownloaderDelegate) {
        self.delegate = delegate
    }
}
