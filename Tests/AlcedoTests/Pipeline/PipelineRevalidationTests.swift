import Foundation
import Testing
@testable import Alcedo

/// HTTP validators and freshness kept with disk entries: forceRefresh as a conditional
/// request, respectHTTPFreshness, no-store.
@Suite("Pipeline HTTP revalidation")
struct PipelineRevalidationTests {
    private func response(_ body: Data, etag: String? = nil, lastModified: String? = nil,
                          cacheControl: String? = nil, notModifiedCacheControl: String? = nil) -> TestHTTPServer.Response {
        var response = TestHTTPServer.Response.ok(body, contentType: "image/jpeg")
        if let cacheControl { response = response.header("Cache-Control", cacheControl) }
        response.etag = etag
        response.lastModified = lastModified
        if let notModifiedCacheControl { response.notModifiedHeaders = [("Cache-Control", notModifiedCacheControl)] }
        return response
    }

    @Test func downloadedEntryKeepsItsValidatorsOnDisk() async throws {
        try await withPipeline { h in
            h.server.route("/v.jpg", response(TestImages.jpeg(), etag: "\"v1\"", cacheControl: "max-age=120"))
            let url = h.server.url("/v.jpg")
            let processor = DownsamplingImageProcessor(size: PixelSize(width: 4, height: 4))
            _ = try await h.manager.retrieveImage(with: url, options: [.waitForCache])
            _ = try await h.manager.retrieveImage(with: url, options: [.processor(processor), .waitForCache])
            for identifier in ["", processor.identifier] {
                let info = try #require(await h.cache.diskMetadata(forKey: url.cacheKey, processorIdentifier: identifier)?.httpCacheInfo)
                #expect(info.etag == "\"v1\"")
                #expect(info.maxAge == 120)
            }
        }
    }

    @Test func forceRefreshWithETagServesTheCachedBytesOn304() async throws {
        try await withPipeline { h in
            let jpeg = TestImages.jpeg(seed: 1)
            h.server.route("/e.jpg", response(jpeg, etag: "\"abc\"", cacheControl: "max-age=60", notModifiedCacheControl: "max-age=900"))
            let url = h.server.url("/e.jpg")
            let first = try await h.manager.retrieveImage(with: url, options: [.waitForCache])
            let before = try #require(await h.cache.diskMetadata(forKey: url.cacheKey)?.httpCacheInfo)

            let refreshed = try await h.manager.retrieveImage(with: url, options: [.forceRefresh, .waitForCache])
            #expect(refreshed.cacheType == .disk)
            #expect(refreshed.response?.statusCode == 304)
            #expect(refreshed.originalData == jpeg)
            #expect(refreshed.image == first.image)
            #expect(h.server.requestCount("/e.jpg") == 2)
            #expect(h.server.requests("/e.jpg").last?.headers.first(name: "If-None-Match") == "\"abc\"")
            let after = try #require(await h.cache.diskMetadata(forKey: url.cacheKey)?.httpCacheInfo)
            #expect(after.maxAge == 900)
            #expect(after.responseDate >= before.responseDate)
            #expect(try #require(await h.cache.retrieveDataInDiskCache(forKey: url.cacheKey)).data == jpeg)
        }
    }

    @Test func forceRefreshWithLastModifiedRevalidatesAProcessedVariant() async throws {
        try await withPipeline { h in
            let modified = TestHTTPDate.string(Date(timeIntervalSince1970: 1_700_000_000))
            h.server.route("/lm.jpg", response(TestImages.jpeg(width: 32, height: 32), lastModified: modified))
            let url = h.server.url("/lm.jpg")
            let runs = Counter()
            let processor = InvertingCountingProcessor(name: "lm", runs: runs)
            _ = try await h.manager.retrieveImage(with: url, options: [.processor(processor), .waitForCache])
            let refreshed = try await h.manager.retrieveImage(with: url, options: [.processor(processor), .forceRefresh])
            #expect(refreshed.cacheType == .disk)
            #expect(h.server.requests("/lm.jpg").last?.headers.first(name: "If-Modified-Since") == modified)
            // The processed variant was served as stored: no second processing run.
            #expect(runs.count == 1)
        }
    }

    @Test func forceRefreshReplacesChangedBytes() async throws {
        try await withPipeline { h in
            let old = TestImages.jpeg(width: 10, height: 10, seed: 1)
            let new = TestImages.jpeg(width: 12, height: 12, seed: 2)
            h.server.route("/c.jpg", response(old, etag: "\"1\""))
            let url = h.server.url("/c.jpg")
            _ = try await h.manager.retrieveImage(with: url, options: [.waitForCache])
            h.server.route("/c.jpg", response(new, etag: "\"2\""))
            let refreshed = try await h.manager.retrieveImage(with: url, options: [.forceRefresh, .waitForCache])
            #expect(refreshed.cacheType == .none)
            #expect(refreshed.image.pixelSize == PixelSize(width: 12, height: 12))
            let stored = try #require(await h.cache.retrieveDataInDiskCache(forKey: url.cacheKey))
            #expect(stored.data == new)
            #expect(stored.metadata.httpCacheInfo?.etag == "\"2\"")
            #expect(h.server.requests("/c.jpg").last?.headers.first(name: "If-None-Match") == "\"1\"")
            let hit = try await h.manager.retrieveImage(with: url)
            #expect(hit.cacheType == .memory)
            #expect(hit.image.pixelSize == PixelSize(width: 12, height: 12))
        }
    }

    @Test func forceRefreshWithoutValidatorsDownloadsPlainly() async throws {
        try await withPipeline { h in
            h.server.route("/plain.jpg", .ok(TestImages.jpeg()))
            let url = h.server.url("/plain.jpg")
            _ = try await h.manager.retrieveImage(with: url, options: [.waitForCache])
            let refreshed = try await h.manager.retrieveImage(with: url, options: [.forceRefresh])
            #expect(refreshed.cacheType == .none)
            #expect(h.server.requests("/plain.jpg").last?.headers.contains(name: "If-None-Match") == false)
        }
    }

    @Test func respectHTTPFreshnessRevalidatesStaleEntries() async throws {
        try await withPipeline { h in
            let jpeg = TestImages.jpeg()
            h.server.route("/stale.jpg", response(jpeg, etag: "\"s\"", cacheControl: "no-cache"))
            let url = h.server.url("/stale.jpg")
            let first = try await h.manager.retrieveImage(with: url, options: [.respectHTTPFreshness, .waitForCache])
            #expect(first.cacheType == .none)
            // A no-cache response is not kept in memory under this option: every use asks the server.
            let second = try await h.manager.retrieveImage(with: url, options: [.respectHTTPFreshness])
            #expect(second.cacheType == .disk)
            #expect(second.response?.statusCode == 304)
            #expect(h.server.requestCount("/stale.jpg") == 2)
            #expect(h.server.requests("/stale.jpg").last?.headers.first(name: "If-None-Match") == "\"s\"")
            // Without the option the cached image is used as it is.
            _ = try await h.manager.retrieveImage(with: url)
            #expect(h.server.requestCount("/stale.jpg") == 2)
        }
    }

    @Test func respectHTTPFreshnessUsesFreshEntries() async throws {
        try await withPipeline { h in
            h.server.route("/fresh.jpg", response(TestImages.jpeg(), etag: "\"f\"", cacheControl: "max-age=600"))
            let url = h.server.url("/fresh.jpg")
            _ = try await h.manager.retrieveImage(with: url, options: [.respectHTTPFreshness, .waitForCache])
            h.cache.clearMemoryCache()
            let hit = try await h.manager.retrieveImage(with: url, options: [.respectHTTPFreshness])
            #expect(hit.cacheType == .disk)
            #expect(h.server.requestCount("/fresh.jpg") == 1)
        }
    }

    @Test func staleEntryThatChangedIsReplaced() async throws {
        try await withPipeline { h in
            h.server.route("/changed.jpg", response(TestImages.jpeg(width: 8, height: 8), etag: "\"1\"", cacheControl: "max-age=0"))
            let url = h.server.url("/changed.jpg")
            _ = try await h.manager.retrieveImage(with: url, options: [.respectHTTPFreshness, .waitForCache])
            h.server.route("/changed.jpg", response(TestImages.jpeg(width: 9, height: 9), etag: "\"2\"", cacheControl: "max-age=0"))
            let result = try await h.manager.retrieveImage(with: url, options: [.respectHTTPFreshness, .waitForCache])
            #expect(result.cacheType == .none)
            #expect(result.image.pixelSize == PixelSize(width: 9, height: 9))
            #expect(try await h.cache.diskMetadata(forKey: url.cacheKey)?.httpCacheInfo?.etag == "\"2\"")
        }
    }

    @Test func onlyFromCacheServesStaleEntriesWithoutAsking() async throws {
        try await withPipeline { h in
            h.server.route("/sc.jpg", response(TestImages.jpeg(), etag: "\"x\"", cacheControl: "max-age=0"))
            let url = h.server.url("/sc.jpg")
            _ = try await h.manager.retrieveImage(with: url, options: [.waitForCache])
            h.cache.clearMemoryCache()
            let hit = try await h.manager.retrieveImage(with: url, options: [.respectHTTPFreshness, .onlyFromCache])
            #expect(hit.cacheType == .disk)
            #expect(h.server.requestCount("/sc.jpg") == 1)
        }
    }

    @Test func noStoreResponsesAreNotWrittenToDisk() async throws {
        try await withPipeline { h in
            h.server.route("/ns.jpg", response(TestImages.jpeg(), cacheControl: "no-store"))
            let url = h.server.url("/ns.jpg")
            let processor = DownsamplingImageProcessor(size: PixelSize(width: 4, height: 4))
            _ = try await h.manager.retrieveImage(with: url, options: [.waitForCache])
            _ = try await h.manager.retrieveImage(with: url, options: [.processor(processor), .cacheOriginalImage, .waitForCache])
            #expect(try await h.cache.diskStorageSize == 0)
            #expect(h.cache.imageCachedType(forKey: url.cacheKey) == .memory)
        }
    }
}
