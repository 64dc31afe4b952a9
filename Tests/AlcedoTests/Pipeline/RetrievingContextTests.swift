import Dispatch
import Foundation
import Testing
@testable import Alcedo

@Suite("Retrieving context and cache callback coordinator")
struct RetrievingContextTests {
    private func source(_ name: String) -> Source { .network(URL(string: "https://example.com/\(name).png")!) }

    @Test func appendErrorKeepsEveryConcurrentFailure() {
        let failed = source("a")
        let context = RetrievingContext(options: AlcedoParsedOptionsInfo(nil), originalSource: failed)
        let error = AlcedoError.requestError(reason: .emptyRequest)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<250 {
                context.appendError(error, to: failed)
                _ = context.propagationErrors
            }
        }
        #expect(context.propagationErrors.count == 8 * 250)
    }

    @Test func failoverGoesThroughTheAlternativesThenListsEveryFailure() throws {
        let lowData = source("low")
        let context = RetrievingContext(
            options: AlcedoParsedOptionsInfo([.alternativeSources([source("b"), source("c")]), .lowDataMode(lowData)]),
            originalSource: source("a"))
        let error = AlcedoError.cacheError(reason: .imageNotExisting(key: "a"))
        let second = try context.nextSource(afterFailureOf: source("a"), with: error).get()
        #expect(second.url?.lastPathComponent == "b.png")
        #expect(context.options.alternativeSources?.count == 1)
        let third = try context.nextSource(afterFailureOf: second, with: error).get()
        #expect(third.url?.lastPathComponent == "c.png")
        guard case .failure(.imageSettingError(reason: .alternativeSourcesExhausted(let failures))) =
            context.nextSource(afterFailureOf: third, with: error) else {
            Issue.record("expected alternativeSourcesExhausted")
            return
        }
        #expect(failures.map { $0.source.url?.lastPathComponent } == ["a.png", "b.png", "c.png"])
        // An ordinary failure never uses the Low Data Mode source.
        #expect(context.options.lowDataModeSource?.url == lowData.url)
    }

    @Test func failoverWithoutAlternativesEndsWithTheErrorItself() {
        let context = RetrievingContext(options: AlcedoParsedOptionsInfo(nil), originalSource: source("a"))
        let error = AlcedoError.cacheError(reason: .imageNotExisting(key: "a"))
        guard case .failure(.cacheError(reason: .imageNotExisting(let key))) = context.nextSource(afterFailureOf: source("a"), with: error) else {
            Issue.record("expected the source's own error")
            return
        }
        #expect(key == "a")
        #expect(context.propagationErrors.isEmpty)
    }

    @Test func coordinatorDeliversOnceWhicheverWriteFinishesLast() {
        for originalFirst in [false, true] {
            let coordinator = CacheCallbackCoordinator(shouldWaitForCache: true, shouldCacheOriginal: true)
            let deliveries = Counter()
            coordinator.apply(.cacheInitiated) { deliveries.increment() }
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                let action: CacheCallbackCoordinator.Action = (index == 0) == originalFirst ? .cachingOriginalImage : .cachingImage
                coordinator.apply(action) { deliveries.increment() }
            }
            #expect(deliveries.count == 1)
            #expect(coordinator.state == .done)
        }
    }

    @Test func waitForCacheReturnsAfterTheVariantAndTheKeptOriginalAreWritten() async throws {
        try await withPipeline { h in
            h.server.route("/kept.jpg", .ok(TestImages.jpeg(width: 40, height: 20)))
            let url = h.server.url("/kept.jpg")
            let processor = DownsamplingImageProcessor(size: PixelSize(width: 10, height: 10))
            _ = try await h.manager.retrieveImage(with: url, options: [.processor(processor), .cacheOriginalImage, .waitForCache])
            h.cache.clearMemoryCache()
            #expect(h.cache.imageCachedType(forKey: url.absoluteString, processorIdentifier: processor.identifier) == .disk)
            #expect(h.cache.imageCachedType(forKey: url.absoluteString) == .disk)
        }
    }

    @Test func loadAndCacheImageLoadsEvenWhenTheImageIsCached() async throws {
        try await withPipeline { h in
            h.server.route("/again.jpg", .ok(TestImages.jpeg(width: 20, height: 10)))
            let url = h.server.url("/again.jpg")
            _ = try await h.manager.retrieveImage(with: url, options: [.waitForCache])
            let options = h.manager.parsedOptions([.waitForCache])
            let result = await withCheckedContinuation { continuation in
                h.manager.loadAndCacheImage(source: .network(url),
                                            context: RetrievingContext(options: options, originalSource: .network(url))) {
                    continuation.resume(returning: $0)
                }
            }
            #expect(try result.get().cacheType == .none)
            #expect(h.server.requestCount("/again.jpg") == 2)
        }
    }
}
