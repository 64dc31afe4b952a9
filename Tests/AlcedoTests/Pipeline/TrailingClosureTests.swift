import Foundation
import Synchronization
import Testing
@testable import Alcedo

/// An unlabelled trailing closure is the completion handler, as in Kingfisher; a progress
/// block runs only when labelled. Each test checks which closure actually ran.
@Suite("Trailing closures")
struct TrailingClosureTests {
    @Test func prefetcherTrailingClosureIsTheCompletion() async throws {
        try await withPipeline { h in
            for index in 0..<3 { h.server.route("/\(index).jpg", .ok(TestImages.jpeg(seed: index))) }
            let urls = (0..<3).map { h.server.url("/\($0).jpg") }
            let calls = Collected<(Int, Int, Int)>()
            ImagePrefetcher(urls: urls, options: [.targetCache(h.cache), .downloader(h.downloader)]) { skipped, failed, completed in
                calls.append((skipped.count, failed.count, completed.count))
            }.start()
            #expect(await eventually { !calls.values.isEmpty })
            // Let any further call arrive: every source is retrieved by now.
            for index in 0..<3 { #expect(h.cache.isCached(forKey: urls[index].cacheKey)) }
            // Once, at the end, with every source: a progress block would have run three times,
            // the first time with one source.
            #expect(calls.values.map { [$0.0, $0.1, $0.2] } == [[0, 0, 3]])
        }
    }

    @Test func prefetcherResourcesAndSourcesFormsToo() async throws {
        try await withPipeline { h in
            h.server.route("/a.jpg", .ok(TestImages.jpeg()))
            h.server.route("/b.jpg", .ok(TestImages.jpeg(seed: 1)))
            let options: AlcedoOptionsInfo = [.targetCache(h.cache), .downloader(h.downloader)]
            let resources: [any Resource] = [ImageResource(downloadURL: h.server.url("/a.jpg"), cacheKey: "a")]
            let sources: [Source] = [.network(h.server.url("/b.jpg"))]
            let calls = Collected<String>()
            let first = ImagePrefetcher(resources: resources, options: options) { _, _, completed in calls.append("resources \(completed.count)") }
            let second = ImagePrefetcher(sources: sources, options: options) { _, _, completed in calls.append("sources \(completed.count)") }
            await first.prefetch()
            await second.prefetch()
            #expect(await eventually { calls.values.count == 2 })
            #expect(Set(calls.values) == ["resources 1", "sources 1"])
        }
    }

    @Test func prefetcherLabelledProgressRunsPerSource() async throws {
        try await withPipeline { h in
            for index in 0..<3 { h.server.route("/\(index).jpg", .ok(TestImages.jpeg(seed: index))) }
            let urls = (0..<3).map { h.server.url("/\($0).jpg") }
            let progress = Collected<Int>()
            let completion = Collected<Int>()
            let prefetcher = ImagePrefetcher(urls: urls, options: [.targetCache(h.cache), .downloader(h.downloader)],
                                             progressBlock: { skipped, failed, completed in
                                                 progress.append(skipped.count + failed.count + completed.count)
                                             }) { _, _, completed in completion.append(completed.count) }
            await prefetcher.prefetch()
            #expect(await eventually { completion.values.count == 1 })
            #expect(progress.values == [1, 2, 3])
            #expect(completion.values == [3])
        }
    }

    /// In `async` code Swift prefers `async` overloads: the one-parameter trailing closure must
    /// still be the callback form's completion, not the `async` form's progress.
    @Test func managerTrailingClosureInAsyncCodeIsTheCompletion() async throws {
        try await withPipeline { h in
            h.server.route("/m.jpg", .ok(TestImages.jpeg(width: 20, height: 10)))
            let url = h.server.url("/m.jpg")
            let results = Collected<Result<RetrieveImageResult, AlcedoError>>()
            h.manager.retrieveImage(with: url) { result in results.append(result) }
            #expect(await eventually { results.values.count == 1 })
            let size = try results.values.first?.get().image.pixelSize
            #expect(size == PixelSize(width: 20, height: 10))
        }
    }

    /// The `async` form's preview handler takes one parameter too: it comes after the
    /// progress block, so a trailing closure still binds to the progress block first and a
    /// one-parameter closure can only be the callback form's completion (Source form too).
    @Test func managerTrailingClosureWithPreviewHandlerInScope() async throws {
        try await withPipeline { h in
            h.server.route("/s.jpg", .ok(TestImages.jpeg(width: 12, height: 8)))
            let source = Source.network(h.server.url("/s.jpg"))
            let results = Collected<Result<RetrieveImageResult, AlcedoError>>()
            let task = h.manager.retrieveImage(with: source, options: [.progressiveJPEG(.default)]) { result in
                results.append(result)
            }
            #expect(await eventually { results.values.count == 1 })
            #expect(task?.isCancelled == false)
            #expect(try results.values.first?.get().image.pixelSize == PixelSize(width: 12, height: 8))
            let previews = Collected<AlcedoImage>()
            let direct = try await h.manager.retrieveImage(with: source, options: [.progressiveJPEG(.default)],
                                                           previewHandler: { previews.append($0) })
            #expect(direct.cacheType == .memory)
            #expect(previews.values.isEmpty)
        }
    }

    @Test func managerLabelledProgressBlockInAsyncForm() async throws {
        try await withPipeline { h in
            let body = TestImages.jpeg(width: 64, height: 64)
            h.server.route("/p.jpg", TestHTTPServer.Response.ok(body).chunked(100))
            let seen = Collected<(Int64, Int64)>()
            let result = try await h.manager.retrieveImage(with: h.server.url("/p.jpg"), progressBlock: { received, total in
                seen.append((received, total))
            })
            #expect(result.image.pixelSize == PixelSize(width: 64, height: 64))
            #expect(seen.values.last.map { [$0.0, $0.1] } == [Int64(body.count), Int64(body.count)])
        }
    }

    @Test func downloaderTrailingClosureInAsyncCodeIsTheCompletion() async throws {
        try await withDownloader { server, downloader in
            server.route("/d.jpg", .ok(TestImages.jpeg(width: 8, height: 6)))
            let results = Collected<Result<ImageLoadingResult, AlcedoError>>()
            downloader.downloadImage(with: server.url("/d.jpg")) { result in results.append(result) }
            #expect(await eventually { results.values.count == 1 })
            let size = try results.values.first?.get().image.pixelSize
            #expect(size == PixelSize(width: 8, height: 6))
        }
    }

    @Test func downloaderProgressWithUnknownLengthReportsMinusOne() async throws {
        try await withDownloader { server, downloader in
            var response = TestHTTPServer.Response.ok(TestImages.jpeg())
            response.contentLength = .none
            server.route("/u.jpg", response)
            let totals = Collected<Int64>()
            _ = try await downloader.downloadData(with: server.url("/u.jpg"), progressBlock: { _, total in totals.append(total) })
            #expect(!totals.values.isEmpty)
            #expect(totals.values.allSatisfy { $0 == -1 })
        }
    }

    @Test func kfOnProgressTakesKingfishersTwoParameters() async throws {
        try await withPipeline { h in
            let body = TestImages.jpeg(width: 32, height: 32)
            h.server.route("/k.jpg", TestHTTPServer.Response.ok(body).chunked(64))
            let seen = Collected<Int64>()
            let result = try await KF.url(h.server.url("/k.jpg")).manager(h.manager)
                .onProgress { receivedSize, totalSize in seen.append(totalSize - receivedSize) }
                .retrieve()
            #expect(result.image.pixelSize == PixelSize(width: 32, height: 32))
            #expect(seen.values.last == 0)
        }
    }
}
