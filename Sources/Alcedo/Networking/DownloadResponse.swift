#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The head of the response a download ended with (after redirects), and what it says about
/// caching.
public struct DownloadResponse: Sendable {
    /// The URL that answered: the requested one, or the last redirect target.
    public var url: URL
    /// The URL the caller asked for.
    public var originalURL: URL
    /// The HTTP status code.
    public var statusCode: Int
    /// The response header fields.
    public var headers: HTTPHeaderFields
    /// The validators and freshness read from ``headers`` (see ``HTTPCacheInfo/init(headers:receivedAt:)``).
    public var cacheInfo: HTTPCacheInfo
    /// The URL of the first request sent: ``originalURL`` as the request modifier changed it
    /// (`nil` when it is ``originalURL``).
    var requestURL: URL?

    /// Creates a response head (loaders and tests; the downloader builds its own).
    public init(url: URL, originalURL: URL, statusCode: Int, headers: HTTPHeaderFields, cacheInfo: HTTPCacheInfo) {
        self.url = url
        self.originalURL = originalURL
        self.statusCode = statusCode
        self.headers = headers
        self.cacheInfo = cacheInfo
    }

    /// The header fields as `HTTPURLResponse.allHeaderFields` has them (Kingfisher's delegates
    /// read `response.allHeaderFields["Name"] as? String`): name to value, the last value of a
    /// repeated name, names as the server sent them.
    public var allHeaderFields: [AnyHashable: Any] {
        var fields: [AnyHashable: Any] = [:]
        for field in headers { fields[field.name] = field.value }
        return fields
    }

    /// The body length announced by `Content-Length`, or `nil` when absent or not a number.
    public var expectedContentLength: Int? {
        guard let text = headers["Content-Length"]?.trimmingHTTPWhitespace(), !text.isEmpty,
              text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int(text) ?? Int.max
    }

    /// How long the server asks the client to wait before trying again (`Retry-After` as
    /// seconds or as an HTTP-date, counted from when the response arrived), or `nil`.
    public var retryAfter: Duration? {
        guard let text = headers["Retry-After"] else { return nil }
        if let seconds = HTTPCacheInfo.deltaSeconds(text) { return .seconds(seconds) }
        guard let date = HTTPDate.parse(text, now: cacheInfo.responseDate) else { return nil }
        return .milliseconds(max(0, Int(date.timeIntervalSince(cacheInfo.responseDate) * 1000)))
    }
}
