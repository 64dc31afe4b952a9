import Foundation
import Testing
@testable import Alcedo

/// Revalidation's less travelled paths: a 304 for bytes that no longer decode, `Age` on a 304,
/// several revalidations of one entry at once, and a cancelled one.
@Suite("Pipeline HTTP revalidation edge cases")
struct PipelineRevalidationEdgeTests {
    private func response(_ body: Data, etag: String, cacheControl: String = "max-age=60",
                          notModified: [(String, String)] = []) -> TestHTTPServer.Response {
        var response = TestHTTPServer.Response.ok(body, contentType: "image/jpeg").header("Cache-Control", cacheControl)
        response.etag = etag
        response.notModifiedHeaders = notModified
        return response
    }

    @Test("a 304 whose cached bytes no longer decode falls back to a full download, which replaces the entry")
    func notModifiedButUndecodable() async throws {
        try await withPipeline { h in
            let jpeg = TestImages.jpeg(seed: 3)
            h.server.route("/u.jpg", response(jpeg, etag: "\"u\""))
            let url = h.server.url("/u.jpg")
            _ = try await h.manager.retrieveImage(with: url, options: [.waitForCache])
            // The entry keeps its validators, but its bytes are no image any more.
            let info = try #require(await h.cache.diskMetadata(forKey: url.cacheKey)?.httpCacheInfo)
            try await h.cache.storeToDisk(Data("not an image at all".utf8), forKey: url.cacheKey, httpCacheInfo: info)
            h.cache.clearMemoryCache()

            let refreshed = try await h.manager.retrieveImage(with: url, options: [.forceRefresh, .waitForCache])
            #expect(refreshed.cacheType == .none)
            #expect(refreshed.originalData == jpeg)
            #expect(refreshed.response?.statusCode == 200)
            let requests = h.server.requests("/u.jpg")
            #expect(requests.count == 3)
            #expect(requests[1].headers.first(name: "If-None-Match") == "\"u\"", "the revalidation")
            #expect(requests[2].headers.first(name: "If-None-Match") == nil, "then a plain download")
            #expect(try #require(await h.cache.retrieveDataInDiskCache(forKey: url.cacheKey)).data == jpeg)
        }
    }

    @Test("the Age of a 304 is subtracted from the refreshed max-age kept on disk")
    func ageOnNotModified() async throws {
        try await withPipeline { h in
            h.server.route("/a.jpg", response(TestImages.jpeg(), etag: "\"a\"",
                                              notModified: [("Cache-Control", "max-age=900"), ("Age", "100")]))
            let url = h.server.url("/a.jpg")
            _ = try await h.manager.retrieveImage(with: url, options: [.waitForCache])
            #expect(try await h.cache.diskMetadata(forKey: url.cacheKey)?.httpCacheInfo?.maxAge == 60)
            let refreshed = try await h.manager.retrieveImage(with: url, options: [.forceRefresh, .waitForCache])
            #expect(refreshed.response?.statusCode == 304)
            #expect(try await h.cache.diskMetadata(forKey: url.cacheKey)?.httpCacheInfo?.maxAge == 800)
        }
    }

    @Test("concurrent revalidations of one entry send one conditional request, and every caller gets the image")
    func concurrentRevalidationsAreCoalesced() async throws {
        try await withPipeline { h in
            let jpeg = TestImages.jpeg(seed: 5)
            h.server.route("/c.jpg", response(jpeg, etag: "\"c\""))
            let url = h.server.url("/c.jpg")
            let first = try await h.manager.retrieveImage(with: url, options: [.waitForCache])
            h.server.hold("/c.jpg")
            let manager = h.manager
            let tasks = (0..<8).map { _ in
                Task { try await manager.retrieveImage(with: url, options: [.forceRefresh, .waitForCache]) }
            }
            #expect(await eventually { h.server.requestCount("/c.jpg") == 2 })
            // Every caller has joined the one revalidation before the server answers.
            #expect(await eventually { manager.pipelines.inFlightCount == 1 && manager.pipelines.totalCallerCount == 8 })
            h.server.release("/c.jpg")
            for task in tasks {
                let result = try await task.value
                #expect(result.image == first.image)
                #expect(result.response?.statusCode == 304)
            }
            #expect(h.server.requestCount("/c.jpg") == 2)
        }
    }

    @Test("a cancelled revalidation leaves the entry and its metadata as they were")
    func cancelledRevalidation() async throws {
        try await withPipeline { h in
            let jpeg = TestImages.jpeg(seed: 6)
            h.server.route("/x.jpg", response(jpeg, etag: "\"x\"", notModified: [("Cache-Control", "max-age=900")]))
            let url = h.server.url("/x.jpg")
            _ = try await h.manager.retrieveImage(with: url, options: [.waitForCache])
            let before = try #require(await h.cache.diskMetadata(forKey: url.cacheKey))
            h.server.hold("/x.jpg")
            let manager = h.manager
            let task = Task { try await manager.retrieveImage(with: url, options: [.forceRefresh, .waitForCache]) }
            #expect(await eventually { h.server.requestCount("/x.jpg") == 2 })
            task.cancel()
            let error = await #expect(throws: AlcedoError.self) { try await task.value }
            #expect(error?.isCancellation == true)
            // The server's 304 comes after the caller left; whatever becomes of it, it must not
            // touch the entry. Checked once the pipeline has nothing in flight.
            h.server.release("/x.jpg")
            #expect(await eventually { manager.pipelines.inFlightCount == 0 })
            let after = try #require(await h.cache.diskMetadata(forKey: url.cacheKey))
            #expect(after.httpCacheInfo == before.httpCacheInfo, "the 304's freshness was applied after cancellation")
            #expect(try #require(await h.cache.retrieveDataInDiskCache(forKey: url.cacheKey)).data == jpeg)
            h.cache.clearMemoryCache()
            #expect(try await manager.retrieveImage(with: url).cacheType == .disk)
            #expect(h.server.requestCount("/x.jpg") == 2)
        }
    }
}
