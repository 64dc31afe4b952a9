import Foundation
import Testing
@testable import Alcedo

@Suite("HTTP revalidation")
struct RevalidationTests {
    @Test func etagGetsNotModifiedAndRefreshedFreshness() async throws {
        try await withDownloader { server, downloader in
            let png = try samplePNG()
            var response = TestHTTPServer.Response.ok(png, contentType: "image/png").header("Cache-Control", "max-age=60")
            response.etag = "\"abc\""
            response.notModifiedHeaders = [("Cache-Control", "max-age=600")]
            server.route("/a.png", response)

            let first = try await downloader.downloadData(with: server.url("/a.png"))
            #expect(first.cacheInfo.etag == "\"abc\"")
            #expect(first.cacheInfo.maxAge == 60)

            let outcome = try await downloader.revalidateData(with: server.url("/a.png"), validators: first.cacheInfo)
            guard case .notModified(let info, let notModified) = outcome else {
                Issue.record("expected 304, got \(outcome)")
                return
            }
            #expect(notModified.statusCode == 304)
            #expect(info.etag == "\"abc\"")
            #expect(info.maxAge == 600)
            #expect(info.contentType == "image/png")
            #expect(info.responseDate >= first.cacheInfo.responseDate)
            let sent = try #require(server.requests("/a.png").last)
            #expect(sent.headers.first(name: "If-None-Match") == "\"abc\"")
        }
    }

    @Test func lastModifiedGetsNotModified() async throws {
        try await withDownloader { server, downloader in
            let modified = TestHTTPDate.string(Date(timeIntervalSince1970: 1_700_000_000))
            var response = TestHTTPServer.Response.ok(pngLikeData(count: 300))
            response.lastModified = modified
            server.route("/b.png", response)

            let first = try await downloader.downloadData(with: server.url("/b.png"))
            #expect(first.cacheInfo.lastModified == modified)
            #expect(first.cacheInfo.etag == nil)
            let outcome = try await downloader.revalidateData(with: server.url("/b.png"), validators: first.cacheInfo)
            guard case .notModified(let info, _) = outcome else {
                Issue.record("expected 304, got \(outcome)")
                return
            }
            #expect(info.lastModified == modified)
            #expect(server.requests("/b.png").last?.headers.first(name: "If-Modified-Since") == modified)
        }
    }

    @Test func changedEntryIsDownloadedAgain() async throws {
        try await withDownloader { server, downloader in
            var old = TestHTTPServer.Response.ok(pngLikeData(count: 100))
            old.etag = "\"v1\""
            server.route("/c.png", old)
            let first = try await downloader.downloadData(with: server.url("/c.png"))

            var new = TestHTTPServer.Response.ok(pngLikeData(count: 200))
            new.etag = "\"v2\""
            server.route("/c.png", new)
            let outcome = try await downloader.revalidateData(with: server.url("/c.png"), validators: first.cacheInfo)
            guard case .modified(let result) = outcome else {
                Issue.record("expected new bytes, got \(outcome)")
                return
            }
            #expect(result.data.count == 200)
            #expect(outcome.cacheInfo.etag == "\"v2\"")
        }
    }

    @Test func notModifiedWithoutValidatorsIsAnError() async throws {
        try await withDownloader { server, downloader in
            server.route("/d.png", .status(304))
            let error = await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: server.url("/d.png")) }
            guard case .responseError(.invalidHTTPStatusCode(let response)) = error, response.statusCode == 304 else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
        }
    }

    @Test func revalidationWithoutValidatorsIsAPlainDownload() async throws {
        try await withDownloader { server, downloader in
            server.route("/e.png", .ok(pngLikeData(count: 50)))
            let outcome = try await downloader.revalidateData(with: server.url("/e.png"), validators: HTTPCacheInfo())
            guard case .modified(let result) = outcome else {
                Issue.record("expected bytes, got \(outcome)")
                return
            }
            #expect(result.data.count == 50)
            #expect(server.requests("/e.png").first?.headers.contains(name: "If-None-Match") == false)
        }
    }

    @Test func noStoreIsReported() async throws {
        try await withDownloader { server, downloader in
            server.route("/f.png", TestHTTPServer.Response.ok(pngLikeData(count: 50)).header("Cache-Control", "no-store"))
            let result = try await downloader.downloadData(with: server.url("/f.png"))
            #expect(result.cacheInfo.noStore)
        }
    }
}
