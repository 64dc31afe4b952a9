import Foundation
import Synchronization
import Testing
@testable import Alcedo

@Suite("ImagePrefetcher")
struct ImagePrefetcherTests {
    @Test func reportsSkippedFailedAndCompleted() async throws {
        try await withPipeline { h in
            for index in 0..<4 { h.server.route("/\(index).jpg", .ok(TestImages.jpeg(seed: index))) }
            h.server.route("/broken.jpg", .status(500))
            let urls = (0..<4).map { h.server.url("/\($0).jpg") } + [h.server.url("/broken.jpg")]
            _ = try await h.manager.retrieveImage(with: urls[0], options: [.waitForCache])
            h.cache.clearMemoryCache()   // cached on disk only: still skipped

            let progress = Collected<(Int, Int, Int)>()
            let completions = Collected<(Int, Int, Int)>()
            let prefetcher = ImagePrefetcher(urls: urls, manager: h.manager, progressBlock: { skipped, failed, completed in
                progress.append((skipped.count, failed.count, completed.count))
            }, completionHandler: { skipped, failed, completed in
                completions.append((skipped.count, failed.count, completed.count))
            })
            let result = await prefetcher.prefetch()
            #expect(result.skipped.map(\.cacheKey) == [urls[0].cacheKey])
            #expect(result.failed.map(\.cacheKey) == [urls[4].cacheKey])
            #expect(Set(result.completed.map(\.cacheKey)) == Set(urls[1...3].map(\.cacheKey)))
            #expect(progress.values.count == 5)
            #expect(progress.values.last.map { [$0.0, $0.1, $0.2] } == [1, 1, 3])
            #expect(completions.values.count == 1)
            #expect(h.server.requestCount("/0.jpg") == 1)
            for index in 1..<4 { #expect(h.cache.isCached(forKey: urls[index].cacheKey)) }
        }
    }

    @Test func processedVariantsDecideWhatIsCached() async throws {
        try await withPipeline { h in
            h.server.route("/v.jpg", .ok(TestImages.jpeg(width: 30, height: 30)))
            let url = h.server.url("/v.jpg")
            _ = try await h.manager.retrieveImage(with: url)
            let processor = DownsamplingImageProcessor(size: PixelSize(width: 10, height: 10))
            let result = await ImagePrefetcher(urls: [url], options: [.processor(processor)], manager: h.manager).prefetch()
            #expect(result.completed.count == 1)
            #expect(h.cache.isCached(forKey: url.cacheKey, processorIdentifier: processor.identifier))
            // The original was in memory: nothing was downloaded again.
            #expect(h.server.requestCount("/v.jpg") == 1)
        }
    }

    @Test func forceRefreshPrefetchesCachedImagesAgain() async throws {
        try await withPipeline { h in
            h.server.route("/f.jpg", .ok(TestImages.jpeg()))
            let url = h.server.url("/f.jpg")
            _ = try await h.manager.retrieveImage(with: url)
            let result = await ImagePrefetcher(urls: [url], options: [.forceRefresh], manager: h.manager).prefetch()
            #expect(result.completed.count == 1)
            #expect(result.skipped.isEmpty)
            #expect(h.server.requestCount("/f.jpg") == 2)
        }
    }

    @Test func atMostMaxConcurrentDownloadsAtATimeAtLowPriority() async throws {
        try await withPipeline(maximumConcurrentRequestsPerHost: 20) { h in
            for index in 0..<8 { h.server.route("/c\(index).jpg", .ok(TestImages.jpeg(seed: index))) }
            h.server.route("/urgent.jpg", .ok(TestImages.jpeg()))
            for index in 0..<8 { h.server.hold("/c\(index).jpg") }
            let prefetcher = ImagePrefetcher(urls: (0..<8).map { h.server.url("/c\($0).jpg") }, manager: h.manager)
            #expect(prefetcher.maxConcurrentDownloads == 5)
            prefetcher.maxConcurrentDownloads = 3
            prefetcher.start()
            prefetcher.start()   // once only
            #expect(await eventually { h.server.requestLog.count == 3 })
            for index in 0..<8 { h.server.release("/c\(index).jpg") }
            let result = await prefetcher.prefetch()
            #expect(result.completed.count == 8)
            #expect(h.server.requestLog.count == 8)
            // Checked at the end on the server's counter: never more than 3 requests at once.
            #expect(h.server.maximumConcurrentRequests == 3)
            #expect(h.server.requestLog.allSatisfy { $0.hasPrefix("/c") })
        }
    }

    @Test func lowPriorityYieldsToNormalRequests() async throws {
        try await withPipeline(maximumConcurrentRequestsPerHost: 1) { h in
            for index in 0..<4 { h.server.route("/p\(index).jpg", .ok(TestImages.jpeg(seed: index))) }
            h.server.route("/busy.jpg", .ok(TestImages.jpeg()))
            h.server.route("/now.jpg", .ok(TestImages.jpeg()))
            h.server.hold("/busy.jpg")
            let manager = h.manager
            let busy = Task { try await manager.retrieveImage(with: h.server.url("/busy.jpg")) }
            #expect(await eventually { h.server.requestCount("/busy.jpg") == 1 })
            let prefetcher = ImagePrefetcher(urls: (0..<4).map { h.server.url("/p\($0).jpg") }, manager: manager)
            prefetcher.start()
            #expect(await eventually { h.waitingRequests("/busy.jpg") == 4 })
            let now = Task { try await manager.retrieveImage(with: h.server.url("/now.jpg")) }
            #expect(await eventually { h.waitingRequests("/busy.jpg") == 5 })
            h.server.release("/busy.jpg")
            _ = try await (busy.value, now.value)
            _ = await prefetcher.prefetch()
            #expect(Array(h.server.requestLog.prefix(2)) == ["/busy.jpg", "/now.jpg"])
        }
    }

    @Test func stopCancelsAndCompletesOnce() async throws {
        try await withPipeline { h in
            for index in 0..<6 { h.server.route("/s\(index).jpg", .ok(TestImages.jpeg(seed: index))) }
            for index in 0..<6 { h.server.hold("/s\(index).jpg") }
            let completions = Counter()
            let prefetcher = ImagePrefetcher(urls: (0..<6).map { h.server.url("/s\($0).jpg") }, manager: h.manager,
                                             completionHandler: { _, _, _ in completions.increment() })
            prefetcher.maxConcurrentDownloads = 2
            prefetcher.start()
            #expect(await eventually { h.server.requestLog.count == 2 })
            prefetcher.stop()
            let result = await prefetcher.prefetch()
            // The two in flight were cancelled and the four never started count as failed too,
            // as in Kingfisher: skipped + failed + completed = all the sources.
            #expect(result.failed.count == 6)
            #expect(result.failures.allSatisfy { $0.error.isTaskCancelled })
            #expect(result.completed.isEmpty)
            #expect(completions.count == 1)
            #expect(h.server.requestLog.count == 2)
            for index in 0..<6 { h.server.release("/s\(index).jpg") }
        }
    }

    @Test func stoppedBeforeStartLoadsNothingAndFailsEverySource() async throws {
        try await withPipeline { h in
            h.server.route("/x.jpg", .ok(TestImages.jpeg()))
            let completions = Counter()
            let prefetcher = ImagePrefetcher(sources: [h.server.url("/x.jpg").convertToSource()], manager: h.manager,
                                             completionHandler: { _, _, _ in completions.increment() })
            prefetcher.stop()
            let result = await prefetcher.prefetch()
            #expect(result.completed.isEmpty && result.skipped.isEmpty)
            #expect(result.failed.map(\.cacheKey) == [h.server.url("/x.jpg").cacheKey])
            #expect(completions.count == 1)
            #expect(h.server.requestLog.isEmpty)
        }
    }
}
