import Foundation
import Synchronization
import Testing
@testable import Alcedo

// The Kingfisher cheat sheet, written as a Kingfisher user writes it. Each call compiles as it
// is, apart from the renames listed in the "Coming from Kingfisher" article
// (`KingfisherManager` → `ImageManager`, `KingfisherError` → `AlcedoError`, `UIImage` →
// `AlcedoImage`, an `ImageDisplaying` target instead of a `UIImageView`), and each is checked
// for what it means. Sizes are `CGSize` and the scale a `CGFloat`, as on a screen.

/// What a UIImageView is to Kingfisher: something to show an image in.
private final class ImageView: ImageDisplaying {
    let imageBinding = ImageBinding()
    private let shown = Mutex<AlcedoImage?>(nil)
    func display(_ image: AlcedoImage?) { shown.withLock { $0 = image } }
    var image: AlcedoImage? { shown.withLock { $0 } }
}

@Suite("Kingfisher dialect")
struct KingfisherDialectTests {
    // MARK: Callbacks in code that is not async (an app's view code)

    /// `retrieveImage(with:) { result in switch result … }` and the downloader's form, from
    /// synchronous code.
    private static func retrieveTheKingfisherWay(_ url: URL, cache: ImageCache, downloader: ImageDownloader,
                                                 into results: Collected<String>) {
        ImageManager.shared.retrieveImage(with: url, options: [.targetCache(cache), .downloader(downloader)]) { result in
            switch result {
            case .success(let value):
                results.append("manager \(value.image.pixelSize) \(value.cacheType)")
            case .failure(let error):
                results.append("manager failed: \(error)")
            }
        }
        downloader.downloadImage(with: url, options: nil) { result in
            switch result {
            case .success(let value):
                results.append("downloader \(value.image.pixelSize)")
            case .failure(let error):
                results.append("downloader failed: \(error)")
            }
        }
    }

    @Test func retrieveAndDownloadWithCompletionHandlers() async throws {
        try await withPipeline { h in
            h.server.route("/a.jpg", .ok(TestImages.jpeg(width: 30, height: 20)))
            let results = Collected<String>()
            Self.retrieveTheKingfisherWay(h.server.url("/a.jpg"), cache: h.cache, downloader: h.downloader, into: results)
            #expect(await eventually { results.values.count == 2 })
            #expect(Set(results.values) == ["manager 30x20 none", "downloader 30x20"])
        }
    }

    /// The same calls inside `async` code: still the completion handlers.
    @Test func completionHandlersInAsyncCode() async throws {
        try await withPipeline { h in
            h.server.route("/b.jpg", .ok(TestImages.jpeg(width: 10, height: 10)))
            let url = h.server.url("/b.jpg")
            let results = Collected<String>()
            ImageManager.shared.retrieveImage(with: url, options: [.targetCache(h.cache), .downloader(h.downloader)]) { result in
                results.append((try? result.get()).map { "manager \($0.image.pixelSize)" } ?? "manager failed")
            }
            h.downloader.downloadImage(with: url) { result in
                results.append((try? result.get()).map { "downloader \($0.image.pixelSize)" } ?? "downloader failed")
            }
            #expect(await eventually { results.values.count == 2 })
            #expect(Set(results.values) == ["manager 10x10", "downloader 10x10"])
        }
    }

    // MARK: async/await

    @Test func asyncRetrieveWithPlainDoCatch() async throws {
        try await withPipeline { h in
            h.server.route("/c.jpg", .ok(TestImages.jpeg(width: 8, height: 8)))
            h.server.route("/gone.jpg", .status(404))
            let result = try await ImageManager.shared.retrieveImage(with: h.server.url("/c.jpg"),
                                                                     options: [.targetCache(h.cache), .downloader(h.downloader)])
            #expect(result.image.size == CGSize(width: 8, height: 8))

            // A plain do/catch: `error` is `any Error`, as in Kingfisher.
            var caught = ""
            do {
                _ = try await ImageManager.shared.retrieveImage(with: h.server.url("/gone.jpg"),
                                                                options: [.targetCache(h.cache), .downloader(h.downloader)])
            } catch let error as AlcedoError {
                if case .responseError(reason: .invalidHTTPStatusCode(let response)) = error { caught = "status \(response.statusCode)" }
            } catch {
                caught = "other: \(error)"
            }
            #expect(caught == "status 404")

            do {
                _ = try await ImageManager.shared.retrieveImage(with: h.server.url("/gone.jpg"),
                                                                options: [.targetCache(h.cache), .downloader(h.downloader)])
            } catch {
                guard let alcedoError = error as? AlcedoError, case .responseError = alcedoError else {
                    Issue.record("expected a response error, got \(error)")
                    return
                }
            }
        }
    }

    /// The `catch` patterns the documentation shows, each in the kind of block it names.
    @Test func documentedCatchPatterns() async throws {
        try await withPipeline { h in
            h.server.route("/404.jpg", .status(404))
            let url = h.server.url("/404.jpg")
            var outcomes: [String] = []
            // Untyped: a typed pattern, then the catch-all.
            do {
                let result = try await h.manager.retrieveImage(with: url)
                outcomes.append("image \(result.image.pixelSize)")
            } catch let error as AlcedoError {
                if case .responseError(reason: .invalidHTTPStatusCode(let response)) = error, response.statusCode == 404 { outcomes.append("404") }
            } catch {
                outcomes.append("other")
            }
            // Untyped: `as?` in one catch.
            do {
                _ = try await h.manager.retrieveImage(with: url)
            } catch {
                if let error = error as? AlcedoError, !error.isConnectionFailure { outcomes.append("not a connection failure") }
            }
            // Typed: `error` is an AlcedoError without a cast.
            do throws(AlcedoError) {
                _ = try await h.manager.retrieveImage(with: url)
            } catch {
                if case .responseError = error { outcomes.append("typed") }
            }
            #expect(outcomes == ["404", "not a connection failure", "typed"])
        }
    }

    // MARK: Processors, options and KF

    @Test func processorsAndOptionsAsOnTheCheatSheet() async throws {
        try await withPipeline { h in
            h.server.route("/d.jpg", .ok(TestImages.jpeg(width: 400, height: 400)))
            let imageView = ImageView()
            let bounds = CGSize(width: 100, height: 100)
            let scale: CGFloat = 2
            let processor = DownsamplingImageProcessor(size: bounds)
                |> RoundCornerImageProcessor(cornerRadius: 20)
            let results = Collected<Result<RetrieveImageResult, AlcedoError>>()
            imageView.setImage(
                with: h.server.url("/d.jpg"),
                placeholder: nil,
                options: [
                    .processor(processor),
                    .scaleFactor(scale),
                    .transition(.fade(1)),
                    .cacheOriginalImage,
                    .targetCache(h.cache),
                    .downloader(h.downloader),
                ]) { result in
                    results.append(result)
                }
            #expect(await eventually { results.values.count == 1 })
            // 100x100 points at 2x: 200x200 pixels.
            #expect(imageView.image?.size == CGSize(width: 100, height: 100))
            #expect(imageView.image?.pixelSize == PixelSize(width: 200, height: 200))
        }
    }

    @Test func kfBuilderChain() async throws {
        try await withPipeline { h in
            h.server.route("/e.jpg", .ok(TestImages.jpeg(width: 300, height: 150)))
            let imageView = ImageView()
            let events = Collected<String>()
            KF.url(h.server.url("/e.jpg"))
                .placeholder(nil)
                .setProcessor(DownsamplingImageProcessor(size: CGSize(width: 60, height: 60)))
                .loadDiskFileSynchronously()
                .cacheMemoryOnly()
                .fade(duration: 0.25)
                .targetCache(h.cache)
                .downloader(h.downloader)
                .onProgress { receivedSize, totalSize in events.append("progress \(receivedSize <= totalSize)") }
                .onSuccess { result in events.append("success \(result.image.pixelSize)") }
                .onFailure { error in events.append("failure \(error)") }
                .set(to: imageView)
            #expect(await eventually { events.values.contains { $0.hasPrefix("success") || $0.hasPrefix("failure") } })
            #expect(events.values.contains("success 60x30"))
            #expect(!events.values.contains("progress false"))
            #expect(imageView.image?.size == CGSize(width: 60, height: 30))
        }
    }

    @Test func requestModifierAndDownloaderSettings() async throws {
        try await withPipeline { h in
            h.server.route("/f.jpg", .ok(TestImages.jpeg()))
            let modifier = AnyModifier { request in
                var r = request
                r.setValue("<token>", forHTTPHeaderField: "Access-Token")
                return r
            }
            h.downloader.downloadTimeout = 15.0
            _ = try await ImageManager.shared.retrieveImage(with: h.server.url("/f.jpg"),
                                                            options: [.requestModifier(modifier), .targetCache(h.cache),
                                                                      .downloader(h.downloader), .downloadPriority(0.8)])
            #expect(h.server.requests("/f.jpg").first?.headers["Access-Token"] == ["<token>"])
            #expect(h.downloader.configuration.timeout == .seconds(15))
        }
    }

    // MARK: Prefetching

    @Test func prefetcherWithATrailingCompletion() async throws {
        try await withPipeline { h in
            for index in 0..<2 { h.server.route("/p\(index).jpg", .ok(TestImages.jpeg(seed: index))) }
            h.server.route("/p-missing.jpg", .status(404))
            let urls = ["/p0.jpg", "/p1.jpg", "/p-missing.jpg"].map { h.server.url($0) }
            let summary = Collected<String>()
            let prefetcher = ImagePrefetcher(urls: urls, options: [.targetCache(h.cache), .downloader(h.downloader)]) {
                skippedResources, failedResources, completedResources in
                summary.append("These resources are prefetched: \(completedResources.count), failed: \(failedResources.count)")
            }
            prefetcher.start()
            #expect(await eventually { !summary.values.isEmpty })
            #expect(summary.values == ["These resources are prefetched: 2, failed: 1"])
            prefetcher.stop()
        }
    }

    // MARK: The cache

    /// The cache's calls from synchronous code.
    private static func useTheCache(_ cache: ImageCache, image: AlcedoImage, log: Collected<String>) {
        cache.memoryStorage.config.totalCostLimit = 300 * 1024 * 1024
        cache.memoryStorage.config.countLimit = 150
        cache.memoryStorage.config.expiration = .seconds(600)
        cache.diskStorage.config.sizeLimit = 1000 * 1024 * 1024
        cache.diskStorage.config.expiration = .never

        cache.store(image, forKey: "key_for_image")
        let cached = cache.isCached(forKey: "key_for_image")
        let cacheType = cache.imageCachedType(forKey: "key_for_image")
        log.append("cached \(cached) \(cacheType)")
        cache.retrieveImage(forKey: "key_for_image") { result in
            switch result {
            case .success(let value):
                log.append("retrieved \(value.cacheType) \(value.image?.pixelSize.description ?? "nil")")
            case .failure(let error):
                log.append("retrieve failed: \(error)")
            }
        }
        cache.calculateDiskStorageSize { result in
            switch result {
            case .success(let size):
                log.append("size \(Double(size) / 1024 / 1024 >= 0)")
            case .failure(let error):
                log.append("size failed: \(error)")
            }
        }
    }

    private static func clearTheCache(_ cache: ImageCache, log: Collected<String>) {
        cache.removeImage(forKey: "key_for_image")
        cache.clearMemoryCache()
        cache.clearDiskCache { log.append("disk cleared") }
        cache.cleanExpiredDiskCache { log.append("expired cleaned") }
    }

    @Test func cacheCallsFromSynchronousCode() async throws {
        let folder = try TemporaryDirectory()
        let cache = ImageCache(name: "my_cache", cacheDirectoryURL: folder.url)
        let log = Collected<String>()
        Self.useTheCache(cache, image: TestImages.image(width: 5, height: 5), log: log)
        #expect(await eventually { log.values.count == 3 })
        #expect(log.values.first == "cached true memory")
        #expect(log.values.contains("retrieved memory 5x5"))
        #expect(log.values.contains("size true"))
        #expect(cache.memoryStorage.config.countLimit == 150)
        // The store's disk write runs after it returns: let it land before clearing, or a
        // late write would put the entry back after the clear.
        let deadline = ContinuousClock.now + .seconds(30)
        while (try? await cache.diskMetadata(forKey: "key_for_image")) == nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(try await cache.diskMetadata(forKey: "key_for_image") != nil)

        Self.clearTheCache(cache, log: log)
        #expect(await eventually { log.values.count == 5 })
        #expect(!cache.isCached(forKey: "key_for_image"))
    }

    // MARK: Sources

    @Test func dataProvidersAndResources() async throws {
        try await withPipeline { h in
            let file = h.folder.url.appendingPathComponent("local.jpg")
            try TestImages.jpeg(width: 7, height: 3).write(to: file)
            let provider = LocalFileImageDataProvider(fileURL: file)
            let fromFile = try await h.manager.retrieveImage(with: .provider(provider))
            #expect(fromFile.image.size == CGSize(width: 7, height: 3))

            let base64 = TestImages.jpeg(width: 4, height: 4).base64EncodedString()
            let fromBase64 = try await h.manager.retrieveImage(with: .provider(Base64ImageDataProvider(base64String: base64, cacheKey: "b64")))
            #expect(fromBase64.image.size == CGSize(width: 4, height: 4))

            h.server.route("/r.jpg", .ok(TestImages.jpeg(width: 6, height: 2)))
            let resource = ImageResource(downloadURL: h.server.url("/r.jpg"), cacheKey: "my_cache_key")
            let fromResource = try await h.manager.retrieveImage(with: resource)
            #expect(fromResource.image.size == CGSize(width: 6, height: 2))
            #expect(h.cache.isCached(forKey: "my_cache_key"))
        }
    }
}
