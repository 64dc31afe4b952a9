#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why a response was not accepted, or the connection failed: Kingfisher 8's case set and
/// error codes (2001…2006), so that a `switch` written for Kingfisher compiles unchanged.
///
/// Alcedo's own refusals of a body (too large, cut short, rejected by the delegate) are
/// ``invalidURLResponse(response:)`` with the detail in its ``InvalidResponse`` value; an
/// S3-compatible store's error answer is ``URLSessionError(error:)`` with an
/// ``ObjectStorageError``, as a broken connection is with a ``NetworkErrorReason``.
public enum ResponseErrorReason: Sendable, CustomStringConvertible {
    /// The response cannot be used: the body is too large, shorter or longer than announced,
    /// or the downloader's delegate rejected it (2001). The value says which.
    case invalidURLResponse(response: InvalidResponse)
    /// The status code (``DownloadResponse/statusCode``) is not among the accepted ones (2002);
    /// `response` also has the headers (such as `Retry-After`). Kingfisher's name and shape:
    /// `case .responseError(reason: .invalidHTTPStatusCode(let response))`.
    case invalidHTTPStatusCode(response: DownloadResponse)
    /// The connection failed or broke, or the object store answered with an error (2003).
    /// Kingfisher's name and shape (Kingfisher puts `URLSession`'s errors here); Alcedo's
    /// `error` is a ``NetworkErrorReason`` (see ``AlcedoError/networkReason``) or an
    /// ``ObjectStorageError`` (`NoSuchKey`, `AccessDenied`, `SlowDown`…).
    case URLSessionError(error: any Error)
    /// The data modifier returned `nil` (2004).
    case dataModifyingFailed(task: SessionDataTask)
    /// The request ended with no response at all (2005). Kingfisher's case; Alcedo's loaders
    /// report such a failure as ``URLSessionError(error:)`` with a ``NetworkErrorReason``.
    case noURLResponse(task: SessionDataTask)
    /// The downloader's delegate cancelled the request on seeing its response (2006).
    case cancelledByDelegate(response: DownloadResponse)

    /// Why a response's body was not used: the detail of
    /// ``ResponseErrorReason/invalidURLResponse(response:)``.
    public enum InvalidResponse: Sendable, CustomStringConvertible {
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

        /// The URL the response came from.
        public var url: URL {
            switch self {
            case .bodyTooLarge(let url, _, _), .lengthMismatch(let url, _, _), .rejected(let url, _): return url
            }
        }

        /// The reason in one line.
        public var description: String {
            switch self {
            case .bodyTooLarge(let url, let limit, let received):
                return received == 0
                    ? "\(url.absoluteString) announces a body over the limit of \(limit) bytes"
                    : "\(url.absoluteString) sent more than the limit of \(limit) bytes (stopped at \(received))"
            case .lengthMismatch(let url, let expected, let received):
                return "\(url.absoluteString) announced \(expected) bytes but sent \(received)"
            case .rejected(let url, let message): return "the response from \(url.absoluteString) was rejected: \(message)"
            }
        }
    }

    /// The reason in one line.
    public var description: String {
        switch self {
        case .URLSessionError(let error): return "\(error)"
        case .invalidHTTPStatusCode(let response):
            return "unacceptable status code \(response.statusCode) from \(response.url.absoluteString)"
        case .invalidURLResponse(let response): return response.description
        case .dataModifyingFailed(let task): return "the data modifier gave no data for \(task.originalURL?.absoluteString ?? "the request")"
        case .noURLResponse(let task): return "no response for \(task.originalURL?.absoluteString ?? "the request")"
        case .cancelledByDelegate(let response): return "the downloader's delegate cancelled the response from \(response.url.absoluteString)"
        }
    }

    /// Kingfisher's error code: 2001…2006.
    public var errorCode: Int {
        switch self {
        case .invalidURLResponse: return 2001
        case .invalidHTTPStatusCode: return 2002
        case .URLSessionError: return 2003
        case .dataModifyingFailed: return 2004
        case .noURLResponse: return 2005
        case .cancelledByDelegate: return 2006
        }
    }

    /// The detail of ``invalidURLResponse(response:)``, else `nil`.
    public var invalidResponse: InvalidResponse? {
        if case .invalidURLResponse(let response) = self { return response }
        return nil
    }

    /// The object store's error answer carried by ``URLSessionError(error:)``, else `nil`.
    public var objectStorageError: ObjectStorageError? {
        if case .URLSessionError(let error as ObjectStorageError) = self { return error }
        return nil
    }

    /// ``invalidURLResponse(response:)`` with ``InvalidResponse/bodyTooLarge(_:limit:received:)``.
    public static func bodyTooLarge(_ url: URL, limit: Int, received: Int) -> ResponseErrorReason {
        .invalidURLResponse(response: .bodyTooLarge(url, limit: limit, received: received))
    }
    /// ``invalidURLResponse(response:)`` with ``InvalidResponse/lengthMismatch(_:expected:received:)``.
    public static func lengthMismatch(_ url: URL, expected: Int, received: Int) -> ResponseErrorReason {
        .invalidURLResponse(response: .lengthMismatch(url, expected: expected, received: received))
    }
    /// ``invalidURLResponse(response:)`` with ``InvalidResponse/rejected(_:message:)``.
    public static func rejected(_ url: URL, message: String) -> ResponseErrorReason {
        .invalidURLResponse(response: .rejected(url, message: message))
    }
    /// ``URLSessionError(error:)`` with the store's error answer.
    public static func objectStorageError(_ error: ObjectStorageError) -> ResponseErrorReason {
        .URLSessionError(error: error)
    }
}
