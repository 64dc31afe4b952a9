#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why a response was not accepted, or the connection failed (``URLSessionError(error:)``).
public enum ResponseErrorReason: Sendable, CustomStringConvertible {
    /// The connection failed or broke: refused, reset, timed out, DNS, TLS. Kingfisher's name
    /// and shape (Kingfisher puts `URLSession`'s errors here); Alcedo's `error` is a
    /// ``NetworkErrorReason`` (see ``AlcedoError/networkReason``).
    case URLSessionError(error: any Error)
    /// The status code (``DownloadResponse/statusCode``) is not among the accepted ones;
    /// `response` also has the headers (such as `Retry-After`). Kingfisher's name and shape:
    /// `case .responseError(reason: .invalidHTTPStatusCode(let response))`.
    case invalidHTTPStatusCode(response: DownloadResponse)
    /// The body is larger than the limit: announced by `Content-Length` (`received` is 0) or
    /// found while streaming (the download stopped at `received` bytes).
    case bodyTooLarge(URL, limit: Int, received: Int)
    /// The body ended after a different number of bytes than `Content-Length` announced.
    ///
    /// A body cut short is always caught. A body *longer* than announced is caught by loaders
    /// that do not frame responses by `Content-Length`; over HTTP/1.1 with the default loader
    /// the response ends at the announced length and the surplus bytes only break the
    /// connection (which is then dropped), so the caller gets the announced bytes.
    case lengthMismatch(URL, expected: Int, received: Int)
    /// The downloader's response delegate rejected the body.
    case rejected(URL, message: String)
    /// An S3-compatible store answered with an error (`NoSuchKey`, `AccessDenied`, `SlowDown`…);
    /// see ``ObjectStorageError/category``.
    case objectStorageError(ObjectStorageError)

    /// The reason in one line.
    public var description: String {
        switch self {
        case .URLSessionError(let error): return "\(error)"
        case .invalidHTTPStatusCode(let response):
            return "unacceptable status code \(response.statusCode) from \(response.url.absoluteString)"
        case .bodyTooLarge(let url, let limit, let received):
            return received == 0
                ? "\(url.absoluteString) announces a body over the limit of \(limit) bytes"
                : "\(url.absoluteString) sent more than the limit of \(limit) bytes (stopped at \(received))"
        case .lengthMismatch(let url, let expected, let received):
            return "\(url.absoluteString) announced \(expected) bytes but sent \(received)"
        case .rejected(let url, let message): return "the response from \(url.absoluteString) was rejected: \(message)"
        case .objectStorageError(let error): return error.description
        }
    }
}
