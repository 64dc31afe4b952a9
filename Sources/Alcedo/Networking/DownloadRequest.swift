#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The GET request the downloader sends for an image: a URL and header fields. Request
/// modifiers receive it and return it changed (signed URL, added headers) or `nil` to refuse.
public struct DownloadRequest: Sendable, Hashable {
    /// The URL to fetch. Never `nil` in a request the downloader makes; a request modifier or a
    /// redirect handler may set it to `nil`, as with Kingfisher's `URLRequest.url`, and the download
    /// then fails with ``RequestErrorReason/invalidURL(request:)``
    /// (``RequestErrorReason/InvalidRequest/missingURL``) before anything is sent. Loaders are never
    /// given a request without a URL.
    public var url: URL!
    /// The header fields sent with the request (default: none beyond the downloader's defaults).
    public var headers: HTTPHeaderFields
    /// The longest this request may take, from sending it to the last body byte, in seconds,
    /// as `URLRequest.timeoutInterval`: set by a request modifier, it replaces the downloader's
    /// ``ImageDownloader/downloadTimeout`` for this request. Default `nil`: the downloader's.
    public var timeoutInterval: TimeInterval?

    /// Creates a request for `url` with `headers` (default: none).
    public init(url: URL, headers: HTTPHeaderFields = [:]) {
        self.url = url
        self.headers = headers
    }

    /// Sets `Authorization: Basic …` from a user name and a password (RFC 7617, UTF-8).
    public mutating func setBasicAuthorization(username: String, password: String) {
        headers["Authorization"] = "Basic " + Data("\(username):\(password)".utf8).base64EncodedString()
    }

    /// Sets `Authorization: Bearer <token>`.
    public mutating func setBearerToken(_ token: String) {
        headers["Authorization"] = "Bearer \(token)"
    }
}
