#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Kingfisher's networking names and shapes beside Alcedo's own.

#if canImport(FoundationNetworking)
/// Kingfisher's request type in request modifiers and redirect handlers: ``DownloadRequest``
/// (a URL, header fields and a `timeoutInterval`, with `URLRequest`'s `setValue(_:forHTTPHeaderField:)`,
/// `addValue(_:forHTTPHeaderField:)`, `value(forHTTPHeaderField:)` and `allHTTPHeaderFields`),
/// so that a modifier written for Kingfisher compiles unchanged:
///
/// ```swift
/// struct TokenModifier: AsyncImageDownloadRequestModifier {
///     func modified(for request: URLRequest) async -> URLRequest? {
///         var r = request
///         r.setValue("Bearer …", forHTTPHeaderField: "Authorization")
///         return r
///     }
/// }
/// ```
///
/// On Linux Foundation's `URLRequest` lives in `FoundationNetworking`, which Alcedo does not
/// use; a file that imports both `FoundationNetworking` and Alcedo names the one it means
/// (`FoundationNetworking.URLRequest` or `Alcedo.URLRequest`). Differences: ``DownloadRequest/url``
/// is not optional, and there is no `httpMethod` or `httpBody` (image requests are `GET`s).
public typealias URLRequest = DownloadRequest

/// Kingfisher's redirect response type in ``ImageDownloadRedirectHandler``: ``DownloadResponse``
/// (`statusCode`, `url`, the header fields), so that a handler written as Kingfisher's
/// documentation writes it compiles unchanged.
///
/// As with ``URLRequest``: Linux keeps Foundation's `HTTPURLResponse` in `FoundationNetworking`
/// (Foundation itself only has an unavailable placeholder, which this name takes precedence
/// over); a file that imports both `FoundationNetworking` and Alcedo names the one it means
/// (`FoundationNetworking.HTTPURLResponse` or `Alcedo.HTTPURLResponse`).
public typealias HTTPURLResponse = DownloadResponse

/// Kingfisher's priority constants, `URLSessionTask.defaultPriority`, `.highPriority` and
/// `.lowPriority`, as ``DownloadPriority`` values (`.normal`, `.high`, `.low`), so that
/// `.downloadPriority(URLSessionTask.highPriority)` compiles unchanged. Alcedo does not use
/// `URLSession`; as with ``URLRequest``, a file that imports both `FoundationNetworking` and
/// Alcedo names the one it means.
/// Kingfisher's response type in ``ImageDownloaderDelegate``: ``DownloadResponse``, so that
/// `imageDownloader(_:didReceive response: URLResponse)` and
/// `imageDownloader(_:didFinishDownloadingImageForURL:with response: URLResponse?, error:)` compile
/// unchanged, and `response as? HTTPURLResponse` succeeds. As with ``URLRequest``, a file that imports
/// both `FoundationNetworking` and Alcedo names the one it means (or imports one by name:
/// `import class FoundationNetworking.URLResponse`).
public typealias URLResponse = DownloadResponse

/// Kingfisher's `URLSession.ResponseDisposition`, the answer of
/// ``ImageDownloaderDelegate/imageDownloader(_:didReceive:)``: ``DownloadResponseDisposition``.
/// Alcedo does not use `URLSession`: this namespace holds only that name. As with ``URLRequest``, a
/// file that imports both `FoundationNetworking` and Alcedo names the one it means (or imports one by
/// name: `import class FoundationNetworking.URLSession`).
public enum URLSession {
    /// ``DownloadResponseDisposition`` (`.allow`, `.cancel`).
    public typealias ResponseDisposition = DownloadResponseDisposition
}

public enum URLSessionTask {
    /// ``DownloadPriority/normal`` (`URLSessionTask.defaultPriority` is 0.5).
    public static let defaultPriority: DownloadPriority = .normal
    /// ``DownloadPriority/high`` (`URLSessionTask.highPriority` is 0.75).
    public static let highPriority: DownloadPriority = .high
    /// ``DownloadPriority/low`` (`URLSessionTask.lowPriority` is 0.25).
    public static let lowPriority: DownloadPriority = .low
}
#endif

extension RequestErrorReason {
    /// Any cancellation (``taskCancelled(task:token:)``, whatever its task and token), as a
    /// pattern: `if case .requestError(reason: .cancelled) = error`. As a value it is a
    /// cancellation with no URL and token 0.
    public static var cancelled: RequestErrorReason { .taskCancelled(task: SessionDataTask(originalURL: nil), token: 0) }

    /// Matches a reason used as a pattern value (such as ``cancelled``): `true` when both are
    /// the same case with the same one-line description (every cancellation reads `cancelled`).
    public static func ~= (pattern: RequestErrorReason, value: RequestErrorReason) -> Bool {
        pattern.errorCode == value.errorCode && pattern.description == value.description
    }
}
