import Foundation
import Testing
@testable import Alcedo

@Suite("ImageManager")
struct ImageManagerTests {
    @Test func loadsThenServesFromMemoryThenDisk() async throws {
        try await withPipeline { h in
            let jpeg = TestImages.jpeg(width: 20, height: 10)
            h.server.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let url = h.server.url("/a.jpg")

            let first = try await h.manager.retrieveImage(with: url, options: [.waitForCache])
            #expect(first.cacheType == .none)
            #expect(first.image.size == PixelSize(width: 20, height: 10))
            #expect(first.originalData == jpeg)
            #expect(first.response?.statusCode == 200)
            #expect(first.metrics.loading > .zero)
            #expect(first.metrics.decoding > .zero)

            let second = try await h.manager.retrieveImage(with: url)
            #expect(second.cacheType == .memory)
            #expect(second.image == first.image)

            h.cache.clearMemoryCache()
            let third = try await h.manager.retrieveImage(with: url)
            #expect(third.cacheType == .disk)
            #expect(third.originalData == jpeg)
            #expect(third.image == first.image)
            #expect(h.server.requestCount("/a.jpg") == 1)
        }
    }
}
