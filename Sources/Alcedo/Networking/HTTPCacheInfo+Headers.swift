#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension HTTPCacheInfo {
    /// Reads the validators and freshness of a response from its header fields, as a private
    /// cache does (RFC 9111):
    ///
    /// - `Cache-Control`: `max-age` (an invalid value counts as 0, so the entry is stale;
    ///   values over 2^31 are clamped), `no-cache` (the unqualified form only: `no-cache="field"`
    ///   restricts header fields, not the body), `no-store`; `s-maxage` and `public`/`private`
    ///   are for shared caches and ignored. Several `Cache-Control` fields are read as one list.
    /// - `Pragma: no-cache` counts as `no-cache` when there is no `Cache-Control` field.
    /// - `Age` is subtracted from `max-age`, so ``maxAge`` is the freshness left when the
    ///   response arrived.
    /// - `Expires` in any HTTP-date format; an invalid value (such as `0`) means "already
    ///   expired". With a `Date` field, the lifetime `Expires - Date` is applied to
    ///   `receivedAt`, so a server clock that is off does not matter.
    /// - `ETag`, `Last-Modified` and `Content-Type` are kept verbatim.
    public init(headers: HTTPHeaderFields, receivedAt: Date = Date()) {
        self.init(responseDate: receivedAt)
        etag = headers["ETag"]
        lastModified = headers["Last-Modified"]
        contentType = headers["Content-Type"]
        applyFreshness(from: headers)
    }

    /// The entry after a `304 Not Modified` carrying `headers`, received at `date`: the
    /// validators and freshness fields the 304 sends replace the stored ones (RFC 9111
    /// §4.3.4), those it leaves out are kept, and ``responseDate`` becomes `date`.
    public func revalidated(with headers: HTTPHeaderFields, at date: Date = Date()) -> HTTPCacheInfo {
        var updated = self
        updated.responseDate = date
        if let etag = headers["ETag"] { updated.etag = etag }
        if let lastModified = headers["Last-Modified"] { updated.lastModified = lastModified }
        if headers.contains("Cache-Control") || headers.contains("Expires") || headers.contains("Pragma") {
            updated.maxAge = nil
            updated.noCache = false
            updated.noStore = false
            updated.expires = nil
            updated.applyFreshness(from: headers)
        } else if let maxAge = updated.maxAge, let age = Self.deltaSeconds(headers["Age"]) {
            // Only the Age of the 304 changes the freshness left.
            updated.maxAge = max(0, maxAge - age)
        }
        return updated
    }

    /// The request header fields that ask the server whether the entry changed:
    /// `If-None-Match` with the ETag, `If-Modified-Since` with `Last-Modified` (both when both are known).
    public var conditionalRequestHeaders: HTTPHeaderFields {
        var headers = HTTPHeaderFields()
        if let etag { headers.add(name: "If-None-Match", value: etag) }
        if let lastModified { headers.add(name: "If-Modified-Since", value: lastModified) }
        return headers
    }

    private mutating func applyFreshness(from headers: HTTPHeaderFields) {
        let directives = headers.listElements(for: "Cache-Control").map(CacheDirective.init)
        for directive in directives {
            switch directive.name {
            case "max-age" where maxAge == nil:
                // RFC 9111 §4.2.1: invalid freshness information makes the response stale.
                maxAge = Self.deltaSeconds(directive.value) ?? 0
            case "no-cache" where directive.value == nil:
                noCache = true
            case "no-store":
                noStore = true
            default:
                break
            }
        }
        if !headers.contains("Cache-Control"),
           headers.listElements(for: "Pragma").contains(where: { $0.lowercased() == "no-cache" }) {
            noCache = true
        }
        if let maxAge, let age = Self.deltaSeconds(headers["Age"]) {
            self.maxAge = max(0, maxAge - age)
        }
        if let expiresText = headers["Expires"] {
            guard let expiresDate = HTTPDate.parse(expiresText, now: responseDate) else {
                expires = .distantPast
                return
            }
            if let dateText = headers["Date"], let serverDate = HTTPDate.parse(dateText, now: responseDate) {
                expires = responseDate.addingTimeInterval(expiresDate.timeIntervalSince(serverDate))
            } else {
                expires = expiresDate
            }
        }
    }

    /// A non-negative integer of seconds (RFC 9111 delta-seconds, optionally quoted), clamped
    /// to 2^31; `nil` when `text` is missing or not a number.
    static func deltaSeconds(_ text: String?) -> Int? {
        guard var text = text?.trimmingHTTPWhitespace(), !text.isEmpty else { return nil }
        if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = String(text.dropFirst().dropLast()) }
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        let limit = 1 << 31
        // Long digit strings overflow Int: anything over ten digits is over the limit anyway.
        return text.utf8.count > 10 ? limit : min(Int(text) ?? limit, limit)
    }
}

/// One `Cache-Control` directive: a lower-cased name and an optional value without quotes.
private struct CacheDirective {
    let name: String
    let value: String?

    init(_ element: String) {
        guard let equals = element.firstIndex(of: "=") else {
            name = element.lowercased()
            value = nil
            return
        }
        name = element[..<equals].trimmingSpaces().lowercased()
        value = element[element.index(after: equals)...].trimmingSpaces()
    }
}
