#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a server said about a response's freshness and how to revalidate it: the HTTP
/// validators and caching directives Alcedo keeps with a downloaded entry in the disk cache.
public struct HTTPCacheInfo: Sendable, Hashable, Codable {
    /// The `ETag` header, verbatim (weak validators keep their `W/` prefix), sent back as `If-None-Match`.
    public var etag: String?
    /// The `Last-Modified` header, verbatim, sent back as `If-Modified-Since`.
    public var lastModified: String?
    /// `Cache-Control: max-age` in seconds, less the response's `Age`: the freshness left at ``responseDate``.
    public var maxAge: Int?
    /// `Cache-Control: no-cache`: the entry must be revalidated before every use.
    public var noCache: Bool
    /// `Cache-Control: no-store`: the response must not be written to disk.
    public var noStore: Bool
    /// The `Expires` header as a date on this machine's clock (ignored when ``maxAge`` is present,
    /// as RFC 9111 says); `Date.distantPast` when the server sent an invalid date such as `0`.
    public var expires: Date?
    /// The `Content-Type` header, verbatim.
    public var contentType: String?
    /// When the response was received (or last revalidated with a 304).
    public var responseDate: Date

    /// Creates an entry from known values; every parameter is optional (`responseDate` defaults to now).
    public init(etag: String? = nil, lastModified: String? = nil, maxAge: Int? = nil, noCache: Bool = false,
                noStore: Bool = false, expires: Date? = nil, contentType: String? = nil, responseDate: Date = Date()) {
        self.etag = etag
        self.lastModified = lastModified
        self.maxAge = maxAge
        self.noCache = noCache
        self.noStore = noStore
        self.expires = expires
        self.contentType = contentType
        self.responseDate = responseDate
    }

    /// `true` when the response carries a validator, so it can be revalidated with a conditional request.
    public var hasValidators: Bool { etag != nil || lastModified != nil }

    /// Until when the server says the response is fresh: `responseDate + maxAge`, else
    /// `expires`, else `nil` (no explicit freshness). `no-cache` makes it stale at once.
    public var freshUntil: Date? {
        if noCache { return responseDate }
        if let maxAge { return responseDate.addingTimeInterval(TimeInterval(maxAge)) }
        return expires
    }

    /// `true` when the server's freshness has run out at `date` (`false` without explicit freshness).
    public func isStale(at date: Date = Date()) -> Bool {
        guard let freshUntil else { return false }
        return noCache || date >= freshUntil
    }
}
