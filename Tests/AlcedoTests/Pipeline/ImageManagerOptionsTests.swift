import Foundation
import Synchronization
import Testing
@testable import Alcedo

/// Every option of ``AlcedoOptionsInfoItem`` through the manager, against the loopback server.
@Suite("ImageManager options")
struct ImageManagerOptionsTests {
    @Test func targetCacheReceivesTheImage() async throws {
        try await withPipeline { h in
            h.server.route("/t.jpg", .ok(TestImages.jpeg()))
            let url = h.server.url("/t.jpg")
            let other = h.makeCache("other")
            _ = try await h.manager.retrieveImage(with: url, options: [.targetCache(other), .waitForCache])
            #expect(other.imageCachedType(forKey: url.cacheKey) == .memory)
            #expect(h.cache.imageCachedType(forKey: url.cacheKey) == .none)
            let hit = try await h.manager.retrieveImage(with: url, options: [.targetCache(other)])
            #expect(hit.cacheType == .memory)
        }
    }

    @Test func originalCacheKeepsTheOriginalForAnotherProcessor() async throws {
        try await withPipeline { h in
            h.server.route("/o.jpg", .ok(TestImages.jpeg(width: 40, height: 40)))
            let url = h.server.url("/o.jpg")
            let originals = h.makeCache("originals")
            let runs = Counter()
            let first = InvertingCountingProcessor(name: "a", runs: runs)
            let second = InvertingCountingProcessor(name: "b", runs: runs)
            _ = try await h.manager.retrieveImage(
                with: url, options: [.processor(first), .originalCache(originals), .cacheOriginalImage, .waitForCache])
            let stored = try #require(await originals.retrieveDataInDiskCache(forKey: url.cacheKey))
            #expect(ImageFormat.sniff(stored.data) == .jpeg)
            #expect(h.cache.imageCachedType(forKey: url.cacheKey) == .none)

            let result = try await h.manager.retrieveImage(with: url, options: [.processor(second), .originalCache(originals)])
            // Made now (Kingfisher's `.none`), from the original on disk.
            #expect(result.cacheType == .none)
            #expect(result.originalCacheType == .disk)
            #expect(h.server.requestCount("/o.jpg") == 1)
            #expect(runs.count == 2)
            // The new variant was stored where variants go.
            #expect(h.cache.imageCachedType(forKey: url.cacheKey, processorIdentifier: second.identifier) == .memory)
        }
    }

    @Test func originalInMemoryIsProcessedWithoutALoad() async throws {
        try await withPipeline { h in
            h.server.route("/m.jpg", .ok(TestImages.jpeg(width: 24, height: 24)))
            let url = h.server.url("/m.jpg")
            _ = try await h.manager.retrieveImage(with: url)
            let runs = Counter()
            let result = try await h.manager.retrieveImage(
                with: url, options: [.processor(InvertingCountingProcessor(name: "m", runs: runs))])
            #expect(result.cacheType == .none)
            #expect(result.originalCacheType == .memory)
            #expect(runs.count == 1)
            #expect(h.server.requestCount("/m.jpg") == 1)
        }
    }

    @Test func downloaderOptionUsesThatDownloader() async throws {
        try await withPipeline { h in
            h.server.route("/dl.jpg", .ok(TestImages.jpeg()))
            var headers = ImageDownloader.Configuration.standardHeaders
            headers["X-Downloader"] = "second"
            let second = ImageDownloader(name: "second", configuration: .init(timeout: .seconds(5), defaultHeaders: headers))
            _ = try await h.manager.retrieveImage(with: h.server.url("/dl.jpg"), options: [.downloader(second)])
            #expect(h.server.requests("/dl.jpg").first?.headers.first(name: "X-Downloader") == "second")
            await second.shutdown()
        }
    }

    @Test func onlyFromCacheMissIsATypedError() async throws {
        try await withPipeline { h in
            h.server.route("/only.jpg", .ok(TestImages.jpeg()))
            let url = h.server.url("/only.jpg")
            let error = await #expect(throws: AlcedoError.self) {
                try await h.manager.retrieveImage(with: url, options: [.onlyFromCache])
            }
            guard case .imageNotExisting(let key) = error?.cacheReason else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            #expect(key == url.cacheKey)
            #expect(h.server.requestCount("/only.jpg") == 0)
            _ = try await h.manager.retrieveImage(with: url, options: [.waitForCache])
            h.cache.clearMemoryCache()
            let hit = try await h.manager.retrieveImage(with: url, options: [.onlyFromCache])
            #expect(hit.cacheType == .disk)
            #expect(h.server.requestCount("/only.jpg") == 1)
        }
    }

    @Test func fromMemoryCacheOrRefreshSkipsTheDisk() async throws {
        try await withPipeline { h in
            h.server.route("/mr.jpg", .ok(TestImages.jpeg()))
            let url = h.server.url("/mr.jpg")
            _ = try await h.manager.retrieveImage(with: url, options: [.waitForCache])
            let memory = try await h.manager.retrieveImage(with: url, options: [.fromMemoryCacheOrRefresh])
            #expect(memory.cacheType == .memory)
            #expect(h.server.requestCount("/mr.jpg") == 1)
            h.cache.clearMemoryCache()
            let refreshed = try await h.manager.retrieveImage(with: url, options: [.fromMemoryCacheOrRefresh])
            #expect(refreshed.cacheType == .none)
            #expect(h.server.requestCount("/mr.jpg") == 2)
        }
    }

    @Test func cacheMemoryOnlyWritesNothingToDisk() async throws {
        try await withPipeline { h in
            h.server.route("/mem.jpg", .ok(TestImages.jpeg()))
            let url = h.server.url("/mem.jpg")
            _ = try await h.manager.retrieveImage(with: url, options: [.cacheMemoryOnly, .waitForCache])
            #expect(h.cache.imageCachedType(forKey: url.cacheKey) == .memory)
            h.cache.clearMemoryCache()
            #expect(h.cache.imageCachedType(forKey: url.cacheKey) == .none)
            #expect(try await h.cache.diskStorageSize == 0)
        }
    }

    @Test func waitForCacheDeliversAfterTheDiskWrite() async throws {
        try await withPipeline { h in
            let jpeg = TestImages.jpeg()
            h.server.route("/w.jpg", .ok(jpeg))
            let url = h.server.url("/w.jpg")
            _ = try await h.manager.retrieveImage(with: url, options: [.waitForCache])
            let stored = try #require(await h.cache.retrieveDataInDiskCache(forKey: url.cacheKey))
            #expect(stored.data == jpeg)
            #expect(stored.metadata.httpCacheInfo != nil)
        }
    }

    @Test func withoutWaitForCacheTheDiskWriteFollows() async throws {
        try await withPipeline { h in
            h.server.route("/nw.jpg", .ok(TestImages.jpeg()))
            let url = h.server.url("/nw.jpg")
            _ = try await h.manager.retrieveImage(with: url)
            let cache = h.cache
            // The disk entry appears once the write that follows the delivery is done.
            #expect(await eventually { cache.diskStorage.isCached(forKey: ImageCache.cacheKey(forKey: url.cacheKey, processorIdentifier: "")) })
        }
    }

    @Test func cacheSerializerChoosesTheDiskFormat() async throws {
        try await withPipeline { h in
            h.server.route("/s.jpg", .ok(TestImages.jpeg(width: 20, height: 20)))
            let url = h.server.url("/s.jpg")
            let processor = DownsamplingImageProcessor(size: PixelSize(width: 10, height: 10))
            _ = try await h.manager.retrieveImage(
                with: url, options: [.processor(processor), .cacheSerializer(FormatIndicatedCacheSerializer.webp(lossless: true)),
                                     .waitForCache])
            let stored = try #require(await h.cache.retrieveDataInDiskCache(forKey: url.cacheKey,
                                                                             processorIdentifier: processor.identifier))
            #expect(ImageFormat.sniff(stored.data) == .webp)
        }
    }

    @Test func imageModifierChangesTheDeliveryNotTheCache() async throws {
        try await withPipeline { h in
            h.server.route("/im.jpg", .ok(TestImages.jpeg(width: 8, height: 8)))
            let url = h.server.url("/im.jpg")
            let modifier = AnyImageModifier { $0.frame(at: 0).replacingFrames([AlcedoImage.Frame(pixels: [UInt8](repeating: 9, count: 8 * 8 * 4))]) }
            let modified = try await h.manager.retrieveImage(with: url, options: [.imageModifier(modifier)])
            #expect(modified.image.pixel(x: 0, y: 0) == RGBA(red: 9, green: 9, blue: 9, alpha: 9))
            let cached = try #require(h.cache.retrieveImageInMemoryCache(forKey: url.cacheKey))
            #expect(cached.pixel(x: 0, y: 0) != RGBA(red: 9, green: 9, blue: 9, alpha: 9))
            let hit = try await h.manager.retrieveImage(with: url, options: [.imageModifier(modifier)])
            #expect(hit.cacheType == .memory)
            #expect(hit.image.pixel(x: 0, y: 0) == RGBA(red: 9, green: 9, blue: 9, alpha: 9))
        }
    }

    @Test func requestModifierAndRedirectHandlerApply() async throws {
        try await withPipeline { h in
            h.server.route("/old.jpg", .redirect(to: "/new.jpg"))
            h.server.route("/new.jpg", .ok(TestImages.jpeg()))
            let redirects = Collected<String>()
            let result = try await h.manager.retrieveImage(with: h.server.url("/old.jpg"), options: [
                .requestModifier(HeaderFieldsModifier(["Authorization": "Bearer t0k"])),
                .redirectHandler(AnyRedirectHandler { response, request in
                    redirects.append(response.url.path)
                    var next = request
                    next.headers["Authorization"] = nil
                    return next
                }),
            ])
            #expect(result.response?.url.path == "/new.jpg")
            #expect(redirects.values == ["/old.jpg"])
            #expect(h.server.requests("/old.jpg").first?.headers.first(name: "Authorization") == "Bearer t0k")
            #expect(h.server.requests("/new.jpg").first?.headers.contains(name: "Authorization") == false)
            // Cached under the requested URL's key.
            #expect(h.cache.imageCachedType(forKey: h.server.url("/old.jpg").cacheKey) == .memory)
        }
    }

    @Test func refusingModifierFailsTheRequest() async throws {
        try await withPipeline { h in
            h.server.route("/no.jpg", .ok(TestImages.jpeg()))
            let error = await #expect(throws: AlcedoError.self) {
                try await h.manager.retrieveImage(with: h.server.url("/no.jpg"), options: [.requestModifier(AnyModifier { _ in nil })])
            }
            guard case .requestError(.emptyRequest) = error else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            #expect(h.server.requestCount("/no.jpg") == 0)
        }
    }

    @Test func downloadPriorityOrdersTheHostQueue() async throws {
        try await withPipeline(maximumConcurrentRequestsPerHost: 1) { h in
            for path in ["/busy.jpg", "/low.jpg", "/high.jpg"] { h.server.route(path, .ok(TestImages.jpeg())) }
            h.server.hold("/busy.jpg")
            let manager = h.manager
            let busy = Task { try await manager.retrieveImage(with: h.server.url("/busy.jpg")) }
            #expect(await eventually { h.server.requestCount("/busy.jpg") == 1 })
            let low = Task { try await manager.retrieveImage(with: h.server.url("/low.jpg"), options: [.downloadPriority(.low)]) }
            #expect(await eventually { h.waitingRequests("/low.jpg") == 1 })
            let high = Task { try await manager.retrieveImage(with: h.server.url("/high.jpg"), options: [.downloadPriority(.high)]) }
            #expect(await eventually { h.waitingRequests("/high.jpg") == 2 })
            h.server.release("/busy.jpg")
            _ = try await (busy.value, low.value, high.value)
            #expect(h.server.requestLog == ["/busy.jpg", "/high.jpg", "/low.jpg"])
        }
    }

    @Test func retryStrategyRetriesServerErrors() async throws {
        try await withPipeline { h in
            h.server.route("/flaky.jpg", sequence: [.status(503), .status(500), .ok(TestImages.jpeg())])
            let result = try await h.manager.retrieveImage(
                with: h.server.url("/flaky.jpg"),
                options: [.retryStrategy(DelayRetryStrategy(maxRetryCount: 3, retryInterval: .seconds(0.01)))])
            #expect(result.cacheType == .none)
            #expect(h.server.requestCount("/flaky.jpg") == 3)
        }
    }

    @Test func alternativeSourcesAreTriedInOrder() async throws {
        try await withPipeline { h in
            h.server.route("/gone.jpg", .status(404))
            h.server.route("/also-gone.jpg", .status(410))
            h.server.route("/mirror.jpg", .ok(TestImages.jpeg()))
            let original = h.server.url("/gone.jpg").convertToSource()
            let result = try await h.manager.retrieveImage(with: original, options: [.alternativeSources([
                h.server.url("/also-gone.jpg").convertToSource(), h.server.url("/mirror.jpg").convertToSource(),
            ])])
            #expect(result.source.url?.path == "/mirror.jpg")
            #expect(result.originalSource.url?.path == "/gone.jpg")
            #expect(h.server.requestLog == ["/gone.jpg", "/also-gone.jpg", "/mirror.jpg"])
        }
    }

    @Test func exhaustedAlternativeSourcesListEveryError() async throws {
        try await withPipeline { h in
            h.server.route("/a.jpg", .status(404))
            h.server.route("/b.jpg", .ok(Data("not an image".utf8)))
            let error = await #expect(throws: AlcedoError.self) {
                try await h.manager.retrieveImage(with: h.server.url("/a.jpg").convertToSource(), options: [.alternativeSources([
                    h.server.url("/b.jpg").convertToSource(),
                    .provider(Base64ImageDataProvider(base64String: "!!!", cacheKey: "bad")),
                ])])
            }
            guard case .alternativeSourcesExhausted(let failures) = error?.settingReason else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            #expect(failures.count == 3)
            guard failures.count == 3 else { return }
            if case .responseError(.invalidHTTPStatusCode(let response)) = failures[0].error, response.statusCode == 404 {} else { Issue.record("first: \(failures[0])") }
            if case .processorError(.processingFailed(_, .data)) = failures[1].error {} else { Issue.record("second: \(failures[1])") }
            if case .invalidBase64? = failures[2].error.settingReason?.dataProviderFailure {} else { Issue.record("third: \(failures[2])") }
            #expect(error?.description.contains("all 3 sources failed") == true)
        }
    }

    @Test func memoryExpirationAndAccessExtension() async throws {
        try await withPipeline { h in
            h.server.route("/me.jpg", .ok(TestImages.jpeg()))
            let url = h.server.url("/me.jpg")
            let clock = TestClock()
            let cache = ImageCache(memoryStorage: MemoryStorage.Backend(config: .init(now: clock.function)),
                                   diskStorage: DiskStorage.EntryStore(config: .init(name: "me", directory: h.folder.url)))
            let options: AlcedoOptionsInfo = [.targetCache(cache), .memoryCacheExpiration(.seconds(100)), .waitForCache]
            _ = try await h.manager.retrieveImage(with: url, options: options)

            clock.advance(60)
            let kept = try await h.manager.retrieveImage(with: url, options: options + [.memoryCacheAccessExtendingExpiration(.cacheTime)])
            #expect(kept.cacheType == .memory)
            clock.advance(60)  // 120 s after the store, 60 s after the extending access
            let extended = try await h.manager.retrieveImage(with: url, options: options + [.memoryCacheAccessExtendingExpiration(.none)])
            #expect(extended.cacheType == .memory)
            clock.advance(60)  // 120 s after the last extension: expired
            let expired = try await h.manager.retrieveImage(with: url, options: options)
            #expect(expired.cacheType == .disk)
        }
    }

    @Test func diskExpirationAndAccessExtension() async throws {
        try await withPipeline { h in
            h.server.route("/de.jpg", .ok(TestImages.jpeg()))
            let url = h.server.url("/de.jpg")
            let clock = TestClock()
            let cache = ImageCache(memoryStorage: MemoryStorage.Backend(config: .init()),
                                   diskStorage: DiskStorage.EntryStore(config: .init(name: "de", directory: h.folder.url, now: clock.function)))
            let options: AlcedoOptionsInfo = [.targetCache(cache), .diskCacheExpiration(.seconds(100)), .waitForCache]
            _ = try await h.manager.retrieveImage(with: url, options: options)
            cache.clearMemoryCache()

            clock.advance(60)
            let kept = try await h.manager.retrieveImage(with: url, options: options + [.diskCacheAccessExtendingExpiration(.none)])
            #expect(kept.cacheType == .disk)
            cache.clearMemoryCache()
            clock.advance(60)  // 120 s after the store, never extended: expired
            let expired = try await h.manager.retrieveImage(with: url, options: options + [.diskCacheAccessExtendingExpiration(.cacheTime)])
            #expect(expired.cacheType == .none)
            #expect(h.server.requestCount("/de.jpg") == 2)
            cache.clearMemoryCache()

            clock.advance(60)
            _ = try await h.manager.retrieveImage(with: url, options: options + [.diskCacheAccessExtendingExpiration(.cacheTime)])
            cache.clearMemoryCache()
            clock.advance(60)  // 120 s after the store, 60 s after the extending access
            let extended = try await h.manager.retrieveImage(with: url, options: options)
            #expect(extended.cacheType == .disk)
            #expect(h.server.requestCount("/de.jpg") == 2)
        }
    }

    @Test func onlyLoadFirstFrameNeverPoisonsTheAnimation() async throws {
        try await withPipeline { h in
            let animated = try Fixtures.data("webp-generated/animated.webp")
            h.server.route("/anim.webp", .ok(animated))
            let url = h.server.url("/anim.webp")
            let first = try await h.manager.retrieveImage(with: url, options: [.onlyLoadFirstFrame, .waitForCache])
            #expect(first.image.frames.count == 1)
            let whole = try await h.manager.retrieveImage(with: url)
            #expect(whole.image.frames.count == 4)
            #expect(whole.cacheType == .disk)
            #expect(whole.image.frames[0].pixels == first.image.frames[0].pixels)
            // The other way round: a cached animation is delivered as its first frame.
            let again = try await h.manager.retrieveImage(with: url, options: [.onlyLoadFirstFrame])
            #expect(again.image.frames.count == 1)
            #expect(h.server.requestCount("/anim.webp") == 1)
        }
    }

    @Test func decodingLimitsRefuseLargeImages() async throws {
        try await withPipeline { h in
            h.server.route("/large.jpg", .ok(TestImages.jpeg(width: 64, height: 64)))
            let error = await #expect(throws: AlcedoError.self) {
                try await h.manager.retrieveImage(with: h.server.url("/large.jpg"),
                                                  options: [.decodingLimits(DecodingLimits(maxPixelCount: 100))])
            }
            guard case .decodingFailed(.tooManyPixels)? = error?.processorCause else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
        }
    }
}
