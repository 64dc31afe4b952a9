import Foundation
import Testing
@testable import Alcedo

@Suite("HTTPCacheInfo from headers")
struct HTTPCacheInfoHeadersTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func validatorsAndContentTypeAreKeptVerbatim() {
        let info = HTTPCacheInfo(headers: ["ETag": "W/\"x1\"", "Last-Modified": "Tue, 14 Nov 2023 22:13:20 GMT",
                                           "Content-Type": "image/webp"], receivedAt: now)
        #expect(info.etag == "W/\"x1\"")
        #expect(info.lastModified == "Tue, 14 Nov 2023 22:13:20 GMT")
        #expect(info.contentType == "image/webp")
        #expect(info.hasValidators)
        #expect(info.responseDate == now)
        #expect(info.conditionalRequestHeaders == ["If-None-Match": "W/\"x1\"", "If-Modified-Since": "Tue, 14 Nov 2023 22:13:20 GMT"])
    }

    @Test func cacheControlDirectives() {
        let info = HTTPCacheInfo(headers: ["Cache-Control": "public, MAX-AGE=\"120\", s-maxage=9999"], receivedAt: now)
        #expect(info.maxAge == 120)
        #expect(!info.noCache && !info.noStore)
        #expect(info.freshUntil == now.addingTimeInterval(120))
        #expect(!info.isStale(at: now.addingTimeInterval(119)))
        #expect(info.isStale(at: now.addingTimeInterval(120)))

        let split = HTTPCacheInfo(headers: HTTPHeaderFields([("Cache-Control", "no-cache"), ("cache-control", "no-store, max-age=5")]))
        #expect(split.noCache && split.noStore && split.maxAge == 5)

        // The qualified form only restricts header fields: the body may be reused.
        let qualified = HTTPCacheInfo(headers: ["Cache-Control": "no-cache=\"Set-Cookie, X-A\", max-age=10"])
        #expect(!qualified.noCache && qualified.maxAge == 10)
    }

    @Test func invalidOrHugeMaxAge() {
        #expect(HTTPCacheInfo(headers: ["Cache-Control": "max-age=soon"]).maxAge == 0)
        #expect(HTTPCacheInfo(headers: ["Cache-Control": "max-age=-5"]).maxAge == 0)
        #expect(HTTPCacheInfo(headers: ["Cache-Control": "max-age=99999999999999999999999"]).maxAge == 1 << 31)
        // The first max-age wins.
        #expect(HTTPCacheInfo(headers: ["Cache-Control": "max-age=10, max-age=20"]).maxAge == 10)
    }

    @Test func ageIsSubtracted() {
        #expect(HTTPCacheInfo(headers: ["Cache-Control": "max-age=100", "Age": "30"]).maxAge == 70)
        #expect(HTTPCacheInfo(headers: ["Cache-Control": "max-age=100", "Age": "300"]).maxAge == 0)
    }

    @Test func pragmaNoCacheOnlyWithoutCacheControl() {
        #expect(HTTPCacheInfo(headers: ["Pragma": "no-cache"]).noCache)
        #expect(!HTTPCacheInfo(headers: ["Pragma": "no-cache", "Cache-Control": "max-age=5"]).noCache)
    }

    @Test func expiresIsCorrectedForTheServerClock() {
        // The server's clock is an hour behind: the 10-minute lifetime still counts from now.
        let serverNow = now.addingTimeInterval(-3600)
        let info = HTTPCacheInfo(headers: ["Date": HTTPDate.string(from: serverNow),
                                           "Expires": HTTPDate.string(from: serverNow.addingTimeInterval(600))], receivedAt: now)
        #expect(info.expires == now.addingTimeInterval(600))
        #expect(info.freshUntil == now.addingTimeInterval(600))

        let plain = HTTPCacheInfo(headers: ["Expires": "Thu, 01 Dec 2033 16:00:00 GMT"], receivedAt: now)
        #expect(plain.expires == HTTPDate.parse("Thu, 01 Dec 2033 16:00:00 GMT"))

        // max-age wins over Expires.
        let both = HTTPCacheInfo(headers: ["Expires": "Thu, 01 Dec 2033 16:00:00 GMT", "Cache-Control": "max-age=5"], receivedAt: now)
        #expect(both.freshUntil == now.addingTimeInterval(5))
    }

    @Test func invalidExpiresMeansExpired() {
        let info = HTTPCacheInfo(headers: ["Expires": "0"], receivedAt: now)
        #expect(info.expires == .distantPast)
        #expect(info.isStale(at: now))
    }

    @Test func noFreshnessInformation() {
        let info = HTTPCacheInfo(headers: ["Content-Type": "image/png"], receivedAt: now)
        #expect(info.freshUntil == nil)
        #expect(!info.isStale(at: now.addingTimeInterval(1e6)))
        #expect(!info.hasValidators)
        #expect(info.conditionalRequestHeaders.isEmpty)
    }

    @Test func revalidationMergesThe304() {
        let cached = HTTPCacheInfo(headers: ["ETag": "\"1\"", "Last-Modified": "Tue, 14 Nov 2023 22:13:20 GMT",
                                             "Cache-Control": "max-age=60, no-cache", "Content-Type": "image/png"], receivedAt: now)
        let later = now.addingTimeInterval(500)

        let fresh = cached.revalidated(with: ["Cache-Control": "max-age=300", "ETag": "\"2\""], at: later)
        #expect(fresh.etag == "\"2\"")
        #expect(fresh.lastModified == cached.lastModified)
        #expect(fresh.maxAge == 300 && !fresh.noCache)
        #expect(fresh.contentType == "image/png")
        #expect(fresh.responseDate == later)
        #expect(!fresh.isStale(at: later.addingTimeInterval(299)))

        // A 304 without freshness fields keeps the stored directives, counted from the new date.
        let kept = cached.revalidated(with: [:], at: later)
        #expect(kept.maxAge == 60 && kept.noCache && kept.etag == "\"1\"" && kept.responseDate == later)
    }
}

@Suite("HTTPDate")
struct HTTPDateTests {
    private let reference = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT

    @Test func parsesTheThreeFormats() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == reference)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == reference)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == reference)
        #expect(HTTPDate.parse("06 Nov 1994 08:49:37 GMT") == reference)
    }

    @Test func rejectsGarbage() {
        for text in ["", "0", "-1", "yesterday", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
                     "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 06 Nov 1994 08:49 GMT", "Sun, 06 Nov 94000 08:49:37 GMT"] {
            #expect(HTTPDate.parse(text) == nil, "\(text)")
        }
    }

    @Test func twoDigitYearsFollowTheFiftyYearRule() {
        let now = HTTPDate.parse("Mon, 01 Jan 2024 00:00:00 GMT")!
        #expect(HTTPDate.parse("Monday, 01-Jan-30 00:00:00 GMT", now: now) == HTTPDate.parse("Tue, 01 Jan 2030 00:00:00 GMT"))
        #expect(HTTPDate.parse("Monday, 01-Jan-99 00:00:00 GMT", now: now) == HTTPDate.parse("Fri, 01 Jan 1999 00:00:00 GMT"))
    }

    @Test func writesIMFFixdateAndRoundTrips() {
        #expect(HTTPDate.string(from: reference) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.string(from: Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        for seconds in stride(from: -2_000_000_000, through: 4_000_000_000, by: 123_456_789) {
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            #expect(HTTPDate.parse(HTTPDate.string(from: date)) == date)
            #expect(HTTPDate.string(from: date) == TestHTTPDate.string(date))
        }
    }
}

@Suite("HTTPHeaderFields")
struct HTTPHeaderFieldsTests {
    @Test func namesIgnoreCase() {
        var headers: HTTPHeaderFields = ["Content-Type": "image/png"]
        #expect(headers["content-type"] == "image/png")
        #expect(headers.contains("CONTENT-TYPE"))
        headers.add(name: "Vary", value: "Accept")
        headers.add(name: "vary", value: "Origin")
        #expect(headers.values(for: "VARY") == ["Accept", "Origin"])
        headers["Vary"] = "*"
        #expect(headers.values(for: "vary") == ["*"])
        headers["vary"] = nil
        #expect(!headers.contains("Vary"))
        #expect(!HTTPHeaderFields.namesMatch("a-b", "a_b"))
        #expect(HTTPHeaderFields([("X", "1")]) == HTTPHeaderFields([("x", "1")]))
    }

    @Test func listElementsRespectQuotes() {
        let headers: HTTPHeaderFields = ["Cache-Control": " max-age=5 ,, no-cache=\"a, b\", private "]
        #expect(headers.listElements(for: "cache-control") == ["max-age=5", "no-cache=\"a, b\"", "private"])
    }
}
