import AlcedoTestSupport
import Foundation
import Synchronization
import Testing
import Alcedo

// Kingfisher 8's documented non-UI code (README, the DocC "Common Tasks" pages and topics),
// written as the documentation writes it, against `import Alcedo` only. Each snippet is the
// body of a function whose parameters are the free names the page uses (`url`, `cache`,
// `cacheKey`, `downloader`…); the page is named above it, and where a line had to change
// (a view, `UIScreen`, a placeholder comment that is not Swift) the comment says how.
// Each test then checks what the page says the snippet does, against a real HTTP server on
// 127.0.0.1 and real cache folders.
//
// `print` is the pages' way of showing a result: in this file it records the line, so the
// tests can read what the snippets printed.

/// What the snippets printed, in order (the suite runs its tests one at a time).
private let printed = Mutex<[String]>([])

private func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    let line = items.map { "\($0)" }.joined(separator: separator)
    printed.withLock { $0.append(line) }
}

private func printedLines() -> [String] { printed.withLock { $0 } }

private func clearPrinted() { printed.withLock { $0.removeAll() } }

// MARK: Common Tasks

/// CommonTasks.md, "Getting an Image without Setting to UI".
private func getAnImageWithoutUI(url: URL) {
    KingfisherManager.shared.retrieveImage(with: url) { result in
        // Do something with `result`
        print("retrieved: \((try? result.get())?.image.pixelSize.description ?? "failed")")
    }
}

/// CommonTasks.md, "Completion Handler" (the handler's body, given to the manager: there is no view).
private func completionHandler(url: URL) {
    KingfisherManager.shared.retrieveImage(with: url) { result in
        // `result` is either a `.success(RetrieveImageResult)` or a `.failure(KingfisherError)`
        switch result {
        case .success(let value):
            // The image was set to image view:
            print(value.image)

            // From where the image was retrieved:
            // - .none - Just downloaded.
            // - .memory - Got from memory cache.
            // - .disk - Got from disk cache.
            print(value.cacheType)

            // The source object which contains information like `url`.
            print(value.source)

        case .failure(let error):
            print(error) // The error happens
        }
    }
}

/// README.md, the completion handler of the main example (with the manager, no view).
private func readmeCompletion(url: URL?, processor: any ImageProcessor) {
    guard let url else { return }
    KingfisherManager.shared.retrieveImage(
        with: url,
        options: [
            .processor(processor),
            .scaleFactor(2),          // README: `UIScreen.main.scale`
            .transition(.fade(1)),
            .cacheOriginalImage
        ])
    {
        result in
        switch result {
        case .success(let value):
            print("Task done for: \(value.source.url?.absoluteString ?? "")")
        case .failure(let error):
            print("Job failed: \(error.localizedDescription)")
        }
    }
}

// MARK: Common Tasks - Cache

/// CommonTasks_Cache.md, "Checking whether an image in the cache".
private func checkingTheCache(cacheKey: String) -> (Bool, CacheType) {
    let cache = ImageCache.default
    let cached = cache.isCached(forKey: cacheKey)

    // To know where the cached image is:
    let cacheType = cache.imageCachedType(forKey: cacheKey)
    // `.memory`, `.disk` or `.none`.
    return (cached, cacheType)
}

/// CommonTasks_Cache.md, the opt-in async API, callback form.
private func cachedTypeAsyncCallback(cache: ImageCache, cacheKey: String) {
    cache.imageCachedTypeAsync(forKey: cacheKey) { cacheType in
        // `.memory`, `.disk` or `.none`.
        print("async type: \(cacheType)")
    }
}

/// CommonTasks_Cache.md, the opt-in async API, async/await form.
private func cachedTypeAsyncAwait(cache: ImageCache, cacheKey: String) async -> CacheType {
    // Or with async/await:
    let cacheType = await cache.imageCachedTypeAsync(forKey: cacheKey)
    return cacheType
}

/// CommonTasks_Cache.md, a processed image's cache entry.
private func processedEntry(cache: ImageCache, url: URL, cacheKey: String) async throws -> Bool {
    let processor = RoundCornerImageProcessor(cornerRadius: 20)
    // Page: `imageView.kf.setImage(with: url, options: [.processor(processor)])`.
    _ = try await KingfisherManager.shared.retrieveImage(with: url, options: [.processor(processor), .targetCache(cache)])

    // Later
    return cache.isCached(forKey: cacheKey, processorIdentifier: processor.identifier)
}

/// CommonTasks_Cache.md, "Getting an image from the cache".
private func gettingFromTheCache(cache: ImageCache) {
    cache.retrieveImage(forKey: "cacheKey") { result in
        switch result {
        case .success(let value):
            print(value.cacheType)

            // If the `cacheType is `.none`, `image` will be `nil`.
            print(value.image)

        case .failure(let error):
            print(error)
        }
    }
}

/// CommonTasks_Cache.md, "Set limit for the cache" and "Set the default expiration for cache".
private func limitsAndExpiration(cache: ImageCache) {
    // Limit memory cache size to 300 MB.
    cache.memoryStorage.config.totalCostLimit = 300 * 1024 * 1024

    // Limit memory cache to hold 150 images at most.
    cache.memoryStorage.config.countLimit = 150

    // Limit disk cache size to 1 GB.
    cache.diskStorage.config.sizeLimit = 1000 * 1024 * 1024

    // Set memory image expires after 10 minutes.
    cache.memoryStorage.config.expiration = .seconds(600)

    // Set disk image never expires.
    cache.diskStorage.config.expiration = .never

    // Check memory clean up every 30 seconds.
    cache.memoryStorage.config.cleanInterval = 30
}

/// CommonTasks_Cache.md, "Store images to cache manually".
private func storeManually(cache: ImageCache, image: KFCrossPlatformImage, data: Data, cacheKey: String) {
    cache.store(image, forKey: cacheKey)
    cache.store(image, original: data, forKey: cacheKey + "-with-data")
}

/// CommonTasks_Cache.md, "Remove images from cache manually".
private func removeManually(cache: ImageCache, cacheKey: String, processor: any ImageProcessor) {
    cache.removeImage(forKey: cacheKey)

    cache.removeImage(
        forKey: cacheKey,
        processorIdentifier: processor.identifier,
        fromMemory: false,
        fromDisk: true)
    {
        print("Removed!")
    }
}

/// CommonTasks_Cache.md, "Clear the cache".
private func clearTheCache(cache: ImageCache) {
    // Remove all.
    cache.clearMemoryCache()
    cache.clearDiskCache { print("Done") }

    // Remove only expired.
    cache.cleanExpiredMemoryCache()
    cache.cleanExpiredDiskCache { print("Done") }
}

/// CommonTasks_Cache.md, "Report the disk storage size".
private func reportTheDiskSize() {
    ImageCache.default.calculateDiskStorageSize { result in
        switch result {
        case .success(let size):
            print("Disk cache size: \(Double(size) / 1024 / 1024) MB")
        case .failure(let error):
            print(error)
        }
    }
}

/// CommonTasks_Cache.md, "Create your own cache and use it" (the manager instead of a view).
private func ownCache(url: URL) -> ImageCache {
    // The `name` parameter is used to identify the disk cache bound to the `ImageCache`.
    let cache = ImageCache(name: "my-own-cache")
    KingfisherManager.shared.retrieveImage(with: url, options: [.targetCache(cache)]) { _ in print("own cache done") }
    return cache
}

/// CommonTasks_Cache.md, "Only search cache for the image" (the manager instead of a view).
private func onlyFromCache(url: URL) {
    KingfisherManager.shared.retrieveImage(with: url, options: [.onlyFromCache]) { result in
        if case .failure(.cacheError(reason: .imageNotExisting(let key))) = result {
            print("not existing: \(key)")
        }
    }
}

/// CommonTasks_Cache.md, "Waiting for cache to finish" (the manager instead of a view; a
/// statement added to each `case`, which the page leaves empty).
private func waitingForTheCache(url: URL) {
    KingfisherManager.shared.retrieveImage(with: url, options: [.waitForCache]) { _ in
        ImageCache.default.retrieveImageInDiskCache(forKey: url.cacheKey) { result in
            switch result {
            case .success(let image):
                // `image` exists.
                print("on disk: \(image != nil)")
            case .failure: break
            }
        }
    }
}

// MARK: Common Tasks - Downloader

/// CommonTasks_Downloader.md, "Download an image manually".
private func downloadManually(url: URL) {
    let downloader = ImageDownloader.default
    downloader.downloadImage(with: url) { result in
        switch result {
        case .success(let value):
            print(value.image)
        case .failure(let error):
            print(error)
        }
    }
}

/// CommonTasks_Downloader.md, "Modify a request before sending".
private func modifyARequest(downloader: ImageDownloader, url: URL) {
    let modifier = AnyModifier { request in
        var r = request
        r.setValue("abc", forHTTPHeaderField: "Access-Token")
        return r
    }
    downloader.downloadImage(with: url, options: [.requestModifier(modifier)]) {
        result in
        // ...
        print("modified download: \((try? result.get()) != nil)")
    }
}

/// CommonTasks_Downloader.md, "Use async request modifier", in Kingfisher 8's shape (the page's
/// `class` with `reportModified:` is Kingfisher 7's; Kingfisher 8's protocol has the `async`
/// method shown in its source documentation). A struct, so that it is `Sendable`.
private struct AsyncModifier: AsyncImageDownloadRequestModifier {
    var onDownloadTaskStarted: (@Sendable (DownloadTask?) -> Void)?

    func modified(for request: DownloadRequest) async -> DownloadRequest? {
        var r = request
        try? await Task.sleep(for: .milliseconds(1))   // someAsyncOperation
        r.setValue("async", forHTTPHeaderField: "X-Async")
        return r
    }
}

private func asyncModifierStarted(url: URL) {
    var modifier = AsyncModifier()
    modifier.onDownloadTaskStarted = { task in
        if let task = task {
            print("A download task started: \(task.url.lastPathComponent)")
        }
    }
    KingfisherManager.shared.retrieveImage(with: url, options: [.requestModifier(modifier)]) { _ in print("async modified") }
}

/// CommonTasks_Downloader.md, "Cancel a download task" (the page's `switch result {` line,
/// missing there, restored; Kingfisher 8's downloader returns a `DownloadTask` that is not
/// optional, so `task.cancel()` where the page writes `task?.cancel()`).
private func cancelADownload(downloader: ImageDownloader, url: URL) {
    let task = downloader.downloadImage(with: url) { result in
        // ...
        switch result {
        case .success: print("not cancelled")
        case .failure(let error):
            print(error.isTaskCancelled) // true
        }

    }

    // After some time, but before the download task completes.
    task.cancel()
}

/// CommonTasks_Downloader.md, "Set customize timeout".
private func timeouts(downloader: ImageDownloader, url: URL) {
    // Set the timeout to 1 minute.
    downloader.downloadTimeout = 60

    let modifier = AnyModifier { request in
        var r = request
        r.timeoutInterval = 60
        return r
    }
    downloader.downloadImage(with: url, options: [.requestModifier(modifier)])
}

// MARK: Common Tasks - Processor

/// CommonTasks_Processor.md beyond its list of built-in processors (which
/// `KingfisherDocsCompileTests` compiles and runs as the page writes it): a composition, and
/// Kingfisher's `Border` with a system colour.
private func builtInProcessors() -> [any ImageProcessor] {
    var all: [any ImageProcessor] = []
    do {
        // First blur the image, then make it round cornered.
        let processor = BlurImageProcessor(blurRadius: 4) |> RoundCornerImageProcessor(cornerRadius: 20)
        all.append(processor)
    }
    do {
        // Kingfisher's `Border`, and the system colours.
        let processor = BorderImageProcessor(border: .init(color: .systemBlue.withAlphaComponent(0.5), lineWidth: 2))
        all.append(processor)
    }
    return all
}

/// CommonTasks_Processor.md, "Creating your own processor" (the return type is Kingfisher 8's
/// `KFCrossPlatformImage?`; the page still writes Kingfisher 6's `Image?`).
private struct MyProcessor: ImageProcessor {

    let someValue: Int

    var identifier: String { "com.yourdomain.myprocessor-\(someValue)" }

    // Convert input data/image to target image and return it.
    func process(item: ImageProcessItem, options: KingfisherParsedOptionsInfo) -> KFCrossPlatformImage? {
        switch item {
        case .image(let image):
            // A previous processor already converted the image to an image object.
            // You can do whatever you want to apply to the image and return the result.
            return someValue < 0 ? nil : image.resized(to: PixelSize(width: someValue, height: someValue))
        case .data(let data):
            // Your own way to convert some data to an image.
            return createAnImage(data: data)
        }
    }

    private func createAnImage(data: Data) -> KFCrossPlatformImage? {
        try? ImageCodecRegistry.shared.decode(data)
    }
}

private func useMyProcessor(url: URL) {
    let processor = MyProcessor(someValue: 10)
    KingfisherManager.shared.retrieveImage(with: url, options: [.processor(processor)]) { result in
        print("my processor: \((try? result.get())?.image.pixelSize.description ?? "failed")")
    }
}

// MARK: Common Tasks - Serializer

/// CommonTasks_Serializer.md, "Creating customized serializer" (Kingfisher 8's parameter and
/// return types; the page still writes Kingfisher 6's).
private struct MyCacheSerializer: CacheSerializer {
    func data(with image: KFCrossPlatformImage, original: Data?) -> Data? {
        return try? ImageCodecRegistry.shared.encode(image, as: .png)
    }

    func image(with data: Data, options: KingfisherParsedOptionsInfo) -> KFCrossPlatformImage? {
        return try? ImageCodecRegistry.shared.decode(data)
    }
}

// MARK: Topics

/// Topic_ImageDataProvider.md, "Creating a customize ImageDataProvider": the page draws a
/// letter with UIKit; here the same provider makes a 250x250 square of `systemYellow` with
/// Alcedo's encoder.
private struct UserNameLetterIconImageProvider: ImageDataProvider {
    var cacheKey: String { return letter }
    let letter: String

    init(userNameFirstLetter: String) {
        self.letter = userNameFirstLetter
    }

    func data(handler: @escaping @Sendable (Result<Data, any Error>) -> Void) {
        let yellow = KFCrossPlatformColor.systemYellow.pixel
        let pixels = [UInt8]((0..<(250 * 250)).flatMap { _ in [yellow.red, yellow.green, yellow.blue, yellow.alpha] })
        let image = KFCrossPlatformImage(width: 250, height: 250, frames: [.init(pixels: pixels)])
        do {
            let data = try ImageCodecRegistry.shared.encode(image, as: .png)
            // Provide the image data in `handler`.
            handler(.success(data))
        } catch {
            handler(.failure(error))
        }
    }
}

/// Topic_Prefetch.md, "Prefetch some images".
private func prefetchSomeImages(urls: [URL]) -> ImagePrefetcher {
    let prefetcher = ImagePrefetcher(urls: urls) {
        skippedResources, failedResources, completedResources in
        print("These resources are prefetched: \(completedResources.map(\.downloadURL.lastPathComponent))")
    }
    prefetcher.start()
    return prefetcher
}

/// Topic_Retry.md, "DelayRetryStrategy" (the manager instead of a view).
private func retryFiveTimes(url: URL) {
    let retry = DelayRetryStrategy(
      maxRetryCount: 5,
      retryInterval: .seconds(3)
    )
    _ = DelayRetryStrategy(maxRetryCount: 5, retryInterval: .accumulated(3))
    KingfisherManager.shared.retrieveImage(with: url, options: [.retryStrategy(retry)]) { _ in print("retry done") }
}

// MARK: Kingfisher's tests

/// Tests/KingfisherTests/KingfisherOptionsInfoTests.swift:265, `TestRedirectHandler`, with a
/// `print` in its body (the test only passes the handler on).
final class TestRedirectHandler: ImageDownloadRedirectHandler {
    func handleHTTPRedirection(
        for task: Kingfisher.SessionDataTask, response: HTTPURLResponse, newRequest: URLRequest
    ) async -> URLRequest? {
        print("async \(task.originalURL?.lastPathComponent ?? "-") \(response.statusCode)")
        return newRequest
    }
}

/// The same handler with the module named `Alcedo.` where Kingfisher's code names `Kingfisher.`.
final class AlcedoQualifiedRedirectHandler: ImageDownloadRedirectHandler {
    func handleHTTPRedirection(
        for task: Alcedo.SessionDataTask, response: HTTPURLResponse, newRequest: URLRequest
    ) async -> URLRequest? {
        nil
    }
}

/// Kingfisher 7's callback form (Migration-To-8.md:69, "Old"), adding a header on the way.
final class CallbackRedirectHandler: ImageDownloadRedirectHandler {
    func handleHTTPRedirection(
        for task: Kingfisher.SessionDataTask,
        response: HTTPURLResponse,
        newRequest: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        var request = newRequest
        request.setValue("followed", forHTTPHeaderField: "X-Redirect")
        completionHandler(request)
    }
}

// Kingfisher's tests call its public API the way a user does; these are those calls, as
// written there (the `XCTAssert…` lines become the values the tests below check).

/// ImageExtensionTests.swift:33, `testImageFormat`.
private func testImageFormat(testImageJEPGData: Data, testImagePNGData: Data, testImageGIFData: Data) -> [ImageFormat] {
    var formats: [ImageFormat] = []
    var format: ImageFormat
    format = testImageJEPGData.kf.imageFormat
    formats.append(format)

    format = testImagePNGData.kf.imageFormat
    formats.append(format)

    format = testImageGIFData.kf.imageFormat
    formats.append(format)

    let raw: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
    format = Data(raw).kf.imageFormat
    formats.append(format)
    return formats
}

/// ImageExtensionTests.swift:136, `testResizing` (its `getRatio` checks as sizes).
private func testResizing(image: KFCrossPlatformImage) -> [PixelSize] {
    let targetSize = CGSize(width: 100, height: 50)

    let fillImage = image.kf.resize(to: targetSize, for: .aspectFill)
    let fitImage = image.kf.resize(to: targetSize, for: .aspectFit)
    let resizeImage = image.kf.resize(to: targetSize)
    return [fillImage.pixelSize, fitImage.pixelSize, resizeImage.pixelSize]
}

/// ImageExtensionTests.swift:81 and :259-305: encoders, frames, `decoded`, `normalized`, `scale`.
private func testImageHelpers(image: KFCrossPlatformImage, gifImage: KFCrossPlatformImage?) -> [String] {
    var lines: [String] = []
    let data = gifImage!.kf.gifRepresentation()
    lines.append("gif \(data?.kf.imageFormat == ImageFormat.GIF) frames \(gifImage!.kf.imageFrameCount!) \(gifImage!.kf.images!.count)")
    lines.append("png \(image.kf.pngRepresentation()?.kf.imageFormat == .PNG)")
    lines.append("jpeg \(image.kf.jpegRepresentation(compressionQuality: 0.8)?.kf.imageFormat == .JPEG)")
    lines.append("still \(image.kf.imageFrameCount == nil) \(image.kf.images == nil)")
    let decoded = image.kf.decoded
    let decodedDifferentScale = image.kf.decoded(scale: 2.0)
    lines.append("decoded \(decoded.size == image.size) \(decodedDifferentScale.size == image.size)")
    lines.append("normalized \(image.kf.normalized == image) scale \(image.kf.scale) \(image.kf.scaled(to: 2).size == image.size)")
    return lines
}

/// ImageDrawing's helpers as an app calls them on a downloaded image (Kingfisher's
/// `KingfisherWrapper<KFCrossPlatformImage>`): crop, round, blur, tint, overlay, border.
private func drawingHelpers(image: KFCrossPlatformImage) -> [KFCrossPlatformImage] {
    [
        image.kf.crop(to: CGSize(width: 10, height: 10), anchorOn: CGPoint(x: 0.5, y: 0.5)),
        image.kf.image(withRoundRadius: 5, fit: CGSize(width: 20, height: 20)),
        image.kf.blurred(withRadius: 3),
        image.kf.tinted(with: .red),
        image.kf.overlaying(with: .blue, fraction: 0.5),
        image.kf.addingBorder(Border(color: .green, lineWidth: 2)),
        image.kf.adjusted(brightness: 0.1, contrast: 1.1, saturation: 1.2, inputEV: 0),
    ]
}

/// ImageCacheTests.swift:92-105 and MemoryStorageTests.swift:58-66, the configuration calls.
private func testStorageConfig(cache: ImageCache) -> [String] {
    var lines: [String] = []
    cache.diskStorage.config.expiration = .seconds(1)
    lines.append("disk expiration \(cache.diskStorage.config.expiration.timeInterval)")
    cache.memoryStorage.config.totalCostLimit = 1
    lines.append("memory cost \(cache.memoryStorage.config.totalCostLimit == 1)")
    cache.diskStorage.config.sizeLimit = 1
    lines.append("disk size \(cache.diskStorage.config.sizeLimit == 1)")
    cache.memoryStorage.config.countLimit = 100
    lines.append("count \(cache.memoryStorage.config.countLimit)")
    return lines
}

/// How an app tells a connection failure and a cancellation apart, in Kingfisher's patterns
/// (its tests: ImageViewExtensionTests.swift:633 and :909, KingfisherError.swift's reasons).
private func describeFailure(_ error: KingfisherError) -> String {
    switch error {
    case .responseError(reason: .URLSessionError(let error)):
        return "session error: \(error.localizedDescription)"
    case .requestError(reason: .taskCancelled(task: let task, token: let token)):
        return "cancelled \(task.originalURL?.lastPathComponent ?? "-") token \(token)"
    default:
        return "other: \(error)"
    }
}

/// An exhaustive switch over Kingfisher's five cases, as an app writes it.
private func stage(of error: KingfisherError) -> String {
    switch error {
    case .requestError(let reason): return "request \(reason)"
    case .responseError(let reason): return "response \(reason)"
    case .cacheError(let reason): return "cache \(reason)"
    case .processorError(let reason): return "processor \(reason)"
    case .imageSettingError(let reason): return "setting \(reason)"
    }
}

// MARK: The tests

@Suite("Kingfisher's documented snippets", .serialized)
struct KingfisherDocSnippetTests {
    @Test func gettingAnImageAndTheCompletionHandler() async throws {
        try await withPipeline { h in
            clearPrinted()
            h.server.route("/doc-a.jpg", .ok(TestImages.jpeg(width: 40, height: 30)))
            let url = h.server.url("/doc-a.jpg")
            getAnImageWithoutUI(url: url)
            #expect(await eventually { printedLines().contains("retrieved: 40x30") })
            completionHandler(url: url)
            #expect(await eventually { printedLines().count == 4 })
            let lines = printedLines()
            // `print(value.image)` is one short line, never the pixels.
            #expect(lines[1].hasPrefix("AlcedoImage(40x30, jpeg, 1 frame"))
            #expect(lines[1].count < 100)
            #expect(lines[2] == "memory")
            #expect(lines[3].contains("doc-a.jpg"))
        }
    }

    @Test func readmeCompletionPrintsTheReason() async throws {
        try await withPipeline { h in
            clearPrinted()
            h.server.route("/doc-ok.jpg", .ok(TestImages.jpeg(width: 300, height: 300)))
            h.server.route("/doc-404.jpg", .status(404))
            let processor = DownsamplingImageProcessor(size: CGSize(width: 50, height: 50)) |> RoundCornerImageProcessor(cornerRadius: 20)
            readmeCompletion(url: h.server.url("/doc-ok.jpg"), processor: processor)
            #expect(await eventually { printedLines().count == 1 })
            #expect(printedLines() == ["Task done for: \(h.server.url("/doc-ok.jpg").absoluteString)"])
            readmeCompletion(url: h.server.url("/doc-404.jpg"), processor: processor)
            #expect(await eventually { printedLines().count == 2 })
            #expect(printedLines()[1] == "Job failed: response error: unacceptable status code 404 from \(h.server.url("/doc-404.jpg").absoluteString)")
        }
    }

    @Test func cacheQueriesAsTheCacheTaskPageWritesThem() async throws {
        try await withPipeline { h in
            clearPrinted()
            h.server.route("/doc-c.png", .ok(TestImages.jpeg(width: 8, height: 8)))
            let url = h.server.url("/doc-c.png")
            let cacheKey = url.cacheKey
            #expect(checkingTheCache(cacheKey: cacheKey) == (false, .none))
            _ = try await KingfisherManager.shared.retrieveImage(with: url, options: [.waitForCache])
            #expect(checkingTheCache(cacheKey: cacheKey) == (true, .memory))
            ImageCache.default.clearMemoryCache()
            #expect(await cachedTypeAsyncAwait(cache: .default, cacheKey: cacheKey) == .disk)
            cachedTypeAsyncCallback(cache: .default, cacheKey: cacheKey)
            #expect(await eventually { printedLines() == ["async type: disk"] })
            #expect(try await processedEntry(cache: h.cache, url: url, cacheKey: cacheKey))
            try? await ImageCache.default.removeImage(forKey: cacheKey)
        }
    }

    @Test func gettingFromTheCacheAndStoringByHand() async throws {
        let folder = try TemporaryDirectory()
        let cache = ImageCache(name: "doc", cacheDirectoryURL: folder.url)
        clearPrinted()
        gettingFromTheCache(cache: cache)
        #expect(await eventually { printedLines().count == 2 })
        #expect(printedLines() == ["none", "nil"])

        let image = TestImages.image(width: 6, height: 4)
        let data = TestImages.jpeg(width: 6, height: 4)
        storeManually(cache: cache, image: image, data: data, cacheKey: "cacheKey")
        clearPrinted()
        gettingFromTheCache(cache: cache)
        #expect(await eventually { printedLines().count == 2 })
        #expect(printedLines()[0] == "memory")
        #expect(printedLines()[1].hasPrefix("Optional(AlcedoImage(6x4,"))
        #expect(cache.isCached(forKey: "cacheKey-with-data"))
    }

    @Test func limitsRemovalAndClearing() async throws {
        let folder = try TemporaryDirectory()
        let cache = ImageCache(name: "doc", cacheDirectoryURL: folder.url)
        limitsAndExpiration(cache: cache)
        #expect(cache.memoryStorage.config.totalCostLimit == 300 * 1024 * 1024)
        #expect(cache.memoryStorage.config.countLimit == 150)
        #expect(cache.diskStorage.config.sizeLimit == 1000 * 1024 * 1024)
        #expect(cache.memoryStorage.config.cleanInterval == 30)

        clearPrinted()
        let processor = RoundCornerImageProcessor(cornerRadius: 20)
        try await cache.store(TestImages.image(width: 3, height: 3), forKey: "k")
        try await cache.store(TestImages.image(width: 3, height: 3), forKey: "k", processorIdentifier: processor.identifier)
        removeManually(cache: cache, cacheKey: "k", processor: processor)
        #expect(await eventually { printedLines() == ["Removed!"] })
        #expect(await eventually { cache.imageCachedType(forKey: "k") == .none })
        // Removed from disk only: still in memory.
        #expect(cache.imageCachedType(forKey: "k", processorIdentifier: processor.identifier) == .memory)

        clearTheCache(cache: cache)
        #expect(await eventually { printedLines().count == 3 })
        #expect(printedLines().dropFirst() == ["Done", "Done"])
        #expect(!cache.isCached(forKey: "k", processorIdentifier: processor.identifier))

        reportTheDiskSize()
        #expect(await eventually { printedLines().count == 4 })
        #expect(printedLines()[3].hasPrefix("Disk cache size: "))
    }

    @Test func ownCacheOnlyFromCacheAndWaitForCache() async throws {
        try await withPipeline { h in
            clearPrinted()
            h.server.route("/doc-w.jpg", .ok(TestImages.jpeg(width: 5, height: 5)))
            h.server.route("/doc-never.jpg", .ok(TestImages.jpeg()))
            let url = h.server.url("/doc-w.jpg")
            let cache = ownCache(url: url)
            #expect(await eventually { printedLines() == ["own cache done"] })
            #expect(cache.imageCachedType(forKey: url.cacheKey) == .memory)
            try? await cache.removeImage(forKey: url.cacheKey)

            onlyFromCache(url: h.server.url("/doc-never.jpg"))
            #expect(await eventually { printedLines().count == 2 })
            #expect(printedLines()[1] == "not existing: \(h.server.url("/doc-never.jpg").cacheKey)")
            #expect(h.server.requestCount("/doc-never.jpg") == 0)

            waitingForTheCache(url: url)
            #expect(await eventually { printedLines().count == 3 })
            #expect(printedLines()[2] == "on disk: true")
            try? await ImageCache.default.removeImage(forKey: url.cacheKey)
        }
    }

    @Test func downloaderTasks() async throws {
        try await withPipeline { h in
            clearPrinted()
            h.server.route("/doc-d.jpg", .ok(TestImages.jpeg(width: 12, height: 10)))
            h.server.route("/doc-slow.jpg", .ok(TestImages.jpeg()))
            h.server.hold("/doc-slow.jpg")
            downloadManually(url: h.server.url("/doc-d.jpg"))
            #expect(await eventually { printedLines().count == 1 })
            #expect(printedLines()[0].hasPrefix("AlcedoImage(12x10, jpeg"))

            modifyARequest(downloader: h.downloader, url: h.server.url("/doc-d.jpg"))
            #expect(await eventually { printedLines().count == 2 })
            #expect(printedLines()[1] == "modified download: true")
            #expect(h.server.requests("/doc-d.jpg").last?.headers["Access-Token"] == ["abc"])

            cancelADownload(downloader: h.downloader, url: h.server.url("/doc-slow.jpg"))
            #expect(await eventually { printedLines().count == 3 })
            #expect(printedLines()[2] == "true")
            h.server.release("/doc-slow.jpg")
        }
    }

    @Test func asyncModifierIsToldOfTheTask() async throws {
        try await withPipeline { h in
            clearPrinted()
            h.server.route("/doc-async.jpg", .ok(TestImages.jpeg()))
            asyncModifierStarted(url: h.server.url("/doc-async.jpg"))
            #expect(await eventually { printedLines().count == 2 })
            #expect(printedLines() == ["A download task started: doc-async.jpg", "async modified"])
            #expect(h.server.requests("/doc-async.jpg").first?.headers["X-Async"] == ["async"])
            try? await ImageCache.default.removeImage(forKey: h.server.url("/doc-async.jpg").cacheKey)
        }
    }

    @Test func perRequestTimeoutOverridesTheDownloaders() async throws {
        try await withPipeline { h in
            h.server.route("/doc-t.jpg", .ok(TestImages.jpeg()))
            timeouts(downloader: h.downloader, url: h.server.url("/doc-t.jpg"))
            #expect(h.downloader.downloadTimeout == 60)
            #expect(await eventually { h.server.requestCount("/doc-t.jpg") == 1 })

            // A modifier's shorter timeout wins over the downloader's 60 s.
            h.server.route("/doc-stall.jpg", .ok(TestImages.jpeg()))
            h.server.hold("/doc-stall.jpg")
            let short = AnyModifier { request in
                var r = request
                r.timeoutInterval = 0.2
                return r
            }
            do {
                _ = try await h.downloader.downloadImage(with: h.server.url("/doc-stall.jpg"), options: [.requestModifier(short)])
                Issue.record("expected a timeout")
            } catch {
                guard case .responseError(reason: .URLSessionError(NetworkErrorReason.timedOut(_, let limit))) = error as? KingfisherError else {
                    Issue.record("expected a timeout, got \(error)")
                    return
                }
                #expect(limit < .seconds(1))
            }
            h.server.release("/doc-stall.jpg")
        }
    }

    @Test func builtInProcessorsRun() async throws {
        let image = TestImages.image(width: 200, height: 160)
        let processors = builtInProcessors()
        #expect(processors.count == 2)
        for processor in processors {
            let output = try processor.process(image)
            #expect(output.width > 0, "\(processor.identifier)")
        }
        // Colours reach the processors as UIColor's values.
        #expect(TintImageProcessor(tint: .blue).tint == RGBA(red: 0, green: 0, blue: 255))
        #expect(OverlayImageProcessor(overlay: .red, fraction: 0.7).overlay == RGBA(red: 255, green: 0, blue: 0))
        #expect(KFCrossPlatformColor.systemBlue.withAlphaComponent(0.5).pixel == RGBA(red: 0, green: 122, blue: 255, alpha: 128))
        #expect(KFCrossPlatformColor(white: 0.5, alpha: 1).pixel == RGBA(red: 128, green: 128, blue: 128))
        #expect(KFCrossPlatformColor(red: 1, green: 0, blue: 0, alpha: 1) == .red)
        let border = BorderImageProcessor(border: .init(color: .red, lineWidth: 2))
        #expect(border.lineWidth == 2 && border.color == RGBA(red: 255, green: 0, blue: 0))
        #expect(border.identifier == BorderImageProcessor(border: 2, color: RGBA(red: 255, green: 0, blue: 0)).identifier)
    }

    @Test func customProcessorInKingfishersShape() async throws {
        try await withPipeline { h in
            clearPrinted()
            h.server.route("/my_image.png", .ok(TestImages.jpeg(width: 40, height: 40)))
            useMyProcessor(url: h.server.url("/my_image.png"))
            #expect(await eventually { printedLines() == ["my processor: 10x10"] })
            // Alcedo's own shape still works on the same processor.
            #expect((try? MyProcessor(someValue: 4).process(TestImages.image(width: 9, height: 9)))?.size == CGSize(width: 4, height: 4))
            // `nil` is Kingfisher's processingFailed.
            do throws(AlcedoError) {
                _ = try MyProcessor(someValue: -1).process(TestImages.image(width: 2, height: 2))
                Issue.record("expected a failure")
            } catch {
                guard case .processorError(reason: .processingFailed(let processor, let item)) = error else {
                    Issue.record("\(error)")
                    return
                }
                #expect(processor.identifier == "com.yourdomain.myprocessor--1")
                #expect(item == .image(TestImages.image(width: 2, height: 2)))
            }
            // The data branch is reachable by calling it.
            let fromData = MyProcessor(someValue: 3).process(item: .data(TestImages.jpeg()), options: .init(nil))
            #expect(fromData?.size == CGSize(width: 16, height: 12))
            try? await ImageCache.default.removeImage(forKey: h.server.url("/my_image.png").cacheKey)
        }
    }

    @Test func serializersAsTheSerializerPageWritesThem() async throws {
        try await withPipeline { h in
            h.server.route("/example.png", .ok(TestImages.jpeg(width: 20, height: 20)))
            let url = h.server.url("/example.png")
            // The default serializer, by name; then the PNG serializer when rounding corners.
            _ = try await h.manager.retrieveImage(with: url, options: [.cacheSerializer(DefaultCacheSerializer.default), .waitForCache])
            let roundCorner = RoundCornerImageProcessor(cornerRadius: 20)
            _ = try await h.manager.retrieveImage(with: url, options: [.processor(roundCorner),
                                                                       .cacheSerializer(FormatIndicatedCacheSerializer.png),
                                                                       .waitForCache])
            let stored = try await h.cache.retrieveDataInDiskCache(forKey: url.cacheKey, processorIdentifier: roundCorner.identifier)
            #expect(stored.map { ImageFormat.sniff($0.data) } == .png)

            // A serializer written in Kingfisher's shape.
            let serializer = MyCacheSerializer()
            h.cache.clearMemoryCache()
            let custom = try await h.manager.retrieveImage(with: url, options: [.cacheSerializer(serializer), .forceRefresh, .waitForCache])
            #expect(custom.image.size == CGSize(width: 20, height: 20))
            h.cache.clearMemoryCache()
            let fromDisk = try await h.manager.retrieveImage(with: url, options: [.cacheSerializer(serializer)])
            #expect(fromDisk.cacheType == .disk)
            // And its `nil` reported as Kingfisher's reason.
            let bytes: Data? = serializer.data(with: TestImages.image(width: 2, height: 2), original: nil)
            #expect(bytes.map(ImageFormat.sniff) == .png)

            // `serialize(as: .PNG)` on the builder.
            h.server.route("/kf.jpg", .ok(TestImages.jpeg(width: 10, height: 10)))
            let result = try await KF.url(h.server.url("/kf.jpg")).serialize(as: .PNG).targetCache(h.cache)
                .downloader(h.downloader).waitForCache().setProcessor(roundCorner).retrieve()
            #expect(result.image.size == CGSize(width: 10, height: 10))
            let kfStored = try await h.cache.retrieveDataInDiskCache(forKey: h.server.url("/kf.jpg").cacheKey,
                                                                     processorIdentifier: roundCorner.identifier)
            #expect(kfStored.map { ImageFormat.sniff($0.data) } == .png)
        }
    }

    @Test func dataProvidersAsTheTopicWritesThem() async throws {
        try await withPipeline { h in
            let path = h.folder.url.appendingPathComponent("local.jpg").path
            try TestImages.jpeg(width: 7, height: 5).write(to: URL(fileURLWithPath: path))
            let url = URL(fileURLWithPath: path)
            let provider = LocalFileImageDataProvider(fileURL: url)
            let processor = RoundCornerImageProcessor(cornerRadius: 20)
            let local = try await h.manager.retrieveImage(with: .provider(provider), options: [.processor(processor)])
            #expect(local.image.size == CGSize(width: 7, height: 5))

            let base64 = Base64ImageDataProvider(base64String: TestImages.jpeg(width: 3, height: 3).base64EncodedString(),
                                                 cacheKey: "some-cache-key")
            #expect(try await h.manager.retrieveImage(with: .provider(base64)).image.size == CGSize(width: 3, height: 3))

            // Set image for user "John"
            let letter = UserNameLetterIconImageProvider(userNameFirstLetter: "J")
            let john = try await h.manager.retrieveImage(
                with: .provider(letter),
                options: [.processor(RoundCornerImageProcessor(radius: .point(75)))]
            )
            #expect(john.image.size == CGSize(width: 250, height: 250))
            #expect(h.cache.isCached(forKey: "J", processorIdentifier: RoundCornerImageProcessor(radius: .point(75)).identifier))
            // The corner is transparent, the centre the provider's yellow.
            #expect(john.image.pixel(x: 0, y: 0).alpha == 0)
            #expect(john.image.pixel(x: 125, y: 125) == KFCrossPlatformColor.systemYellow.pixel)
        }
    }

    @Test func prefetchingAsTheTopicWritesIt() async throws {
        try await withPipeline { h in
            clearPrinted()
            h.server.route("/image1.jpg", .ok(TestImages.jpeg(seed: 1)))
            h.server.route("/image2.jpg", .ok(TestImages.jpeg(seed: 2)))
            let urls = [
                "/image1.jpg",
                "/image2.jpg"
            ].map { h.server.url($0) }
            let prefetcher = prefetchSomeImages(urls: urls)
            #expect(await eventually { printedLines().count == 1 })
            #expect(printedLines() == [#"These resources are prefetched: ["image1.jpg", "image2.jpg"]"#]
                    || printedLines() == [#"These resources are prefetched: ["image2.jpg", "image1.jpg"]"#])
            #expect(prefetcher.result.completed.count == 2)
            ImagePrefetcher(urls: urls).start()
            for url in urls { try? await ImageCache.default.removeImage(forKey: url.cacheKey) }
        }
    }

    @Test func retryStrategyAsTheTopicWritesIt() async throws {
        try await withPipeline { h in
            clearPrinted()
            h.server.route("/doc-r.jpg", sequence: [.status(503), .ok(TestImages.jpeg())])
            // A 503, then the image after the 3 s the page's strategy waits.
            retryFiveTimes(url: h.server.url("/doc-r.jpg"))
            #expect(await eventually { printedLines() == ["retry done"] })
            #expect(h.server.requestCount("/doc-r.jpg") == 2)
            try? await ImageCache.default.removeImage(forKey: h.server.url("/doc-r.jpg").cacheKey)
        }
    }

    @Test func cancelledTaskAndStatusCodeHelpers() async throws {
        try await withPipeline { h in
            h.server.route("/doc-404b.jpg", .status(404))
            do {
                _ = try await h.manager.retrieveImage(with: h.server.url("/doc-404b.jpg"))
            } catch let error as KingfisherError {
                #expect(error.isInvalidResponseStatusCode(404))
                #expect(!error.isInvalidResponseStatusCode(500))
                #expect(!error.isTaskCancelled)
                #expect(error.errorCode == 2002)
                #expect(stage(of: error).hasPrefix("response "))
            }
        }
    }

    /// `.processingQueue(.dispatch(q))` runs the processor on `q`.
    @Test func processingQueueRunsTheProcessorThere() async throws {
        struct QueueProbe: ImageProcessor {
            let seen: Collected<String>
            let queue: DispatchQueue
            var identifier: String { "test.queue-probe" }
            func process(item: ImageProcessItem, options: KingfisherParsedOptionsInfo) -> KFCrossPlatformImage? {
                // Traps (failing the run) when the processor runs anywhere else.
                dispatchPrecondition(condition: .onQueue(queue))
                seen.append(queue.label)
                if case .image(let image) = item { return image }
                return nil
            }
        }
        try await withPipeline { h in
            h.server.route("/pq.jpg", .ok(TestImages.jpeg()))
            let seen = Collected<String>()
            let q = DispatchQueue(label: "doc.processing-queue")
            let result = try await h.manager.retrieveImage(with: h.server.url("/pq.jpg"),
                                                           options: [.processor(QueueProbe(seen: seen, queue: q)), .processingQueue(.dispatch(q))])
            #expect(result.image.size == CGSize(width: 16, height: 12))
            #expect(seen.values == ["doc.processing-queue"])
        }
    }

    /// Every reason's description and `localizedDescription` is its one line.
    @Test func reasonsReadTheSameThroughLocalizedDescription() {
        let url = URL(string: "https://example.com/a.jpg")!
        let response = DownloadResponse(url: url, originalURL: url, statusCode: 404, headers: [:], cacheInfo: HTTPCacheInfo(headers: [:]))
        let errors: [KingfisherError] = [
            .requestError(reason: .emptyRequest), .requestError(reason: .invalidURL("x")),
            .requestError(reason: .cancelled), .requestError(reason: .localFileNotAllowed(url)),
            .networkError(reason: .connectTimedOut(url, limit: .seconds(1))), .networkError(reason: .timedOut(url, limit: .seconds(2))),
            .requestError(reason: .redirectLoop(url)), .requestError(reason: .tooManyRedirects(url, limit: 3)),
            .requestError(reason: .invalidRedirect(url, location: nil)), .networkError(reason: .connectionRefused(url)),
            .networkError(reason: .hostUnreachable(url)), .networkError(reason: .dnsFailure(url, host: "example.com")),
            .networkError(reason: .tlsFailure(url, message: "bad cert")), .networkError(reason: .connectionReset(url)),
            .networkError(reason: .networkFailure(url, underlying: CancellationError())),
            .responseError(reason: .invalidHTTPStatusCode(response: response)),
            .responseError(reason: .bodyTooLarge(url, limit: 10, received: 11)),
            .responseError(reason: .lengthMismatch(url, expected: 10, received: 5)),
            .responseError(reason: .rejected(url, message: "no")),
            .cacheError(reason: .imageNotExisting(key: "k")),
            .cacheError(reason: .cannotSerializeImage(image: nil, original: nil, serializer: MyCacheSerializer())),
            .cacheError(reason: .diskFull(path: "/x", errno: 28)), .cacheError(reason: .corruptEntry(path: "/x", reason: "bad")),
            .processorError(reason: .processingFailed(processor: MyProcessor(someValue: 1), item: .data(Data([1, 2])))),
            .processorError(reason: .invalidParameter(processor: "BlurImageProcessor", message: "radius -1")),
            .decodingError(reason: .truncated(format: .jpeg, message: "cut")),
            .encodingError(reason: .invalidQuality(0)),
            .imageSettingError(reason: .emptySource),
            .imageSettingError(reason: .dataProviderError(provider: LocalFileImageDataProvider(fileURL: url),
                                                          error: ImageSettingErrorReason.DataProviderFailure.fileNotFound(url))),
            .imageSettingError(reason: .dataProviderError(provider: RawImageDataProvider(data: Data(), cacheKey: "k"), error: CancellationError())),
        ]
        var codes = [Int]()
        for error in errors {
            #expect(!error.description.isEmpty)
            #expect(!error.description.contains("\n"))
            #expect(error.localizedDescription == error.description)
            #expect((error as any Error).localizedDescription == error.description)
            #expect(error.errorDescription == error.description)
            codes.append(error.errorCode)
        }
        // Kingfisher's codes: Alcedo's detail lives inside Kingfisher's cases, so it shares their numbers.
        #expect(codes == [1001, 1002, 1003, 1002, 2003, 2003, 1002, 1002, 1002, 2003, 2003, 2003, 2003, 2003, 2003,
                          2002, 2001, 2001, 2001, 3006, 3008, 3009, 3004, 4001, 4001, 4001, 4001, 5001, 5003, 5003])
        #expect(KingfisherError.requestError(reason: .cancelled).isTaskCancelled)
        #expect(KingfisherError.decodingError(reason: .emptyData).decodingReason == .emptyData)
        #expect(KingfisherError.decodingError(reason: .emptyData).description == "decoding error: no data to decode")
        #expect(String(reflecting: KingfisherError.decodingError(reason: .emptyData))
                    == "AlcedoError.processorError(.processingFailed(.decodingFailed)): decoding error: no data to decode")
        #expect(KingfisherError.processorError(reason: .processingFailed(processor: MyProcessor(someValue: 1), item: .data(Data([1, 2]))))
                    .description == "processor error: com.yourdomain.myprocessor-1 gave no image for data (2 bytes, not an image: bytes 01 02)")
    }

    /// `print` and `dump` of an image are short.
    @Test func imagesPrintAsOneLine() {
        let image = AlcedoImage(width: 1200, height: 900, frames: [.init(pixels: [UInt8](repeating: 7, count: 1200 * 900 * 4))])
        #expect(image.description == "AlcedoImage(1200x900, unknown, 1 frame, sRGB)")
        #expect(String(reflecting: image) == image.description)
        var dumped = ""
        dump(image, to: &dumped)
        #expect(dumped.count < 2_000)
        #expect(image.frames[0].description == "Frame(4320000 bytes)")
    }

    /// The calls of Kingfisher's tests on images, data and cache configuration.
    @Test func kingfishersTestCallsOnImagesAndStorage() async throws {
        let jpeg = try ImageCodecRegistry.shared.encode(TestImages.image(width: 8, height: 8), as: .jpeg)
        let png = try ImageCodecRegistry.shared.encode(TestImages.image(width: 8, height: 8), as: .png)
        let frames = (0..<8).map { AlcedoImage.Frame(pixels: TestImages.image(width: 8, height: 8, seed: $0).pixels, duration: 0.1) }
        let animated = AlcedoImage(width: 8, height: 8, frames: frames, sourceFormat: .gif)
        let gif = try ImageCodecRegistry.shared.encode(animated, as: .gif)
        #expect(testImageFormat(testImageJEPGData: jpeg, testImagePNGData: png, testImageGIFData: gif) == [.JPEG, .PNG, .GIF, .unknown])

        let image = TestImages.image(width: 200, height: 200)
        #expect(testResizing(image: image) == [PixelSize(width: 100, height: 100), PixelSize(width: 50, height: 50),
                                                PixelSize(width: 100, height: 50)])

        let gifImage = KingfisherWrapper<KFCrossPlatformImage>.image(data: gif, options: ImageCreatingOptions())
        #expect(gifImage?.kf.duration ?? 0 > 0.79)
        #expect(KingfisherWrapper<KFCrossPlatformImage>.image(data: gif, options: ImageCreatingOptions(onlyFirstFrame: true))?
                    .frames.count == 1)
        #expect(testImageHelpers(image: image, gifImage: gifImage) == [
            "gif true frames 8 8", "png true", "jpeg true", "still true true", "decoded true true",
            "normalized true scale 1.0 false",
        ])
        let drawn = drawingHelpers(image: image)
        #expect(drawn[0].size == CGSize(width: 10, height: 10))
        #expect(drawn[1].size == CGSize(width: 20, height: 20))
        #expect(drawn.dropFirst(2).allSatisfy { $0.size == image.size && $0 != image })
        #expect(KingfisherWrapper<KFCrossPlatformImage>.downsampledImage(data: png, to: CGSize(width: 4, height: 4), scale: 1)?.size
                    == CGSize(width: 4, height: 4))

        let folder = try TemporaryDirectory()
        let cache = ImageCache(name: "kf-tests", cacheDirectoryURL: folder.url)
        #expect(testStorageConfig(cache: cache) == ["disk expiration 1.0", "memory cost true", "disk size true", "count 100"])
    }

    /// A refused connection is Kingfisher's `.responseError(reason: .URLSessionError(error:))`.
    @Test func transportFailureIsAURLSessionError() async throws {
        try await withPipeline { h in
            let (refusing, port) = try LoopbackPort.refusing()
            defer { close(refusing) }
            let url = URL(string: "http://127.0.0.1:\(port)/refused.jpg")!
            do {
                _ = try await h.manager.retrieveImage(with: url)
                Issue.record("a refused connection succeeded")
            } catch let error as KingfisherError {
                #expect(describeFailure(error) == "session error: connection refused by 127.0.0.1:\(port) (\(url.absoluteString))")
                if case .responseError(let reason) = error, case .URLSessionError(error: let sessionError) = reason {
                    #expect(sessionError is NetworkErrorReason)
                } else {
                    Issue.record("not a URLSessionError: \(error)")
                }
                guard case .responseError(reason: .URLSessionError(NetworkErrorReason.connectionRefused(let failed))) = error else {
                    Issue.record("not connectionRefused: \(error)")
                    return
                }
                #expect(failed == url)
                #expect(error.networkReason?.url == url)
                #expect(error.isConnectionFailure)
                #expect(error.errorCode == 2003)
                #expect(stage(of: error).hasPrefix("response "))
            }
        }
    }

    /// A cancelled download binds Kingfisher's task and token.
    @Test func cancelledDownloadBindsTaskAndToken() async throws {
        try await withPipeline { h in
            h.server.hold("/held.jpg")
            h.server.route("/held.jpg", .ok(TestImages.jpeg()))
            let url = h.server.url("/held.jpg")
            let failures = Collected<String>()
            let task = h.manager.retrieveImage(with: url) { result in
                if case .failure(let error) = result { failures.append(describeFailure(error)) }
            }
            #expect(await eventually { h.server.requestCount("/held.jpg") == 1 })
            task?.cancel()
            #expect(await eventually { failures.values.count == 1 })
            let line = try #require(failures.values.first)
            #expect(line.hasPrefix("cancelled held.jpg token "))
            h.server.release("/held.jpg")

            // The downloader's own task reports the same.
            h.server.hold("/held2.jpg")
            h.server.route("/held2.jpg", .ok(TestImages.jpeg()))
            let errors = Collected<KingfisherError>()
            let download = h.downloader.downloadImage(with: h.server.url("/held2.jpg")) { result in
                if case .failure(let error) = result { errors.append(error) }
            }
            #expect(await eventually { h.server.requestCount("/held2.jpg") == 1 })
            download.cancel()
            #expect(await eventually { errors.values.count == 1 })
            let error = try #require(errors.values.first)
            guard case .requestError(reason: .taskCancelled(task: let sessionTask, token: let token)) = error else {
                Issue.record("not taskCancelled: \(error)")
                return
            }
            #expect(sessionTask.originalURL == h.server.url("/held2.jpg"))
            #expect(token > 0)
            #expect(error.isTaskCancelled)
            if case .requestError(reason: .cancelled) = error {} else { Issue.record("`.cancelled` does not match") }
            #expect(error.description == "request error: cancelled")
            h.server.release("/held2.jpg")
        }
    }

    /// Redirect handlers in Kingfisher's protocol shapes, through a real redirect.
    @Test func redirectHandlersInKingfishersProtocolShape() async throws {
        try await withPipeline { h in
            clearPrinted()
            h.server.route("/moved.jpg", .redirect(to: "/here.jpg", status: 301))
            h.server.route("/here.jpg", .ok(TestImages.jpeg(width: 5, height: 4)))
            let url = h.server.url("/moved.jpg")
            let followed = try await h.manager.retrieveImage(with: url, options: [.redirectHandler(TestRedirectHandler())])
            #expect(followed.image.size == CGSize(width: 5, height: 4))
            #expect(printedLines() == ["async moved.jpg 301"])

            // `nil` stops: the 301 is then an unacceptable status.
            await #expect(throws: KingfisherError.self) {
                _ = try await h.manager.retrieveImage(with: url, options: [.redirectHandler(AlcedoQualifiedRedirectHandler()),
                                                                           .forceRefresh])
            }
            let stopped = try? await h.manager.retrieveImage(with: url, options: [.redirectHandler(AlcedoQualifiedRedirectHandler()),
                                                                                  .forceRefresh])
            #expect(stopped == nil)

            // The callback form's request (with its header) is the one followed.
            _ = try await h.manager.retrieveImage(with: url, options: [.redirectHandler(CallbackRedirectHandler()), .forceRefresh])
            #expect(h.server.requests("/here.jpg").last?.headers.first(name: "X-Redirect") == "followed")

            // Each form can be called through the others.
            let response = DownloadResponse(url: url, originalURL: url, statusCode: 302, headers: HTTPHeaderFields(),
                                            cacheInfo: HTTPCacheInfo(headers: HTTPHeaderFields()))
            let next = DownloadRequest(url: h.server.url("/here.jpg"))
            let viaAlcedo = await CallbackRedirectHandler().handleRedirect(response: response, newRequest: next)
            #expect(viaAlcedo?.value(forHTTPHeaderField: "X-Redirect") == "followed")
            let viaCallback = await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
                TestRedirectHandler().handleHTTPRedirection(for: SessionDataTask(originalURL: url), response: response,
                                                            newRequest: next) { continuation.resume(returning: $0?.url.path) }
            }
            #expect(viaCallback == "/here.jpg")
        }
    }

    /// The builder's fire-and-forget ending, and a redirect handler in Kingfisher's shape.
    @Test func builderStartAndCallbackRedirectHandler() async throws {
        try await withPipeline { h in
            clearPrinted()
            h.server.route("/old.jpg", .redirect(to: "/new.jpg"))
            h.server.route("/new.jpg", .ok(TestImages.jpeg(width: 9, height: 7)))
            let handler = AnyRedirectHandler { task, response, newRequest, completionHandler in
                print("redirect \(task.originalURL?.lastPathComponent ?? "-") \(response.statusCode) -> \(newRequest.url.lastPathComponent)")
                completionHandler(newRequest)
            }
            KF.url(h.server.url("/old.jpg"))
                .redirectHandler(handler)
                .targetCache(h.cache)
                .downloader(h.downloader)
                .onSuccess { result in print("success \(result.image.pixelSize)") }
                .onFailure { error in print("failure \(error)") }
                .start()
            #expect(await eventually { printedLines().count == 2 })
            #expect(printedLines() == ["redirect old.jpg 302 -> new.jpg", "success 9x7"])

            KF.url(nil).onFailure { error in print("no source: \(error.localizedDescription)") }.start()
            #expect(await eventually { printedLines().count == 3 })
            #expect(printedLines()[2] == "no source: image setting error: no source to load")
        }
    }
}
