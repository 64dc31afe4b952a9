import Alcedo
@testable import AlcedoServer
import Foundation
import Testing

/// The caches keep each served variant as the response's bytes: a fresh result and a disk hit
/// are sent as the serializer wrote them, with no second encode.
@Suite("Served variants: the cached bytes are the response")
struct ServedVariantTests {
    @Test func freshResultsAndDiskHitsAreSentAsStoredWithoutASecondEncode() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/p.jpg", .ok(TestImages.jpeg(width: 320, height: 240), contentType: "image/jpeg"))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-served-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }

        let first = try await ServerHarness.start { $0.cacheDirectory = folder }
        let jpegPath = first.path(origin.url("/p.jpg"), "rs:fit:100:100/q:70")
        let webpPath = first.path(origin.url("/p.jpg"), "rs:fit:100:100/q:70", ext: "webp")
        let jpeg = try await first.request(jpegPath)
        let webp = try await first.request(webpPath)
        #expect(jpeg.status == 200 && jpeg.format == .jpeg)
        #expect(webp.status == 200 && webp.format == .webp)
        #expect(try jpeg.image().width == 100)
        #expect(first.service.metrics.processingRunCount == 2, "each output format is a variant of its own")
        #expect(first.service.metrics.responseEncodingCount == 0, "fresh results are the serializer's bytes")
        await first.stop()

        // A new server on the same folder: both variants come from disk, byte for byte.
        let second = try await ServerHarness.start { $0.cacheDirectory = folder }
        let jpegAgain = try await second.request(jpegPath)
        let webpAgain = try await second.request(webpPath)
        #expect(jpegAgain.body == jpeg.body)
        #expect(webpAgain.body == webp.body)
        #expect(second.service.metrics.processingRunCount == 0)
        #expect(second.service.metrics.responseEncodingCount == 0, "disk hits are sent as stored")
        #expect(origin.requestCount("/p.jpg") == 1)
        // The quality is part of the variant: another quality is made anew, from the original on disk.
        let lower = try await second.request(second.path(origin.url("/p.jpg"), "rs:fit:100:100/q:20"))
        #expect(lower.status == 200 && lower.body.count < jpeg.body.count)
        #expect(second.service.metrics.processingRunCount == 1)
        await second.stop()
    }
}
