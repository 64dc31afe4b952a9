import Dispatch
import Foundation
import Synchronization
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
            #expect(first.image.pixelSize == PixelSize(width: 20, height: 10))
            #expect(first.originalData == jpeg)
            #expect(first.response?.statusCode == 200)
            #expect(first.metrics.loading > .zero)
            #expect(first.metrics.decoding > .zero)
            #expect(first.metrics.total >= first.metrics.loading)

            let second = try await h.manager.retrieveImage(with: url)
            #expect(second.cacheType == .memory)
            #expect(second.image == first.image)
            #expect(second.originalData == nil)

            h.cache.clearMemoryCache()
            let third = try await h.manager.retrieveImage(with: url)
            #expect(third.cacheType == .disk)
            #expect(third.originalData == jpeg)
            #expect(third.image == first.image)
            #expect(h.server.requestCount("/a.jpg") == 1)
        }
    }

    @Test func processedVariantIsCachedUnderKeyAtIdentifier() async throws {
        try await withPipeline { h in
            h.server.route("/p.jpg", .ok(TestImages.jpeg(width: 40, height: 20)))
            let url = h.server.url("/p.jpg")
            let processor = DownsamplingImageProcessor(size: PixelSize(width: 10, height: 10))
            let result = try await h.manager.retrieveImage(with: url, options: [.processor(processor), .waitForCache])
            #expect(result.image.pixelSize == PixelSize(width: 10, height: 5))
            #expect(h.cache.imageCachedType(forKey: url.absoluteString, processorIdentifier: processor.identifier) == .memory)
            h.cache.clearMemoryCache()
            #expect(h.cache.imageCachedType(forKey: url.absoluteString, processorIdentifier: processor.identifier) == .disk)
            // Only the variant is stored: the original is not, without cacheOriginalImage.
            #expect(h.cache.imageCachedType(forKey: url.absoluteString) == .none)
            let again = try await h.manager.retrieveImage(with: url, options: [.processor(processor)])
            #expect(again.cacheType == .disk)
            #expect(again.image.pixelSize == PixelSize(width: 10, height: 5))
            #expect(h.server.requestCount("/p.jpg") == 1)
        }
    }

    @Test func callbackFormCallsBackOnceOnTheGivenQueue() async throws {
        try await withPipeline { h in
            h.server.route("/c.jpg", .ok(TestImages.jpeg()))
            let queue = DispatchQueue(label: "test.callbacks")
            let key = DispatchSpecificKey<Int>()
            queue.setSpecific(key: key, value: 7)
            let calls = Collected<(Bool, Int?)>()
            let done = Counter()
            h.manager.retrieveImage(with: h.server.url("/c.jpg"), options: [.callbackQueue(.dispatch(queue))]) { result in
                calls.append(((try? result.get()) != nil, DispatchQueue.getSpecific(key: key)))
                done.increment()
            }
            #expect(await eventually { done.count == 1 })
            // A second call would be queued by the time the retrieval is over: wait for that
            // point, then for the callback queue to run what it was given.
            #expect(await eventually { h.manager.pipelines.inFlightCount == 0 })
            await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
            #expect(calls.values.count == 1)
            #expect(calls.values.first?.0 == true)
            #expect(calls.values.first?.1 == 7)
        }
    }

    @Test func defaultCallbackQueueRunsWithoutAHop() async throws {
        try await withPipeline { h in
            h.server.route("/u.jpg", .ok(TestImages.jpeg()))
            let results = Collected<Result<RetrieveImageResult, AlcedoError>>()
            h.manager.retrieveImage(with: h.server.url("/u.jpg")) { results.append($0) }
            #expect(await eventually { results.values.count == 1 })
            #expect((try? results.values.first?.get())?.cacheType == CacheType.none)
        }
    }

    @Test func progressIsReported() async throws {
        try await withPipeline { h in
            let jpeg = TestImages.jpeg(width: 64, height: 64)
            h.server.route("/big.jpg", TestHTTPServer.Response.ok(jpeg).chunked(256))
            let seen = Collected<DownloadProgress>()
            _ = try await h.manager.retrieveImage(with: h.server.url("/big.jpg"), options: nil,
                                                 progressBlock: { seen.append(DownloadProgress(receivedSize: $0, totalSize: $1)) })
            #expect(!seen.values.isEmpty)
            #expect(seen.values.last?.receivedBytes == jpeg.count)
            #expect(seen.values.last?.expectedBytes == jpeg.count)
        }
    }

    @Test func cancellingOneCallerLeavesTheOthers() async throws {
        try await withPipeline { h in
            h.server.route("/slow.jpg", .ok(TestImages.jpeg()))
            h.server.hold("/slow.jpg")
            let url = h.server.url("/slow.jpg")
            let manager = h.manager
            let staying = Task { try await manager.retrieveImage(with: url) }
            let leaving = Task { try await manager.retrieveImage(with: url) }
            #expect(await eventually { h.server.requestCount("/slow.jpg") == 1 })
            #expect(await eventually { manager.pipelines.callerCount(LoadRequest(
                source: url.convertToSource(), options: manager.parsedOptions(nil), manager: manager).pipelineKey) == 2 })
            leaving.cancel()
            let error = await #expect(throws: AlcedoError.self) { try await leaving.value }
            #expect(error?.isCancellation == true)
            h.server.release("/slow.jpg")
            let result = try await staying.value
            #expect(result.cacheType == .none)
            #expect(h.server.requestCount("/slow.jpg") == 1)
        }
    }

    @Test func cancellingTheLastCallerStopsTheDownload() async throws {
        try await withPipeline { h in
            h.server.route("/stall.jpg", .ok(TestImages.jpeg()))
            h.server.hold("/stall.jpg")
            let url = h.server.url("/stall.jpg")
            let manager = h.manager
            let task = manager.retrieveImage(with: url, completionHandler: { _ in })
            #expect(await eventually { h.server.requestCount("/stall.jpg") == 1 })
            task?.cancel()
            #expect(task?.isCancelled == true)
            #expect(await eventually { h.downloader.networkCallerCount(for: url) == 0 && manager.pipelines.inFlightCount == 0 })
            h.server.release("/stall.jpg")
            // Nothing was stored for the cancelled request.
            #expect(h.cache.imageCachedType(forKey: url.absoluteString) == .none)
        }
    }

    @Test func defaultOptionsComeBeforeTheRequestsOwn() async throws {
        try await withPipeline { h in
            h.server.route("/d.jpg", .ok(TestImages.jpeg(width: 30, height: 30)))
            let url = h.server.url("/d.jpg")
            h.manager.defaultOptions = [.processor(DownsamplingImageProcessor(size: PixelSize(width: 10, height: 10)))]
            let defaulted = try await h.manager.retrieveImage(with: url)
            #expect(defaulted.image.pixelSize == PixelSize(width: 10, height: 10))
            let overridden = try await h.manager.retrieveImage(
                with: url, options: [.processor(DownsamplingImageProcessor(size: PixelSize(width: 5, height: 5)))])
            #expect(overridden.image.pixelSize == PixelSize(width: 5, height: 5))
        }
    }

    @Test func failuresAreTypedErrors() async throws {
        try await withPipeline { h in
            h.server.route("/missing.jpg", .status(404))
            h.server.route("/text.jpg", .ok(Data("<html>no image here</html>".utf8), contentType: "image/jpeg"))
            var corrupt = TestImages.jpeg(width: 32, height: 32)
            corrupt = corrupt.prefix(40) + Data(repeating: 0x55, count: 200)
            h.server.route("/corrupt.jpg", .ok(corrupt))
            h.server.route("/stalled.jpg", .ok(TestImages.jpeg()))
            h.server.hold("/stalled.jpg")

            let impatient = ImageDownloader(name: "impatient", configuration: .init(timeout: .milliseconds(300)))
            defer { Task { await impatient.shutdown() } }
            func error(_ path: String, _ options: AlcedoOptionsInfo = []) async -> AlcedoError? {
                await #expect(throws: AlcedoError.self) { try await h.manager.retrieveImage(with: h.server.url(path), options: options) }
            }
            guard case .responseError(.invalidHTTPStatusCode(let response)) = await error("/missing.jpg"), response.statusCode == 404 else {
                Issue.record("404 should be an invalid status code")
                return
            }
            guard case .processorError(.processingFailed(_, .data)) = await error("/text.jpg") else {
                Issue.record("text should not be an image")
                return
            }
            guard case .decodingFailed? = (await error("/corrupt.jpg"))?.processorCause else {
                Issue.record("a corrupt JPEG should be a decoding error")
                return
            }
            guard case .responseError(.URLSessionError(NetworkErrorReason.timedOut)) = await error("/stalled.jpg", [.downloader(impatient)]) else {
                Issue.record("a stalled server should time out")
                return
            }
            h.server.release("/stalled.jpg")
            // Nothing failed was cached.
            #expect(h.cache.imageCachedType(forKey: h.server.url("/corrupt.jpg").absoluteString) == .none)
        }
    }

    @Test func processorFailureIsAProcessorError() async throws {
        try await withPipeline { h in
            h.server.route("/f.jpg", .ok(TestImages.jpeg()))
            let error = await #expect(throws: AlcedoError.self) {
                try await h.manager.retrieveImage(with: h.server.url("/f.jpg"), options: [.processor(FailingProcessor())])
            }
            guard case .invalidParameter(let name, _)? = error?.processorCause else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            #expect(name == "FailingProcessor")
        }
    }

    @Test func invalidURLIsARequestError() async throws {
        let folder = try TemporaryDirectory()
        let manager = ImageManager(downloader: ImageDownloader(name: "unused"),
                                   cache: ImageCache(name: "unused", cacheDirectoryURL: folder.url))
        let error = await #expect(throws: AlcedoError.self) {
            try await manager.retrieveImage(with: URL(string: "ftp://example.invalid/a.png")!)
        }
        guard case .requestError(.invalidURL) = error else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        await manager.downloader.shutdown()
    }

    @Test func diskEntryThatDoesNotDecodeIsLoadedAgain() async throws {
        try await withPipeline { h in
            let jpeg = TestImages.jpeg()
            h.server.route("/bad-entry.jpg", .ok(jpeg))
            let url = h.server.url("/bad-entry.jpg")
            try await h.cache.storeToDisk(Data("this is not an image".utf8), forKey: url.cacheKey)
            let result = try await h.manager.retrieveImage(with: url, options: [.waitForCache])
            #expect(result.cacheType == .none)
            #expect(h.server.requestCount("/bad-entry.jpg") == 1)
            #expect(try #require(await h.cache.retrieveDataInDiskCache(forKey: url.cacheKey)).data == jpeg)
        }
    }
}
