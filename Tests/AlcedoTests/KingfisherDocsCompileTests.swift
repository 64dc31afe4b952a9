import Foundation
import Synchronization
import Testing
import Alcedo

// Every Swift code block of Kingfisher 8.11's README.md and DocC pages (Sources/Documentation.docc:
// CommonTasks*.md, Topics, the migration guide, the changelog) and the non-UI lines of its
// tutorial, in page order, against `import Alcedo` only. 92 fenced blocks were found; each is
// listed below with its page and line, and with what became of it:
//
// - verbatim: the block's lines, unchanged, as the body of a function whose parameters are the
//   names the page leaves free (`url`, `cache`, `processor`, `imageView`…). An `imageView` is an
//   ``ImageDisplaying`` target of this file (`DocImageView`), the stand-in for `UIImageView`
//   that a Linux program has: `imageView.kf.setImage(…)` is Kingfisher's call on it.
// - fixed: the block does not compile with Kingfisher 8 either (a placeholder that is not
//   Swift, a line the page lost, an old API); the function has the smallest change that
//   makes it valid Swift, named in its comment.
// - UI: the block needs UIKit, AppKit, SwiftUI, Photos, Core Image, AVFoundation or
//   `URLSession`'s authentication types, which Linux does not have; not here.
//
// Count (kept in the "Coming from Kingfisher" article): of the 92 blocks, 25 need a UI or
// Apple-only framework, 3 are Kingfisher's own declaration (#66) or its pre-8 API shown as
// "Old" in the migration guide (#61, #63), and 1 (#47) is a fragment of #48. Of the other 63
// (non-UI code a user writes): 45 compile verbatim (#60, the redirect handler written with
// `Kingfisher.SessionDataTask` and `HTTPURLResponse`, among them); 17 do not compile with
// Kingfisher 8 either (errors of the pages) and compile here with the smallest fix, named in
// their comment; 1 (#59, Kingfisher 7's redirect handler) only has its type renamed, as this
// file already has the page's `YourType`. None fails to
// compile. The tests at the bottom check what the pages say the code does, against a real
// HTTP server on 127.0.0.1 and real cache folders.
//
// `print` is the pages' way of showing a result: in this file it records the line, so that the
// tests can read what the blocks printed.

private let printed = Mutex<[String]>([])

private func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    let line = items.map { "\($0)" }.joined(separator: separator)
    printed.withLock { $0.append(line) }
}

private func printedLines() -> [String] { printed.withLock { $0 } }

private func clearPrinted() { printed.withLock { $0.removeAll() } }

/// The `imageView` of the pages: a target that shows images, with no UI toolkit.
private final class DocImageView: ImageDisplaying {
    let imageBinding = ImageBinding()
    private let shown = Mutex<KFCrossPlatformImage?>(nil)
    func display(_ image: KFCrossPlatformImage?) { shown.withLock { $0 = image } }
    var image: KFCrossPlatformImage? { shown.withLock { $0 } }
}

// MARK: README.md

// #2 README.md:51 (SwiftUI `KFImage`), #3 README.md:69 (`imageView.bounds`, `indicatorType`,
// `UIImage(named:)`, `UIScreen`), #5 README.md:138 (SwiftUI): UI.

/// #1 README.md:39, verbatim (after the `import Kingfisher` line, which is the one replaced).
private func readme39(imageView: DocImageView) {
    let url = URL(string: "https://example.com/image.png")
    imageView.kf.setImage(with: url)
}

/// #4 README.md:102, verbatim.
private func readme102(imageView: DocImageView, url: URL, placeholderImage: KFCrossPlatformImage,
                       processor: any ImageProcessor, lowResolutionURL: URL) {
    // Use `kf` extension
    imageView.kf.setImage(
        with: url,
        placeholder: placeholderImage,
        options: [
            .processor(processor),
            .loadDiskFileSynchronously,
            .cacheOriginalImage,
            .transition(.fade(0.25)),
            .lowDataMode(.network(lowResolutionURL))
        ],
        progressBlock: { receivedSize, totalSize in
            // Progress updated
        },
        completionHandler: { result in
            // Done
        }
    )

    // Use `KF` builder
    KF.url(url)
      .placeholder(placeholderImage)
      .setProcessor(processor)
      .loadDiskFileSynchronously()
      .cacheMemoryOnly()
      .fade(duration: 0.25)
      .lowDataModeSource(.network(lowResolutionURL))
      .onProgress { receivedSize, totalSize in  }
      .onSuccess { result in  }
      .onFailure { error in }
      .set(to: imageView)
}

// MARK: CHANGELOG.md

/// #6 CHANGELOG.md:694, verbatim (Kingfisher 6.0's old and new ways).
private func changelog694(imageView: DocImageView, url: URL, localImage: KFCrossPlatformImage) {
    // Old way
    imageView.kf.setImage(
      with: url,
      placeholder: localImage,
      options: [.transition(.fade(1)), .loadDiskFileSynchronously],
      progressBlock: { receivedSize, totalSize in
          print("progressBlock")
      },
      completionHandler: { result in
          print(result)
      }
    )

    // New way
    KF.url(url)
      .placeholder(localImage)
      .fade(duration: 1)
      .loadDiskFileSynchronously()
      .onProgress { _, _ in print("progressBlock") }   // fixed: the page's `{ _ in` for a two-argument block
      .onSuccess { result in print(result) }
      .onFailure { err in print("Error: \(err)") }
      .set(to: imageView)
}

// MARK: CommonTasks.md

// #8 CommonTasks.md:64 (`UIImage(named:)`), #9 :73 (`UIView` placeholder), #10 :85
// (`indicatorType`), #12 :100 (SwiftUI): UI.

/// #7 CommonTasks.md:46, verbatim.
private func commonTasks46(imageView: DocImageView) {
    let url = URL(string: "https://example.com/image.jpg")
    imageView.kf.setImage(with: url)
}

/// #11 CommonTasks.md:95, verbatim.
private func commonTasks95(imageView: DocImageView, url: URL) {
    imageView.kf.setImage(with: url, options: [.transition(.fade(0.2))])
}

/// #13 CommonTasks.md:111, verbatim.
private func commonTasks111(imageView: DocImageView, url: URL) {
    imageView.kf.setImage(with: url) { result in
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

/// #14 CommonTasks.md:140, verbatim.
private func commonTasks140(url: URL) {
    KingfisherManager.shared.retrieveImage(with: url) { result in 
        // Do something with `result`
    }
}

// MARK: CommonTasks_Cache.md

/// #15 CommonTasks_Cache.md:16, verbatim.
private func cache16(imageView: DocImageView, url: URL) {
    let resource = ImageResource(
        downloadURL: url, 
        cacheKey: "my_cache_key"
    )
    imageView.kf.setImage(with: resource)
}

/// #16 CommonTasks_Cache.md:28, verbatim.
private func cache28(cacheKey: String) -> (Bool, CacheType) {
    let cache = ImageCache.default
    let cached = cache.isCached(forKey: cacheKey)

    // To know where the cached image is:
    let cacheType = cache.imageCachedType(forKey: cacheKey)
    // `.memory`, `.disk` or `.none`.
    return (cached, cacheType)
}

/// #17 CommonTasks_Cache.md:41, verbatim (the page quotes it in a `>` aside).
private func cache41(cache: ImageCache, cacheKey: String) async -> CacheType {
    cache.imageCachedTypeAsync(forKey: cacheKey) { cacheType in
        // `.memory`, `.disk` or `.none`.
    }

    // Or with async/await:
    let cacheType = await cache.imageCachedTypeAsync(forKey: cacheKey)
    return cacheType
}

/// #18 CommonTasks_Cache.md:53, verbatim.
private func cache53(imageView: DocImageView, cache: ImageCache, url: URL, cacheKey: String) -> Bool {
    let processor = RoundCornerImageProcessor(cornerRadius: 20)
    imageView.kf.setImage(with: url, options: [.processor(processor)])

    // Later
    return cache.isCached(forKey: cacheKey, processorIdentifier: processor.identifier)
}

/// #19 CommonTasks_Cache.md:63, verbatim.
private func cache63(cache: ImageCache) {
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

/// #20 CommonTasks_Cache.md:82, #21 :96, #22 :106 and #24 :124, verbatim.
private func cache82to124(cache: ImageCache) {
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

/// #23 CommonTasks_Cache.md:117, verbatim.
private func cache117(imageView: DocImageView, url: URL) {
    // This image will never expire in memory cache.
    imageView.kf.setImage(with: url, options: [.memoryCacheExpiration(.never)])
}

/// #25 CommonTasks_Cache.md:134 and #26 :142, fixed: `let image: UIImage = //...` is a
/// placeholder, not Swift (the image and data are parameters here).
private func cache134and142(cache: ImageCache, image: KFCrossPlatformImage, data: Data, cacheKey: String) {
    cache.store(image, forKey: cacheKey)

    cache.store(image, original: data, forKey: cacheKey)
}

/// #27 CommonTasks_Cache.md:152 and #28 :158, verbatim.
private func cache152and158(cache: ImageCache, cacheKey: String, processor: any ImageProcessor) {
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

/// #29 CommonTasks_Cache.md:171, verbatim.
private func cache171(cache: ImageCache) {
    // Remove all.
    cache.clearMemoryCache()
    cache.clearDiskCache { print("Done") }

    // Remove only expired.
    cache.cleanExpiredMemoryCache()
    cache.cleanExpiredDiskCache { print("Done") }
}

/// #30 CommonTasks_Cache.md:183, verbatim.
private func cache183() {
    ImageCache.default.calculateDiskStorageSize { result in
        switch result {
        case .success(let size):
            print("Disk cache size: \(Double(size) / 1024 / 1024) MB")
        case .failure(let error):
            print(error)
        }
    }
}

/// #31 CommonTasks_Cache.md:196, verbatim.
private func cache196(imageView: DocImageView, url: URL) -> ImageCache {
    // The `name` parameter is used to identify the disk cache bound to the `ImageCache`.
    let cache = ImageCache(name: "my-own-cache")
    imageView.kf.setImage(with: url, options: [.targetCache(cache)])
    return cache
}

/// #32 CommonTasks_Cache.md:204, verbatim.
private func cache204(imageView: DocImageView, url: URL) {
    imageView.kf.setImage(with: url, options: [.forceRefresh])
}

/// #33 CommonTasks_Cache.md:212, verbatim.
private func cache212(imageView: DocImageView, url: URL) {
    imageView.kf.setImage(with: url, options: [.onlyFromCache])
}

/// #34 CommonTasks_Cache.md:225, fixed: a `case` whose body is only a comment is not Swift
/// (a `print` added).
private func cache225(imageView: DocImageView, url: URL) {
    imageView.kf.setImage(with: url) { _ in
        ImageCache.default.retrieveImageInDiskCache(forKey: url.cacheKey) { result in
            switch result {
            case .success(let image):
                // `image` might be `nil` here.
                print("might be nil: \(image == nil)")
            case .failure: break
            }
        }
    }
}

/// #35 CommonTasks_Cache.md:241, fixed as #34.
private func cache241(imageView: DocImageView, url: URL) {
    imageView.kf.setImage(with: url, options: [.waitForCache]) { _ in
        ImageCache.default.retrieveImageInDiskCache(forKey: url.cacheKey) { result in
            switch result {
            case .success(let image):
                // `image` exists.
                print("exists: \(image != nil)")
            case .failure: break
            }
        }
    }
}

// MARK: CommonTasks_Downloader.md

// #43 CommonTasks_Downloader.md:128 is `URLSession`'s authentication challenge: UI/Apple-only.

/// #41 CommonTasks_Downloader.md:106, fixed: the page calls `imageView.kf.set(with:)`, which
/// Kingfisher does not have (it is `setImage(with:)`).
private func downloader106(imageView: DocImageView, url: URL) {
    let task = imageView.kf.setImage(with: url)
    task?.cancel()
}

/// #42 CommonTasks_Downloader.md:114, fixed as #41.
private func downloader114(imageView: DocImageView, url1: URL, url2: URL) {
    let task1 = imageView.kf.setImage(with: url1)
    let task2 = imageView.kf.setImage(with: url2)

    imageView.kf.cancelDownloadTask()
    // `task2` will be cancelled, but `task1` is still running. 
    // However, the downloaded image for `task1` will not be set because the image view expects a result from `url2`.
    _ = (task1, task2)
}

/// #36 CommonTasks_Downloader.md:16, verbatim.
private func downloader16(url: URL) {
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

/// #37 CommonTasks_Downloader.md:33, verbatim.
private func downloader33(imageView: DocImageView, downloader: ImageDownloader, url: URL) {
    let modifier = AnyModifier { request in
        var r = request
        r.setValue("abc", forHTTPHeaderField: "Access-Token")
        return r
    }
    downloader.downloadImage(with: url, options: [.requestModifier(modifier)]) { 
        result in
        // ...
    }

    // This option also works for view extension methods.
    imageView.kf.setImage(with: url, options: [.requestModifier(modifier)])
}

/// #38 CommonTasks_Downloader.md:53, fixed: the page's class is Kingfisher 7's
/// (`reportModified:`, `someAsyncOperation`, `r.someProperty`); this is Kingfisher 8's shape,
/// a struct so that it is `Sendable` in Swift 6.
private struct AsyncModifier: AsyncImageDownloadRequestModifier {
    var onDownloadTaskStarted: (@Sendable (DownloadTask?) -> Void)?

    func modified(for request: URLRequest) async -> URLRequest? {
        var r = request
        r.setValue("async", forHTTPHeaderField: "X-Async")
        return r
    }
}

/// #39 CommonTasks_Downloader.md:73, fixed: `var` for the struct of #38.
private func downloader73(imageView: DocImageView, url: URL) -> RetrieveImageTask? {
    var modifier = AsyncModifier()
    modifier.onDownloadTaskStarted = { task in
        if let task = task {
            print("A download task started: \(task)")
        }
    }
    let nilTask = imageView.kf.setImage(with: url, options: [.requestModifier(modifier)])
    return nilTask
}

/// #40 CommonTasks_Downloader.md:88, fixed: the page lost the `switch result {` line, and
/// Kingfisher 8's `downloadImage` returns a `DownloadTask` that is not optional (`task.cancel()`).
private func downloader88(downloader: ImageDownloader, url: URL) {
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

/// #44 CommonTasks_Downloader.md:162 and #45 :169, verbatim.
private func downloader162and169(downloader: ImageDownloader, url: URL) {
    // Set the timeout to 1 minute.
    downloader.downloadTimeout = 60

    let modifier = AnyModifier { request in
        var r = request
        r.timeoutInterval = 60
        return r
    }
    downloader.downloadImage(with: url, options: [.requestModifier(modifier)])
}

// MARK: CommonTasks_Processor.md

// #52 CommonTasks_Processor.md:122 (`CIImageProcessor`, Core Image): UI.

/// #46 CommonTasks_Processor.md:13, verbatim.
private func processor13(imageView: DocImageView, url: URL) {
    // Just without anything
    imageView.kf.setImage(with: url)
    // It equals to
    imageView.kf.setImage(with: url, options: [.processor(DefaultImageProcessor.default)])
}

// #47 CommonTasks_Processor.md:27 is a fragment of a list (`RoundCornerImageProcessor(cornerRadius: 20)`
// in a comment's sentence), compiled as the first line of #48.

/// #48 CommonTasks_Processor.md:38, fixed: the page declares `let processor` ten times in one
/// scope; each declaration is here in a scope of its own, unchanged.
private func processor38(imageView: DocImageView, url: URL) -> [any ImageProcessor] {
    var all: [any ImageProcessor] = []
    do {
        // Round corner
        let processor = RoundCornerImageProcessor(cornerRadius: 20)
        all.append(processor)
    }
    do {
        // Downsampling
        let processor = DownsamplingImageProcessor(size: CGSize(width: 100, height: 100))
        all.append(processor)
    }
    do {
        // Cropping
        let processor = CroppingImageProcessor(size: CGSize(width: 100, height: 100), anchor: CGPoint(x: 0.5, y: 0.5))
        all.append(processor)
    }
    do {
        // Blur
        let processor = BlurImageProcessor(blurRadius: 5.0)
        all.append(processor)
    }
    do {
        // Overlay with a color & fraction
        let processor = OverlayImageProcessor(overlay: .red, fraction: 0.7)
        all.append(processor)
    }
    do {
        // Tint with a color
        let processor = TintImageProcessor(tint: .blue)
        all.append(processor)
    }
    do {
        // Adjust color
        let processor = ColorControlsProcessor(brightness: 1.0, contrast: 0.7, saturation: 1.1, inputEV: 0.7)
        all.append(processor)
    }
    do {
        // Black & White
        let processor = BlackWhiteProcessor()
        all.append(processor)
    }
    do {
        // Blend (iOS)
        let processor = BlendImageProcessor(blendMode: .darken, alpha: 1.0, backgroundColor: .lightGray)
        all.append(processor)
    }
    do {
        // Compositing
        let processor = CompositingImageProcessor(compositingOperation: .darken, alpha: 1.0, backgroundColor: .lightGray)
        all.append(processor)

        // Use the process in view extension methods.
        imageView.kf.setImage(with: url, options: [.processor(processor)])
    }
    return all
}

/// #49 CommonTasks_Processor.md:75, verbatim.
private func processor75(imageView: DocImageView, url: URL) -> any ImageProcessor {
    // First blur the image, then make it round cornered.
    let processor = BlurImageProcessor(blurRadius: 4) |> RoundCornerImageProcessor(cornerRadius: 20)
    imageView.kf.setImage(with: url, options: [.processor(processor)])
    return processor
}

/// #50 CommonTasks_Processor.md:88, fixed: the page returns Kingfisher 6's `Image?`
/// (Kingfisher 8: `KFCrossPlatformImage?`) and leaves `createAnImage(data:)` to the reader.
private struct MyProcessor: ImageProcessor {

    let someValue: Int

    var identifier: String { "com.yourdomain.myprocessor-\(someValue)" }
    
    // Convert input data/image to target image and return it.
    func process(item: ImageProcessItem, options: KingfisherParsedOptionsInfo) -> KFCrossPlatformImage? {
        switch item {
        case .image(let image):
            // A previous processor already converted the image to an image object.
            // You can do whatever you want to apply to the image and return the result.
            return image
        case .data(let data):
            // Your own way to convert some data to an image.
            return createAnImage(data: data)
        }
    }

    private func createAnImage(data: Data) -> KFCrossPlatformImage? {
        try? ImageCodecRegistry.shared.decode(data)
    }
}

/// #51 CommonTasks_Processor.md:112, verbatim.
private func processor112(imageView: DocImageView) {
    let processor = MyProcessor(someValue: 10)
    let url = URL(string: "https://example.com/my_image.png")
    imageView.kf.setImage(with: url, options: [.processor(processor)])
}

// MARK: CommonTasks_Serializer.md

/// #53 CommonTasks_Serializer.md:8, verbatim.
private func serializer8(imageView: DocImageView, url: URL) {
    // Just without anything
    imageView.kf.setImage(with: url)
    // It equals to
    imageView.kf.setImage(with: url, options: [.cacheSerializer(DefaultCacheSerializer.default)])
}

/// #54 CommonTasks_Serializer.md:52, verbatim.
private func serializer52(imageView: DocImageView, url: URL) -> RoundCornerImageProcessor {
    let roundCorner = RoundCornerImageProcessor(cornerRadius: 20)
    imageView.kf.setImage(with: url, 
        options: [.processor(roundCorner), 
                  .cacheSerializer(FormatIndicatedCacheSerializer.png)]
    )
    return roundCorner
}

/// #55 CommonTasks_Serializer.md:66, fixed: Kingfisher 6's `Image` (Kingfisher 8:
/// `KFCrossPlatformImage`), and `MyFramework` is the reader's: here Alcedo's codecs.
private struct MyCacheSerializer: CacheSerializer {
    func data(with image: KFCrossPlatformImage, original: Data?) -> Data? {
        return try? ImageCodecRegistry.shared.encode(image, as: .png)
    }
    
    func image(with data: Data, options: KingfisherParsedOptionsInfo) -> KFCrossPlatformImage? {
        return try? ImageCodecRegistry.shared.decode(data)
    }
}

/// #56 CommonTasks_Serializer.md:80, verbatim.
private func serializer80(imageView: DocImageView) {
    let serializer = MyCacheSerializer()
    let url = URL(string: "https://yourdomain.com/example.png")
    imageView.kf.setImage(with: url, options: [.cacheSerializer(serializer)])
}

// MARK: MigrationGuide/Migration-To-8.md

// #57 :30 and #58 :44 (`UIImageView()`), #64 :159 (`URLAuthenticationChallenge`), #65 :189
// (Core Image's `Filter.ColorElement`): UI or Apple-only. #61 :104 and #63 :131 are the pre-8
// shapes the guide shows as "Old"; #66 :205 is the declaration of Kingfisher's own
// `downloadImage`: not code to compile.

/// What the redirect handlers of #59 and #60 call: the guide's free name.
private enum requestUpdater {
    static func update(_ request: URLRequest, completion: @escaping (URLRequest?) -> Void) { completion(request) }
    static func update(_ request: URLRequest) async -> URLRequest? { request }
}

/// #59 Migration-To-8.md:69 ("Old", the callback form), fixed: `YourType` is also #62's type
/// (one conformance per type), so this one is `YourOldType`.
private struct YourOldType {}

extension YourOldType: ImageDownloadRedirectHandler {
    func handleHTTPRedirection(
        for task: Kingfisher.SessionDataTask,
        response: HTTPURLResponse, 
        newRequest: URLRequest, 
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        // Do something with the result, potentially in async way
        requestUpdater.update(newRequest) { result in
            completionHandler(result)
        }
    }
}

/// #60 Migration-To-8.md:86 ("New"), verbatim.
private struct YourType {}

extension YourType: ImageDownloadRedirectHandler {
    func handleHTTPRedirection(
        for task: Kingfisher.SessionDataTask,
        response: HTTPURLResponse, 
        newRequest: URLRequest
    ) async -> URLRequest? {
        let result = await requestUpdater.update(newRequest)
        return result
    }
}

/// #62 Migration-To-8.md:113, verbatim ("New").

extension YourType: AsyncImageDownloadRequestModifier {
    func modified(for request: URLRequest) async -> URLRequest? {
        return request
    }
}

/// #67 Migration-To-8.md:223, fixed: the block holds the old and the new code together
/// (`downloadTask` and `doSomethingWithTask` declared twice); the new half, verbatim.
private func migration223(downloader: ImageDownloader, url: URL, options: KingfisherParsedOptionsInfo) -> Bool {
    // new
    let downloadTask: DownloadTask = downloader.downloadImage(with: url, options: options)

    func doSomethingWithTask() -> Bool {
        if downloadTask.isInitialized {
            // Do something with the task, for example, cancel it
            return true
        }
        return false
    }
    return doSomethingWithTask()
}

// MARK: Topics/Topic_ImageDataProvider.md

// #71 :46 (`AVAssetImageDataProvider`), #72 :59 (draws with `UIGraphicsImageRenderer`): UI.

/// #68 Topic_ImageDataProvider.md:18 and #69 :26, verbatim.
private func provider18and26(imageView: DocImageView, path: String) {
    let url = URL(fileURLWithPath: path)
    let provider = LocalFileImageDataProvider(fileURL: url)
    imageView.kf.setImage(with: provider)

    let processor = RoundCornerImageProcessor(cornerRadius: 20)
    imageView.kf.setImage(with: provider, options: [.processor(processor)])
}

/// #70 Topic_ImageDataProvider.md:36, fixed: `"\/9j\/…"` is not a Swift string (`\/` is no
/// escape); the base64 text is a parameter.
private func provider36(imageView: DocImageView, base64: String) {
    let provider = Base64ImageDataProvider(base64String: base64, cacheKey: "some-cache-key")
    imageView.kf.setImage(with: provider)
}

// MARK: Topics/Topic_Indicator.md

// #73 :7, #74 :14 and #75 :24 (`indicatorType`, a `UIView` indicator): UI.

/// The page's `myIndicator`: something with a `percentage` (no view here).
private final class ProgressModel: Sendable {
    private let value = Mutex<Float>(0)
    var percentage: Float {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}

/// #76 Topic_Indicator.md:42, verbatim.
private func indicator42(imageView: DocImageView, url: URL, myIndicator: ProgressModel) {
    imageView.kf.setImage(with: url, progressBlock: {
        receivedSize, totalSize in
        let percentage = (Float(receivedSize) / Float(totalSize)) * 100.0
        print("downloading progress: \(percentage)%")
        myIndicator.percentage = percentage
    })
}

// MARK: Topics/Topic_LivePhoto.md

// #77 :17, #78 :63, #79 :73 (part of the live photo flow) and #80 :81: Photos and
// `PHLivePhotoView`: UI.

// MARK: Topics/Topic_LowDataMode.md

// #81 :12 and #82 :27 write `.lowDataSource(…)`, an option Kingfisher does not have (it is
// `.lowDataMode(…)`, README #4), and #81 misses a `)`.

/// #81 Topic_LowDataMode.md:12, fixed: `.lowDataMode` for `.lowDataSource`, and the missing `)`.
private func lowDataMode12(imageView: DocImageView, highResolutionURL: URL, lowResolutionURL: URL) {
    imageView.kf.setImage(
        with: highResolutionURL, 
        options: [.lowDataMode(.network(lowResolutionURL))]
    )
}

/// #82 Topic_LowDataMode.md:27, fixed: `.lowDataMode` for the page's `.lowDataSource`.
private func lowDataMode27(imageView: DocImageView, highResolutionURL: URL, localFileURL: URL) {
    imageView.kf.setImage(
        with: highResolutionURL, 
        options: [
            .lowDataMode(
                .provider(LocalFileImageDataProvider(fileURL: localFileURL))
            )
        ]
    )
}

// MARK: Topics/Topic_PerformanceTips.md

// #85 :47 (`UICollectionView`) and #88 :91 (`imageView.size`, `UIScreen`): UI.

/// #83 Topic_PerformanceTips.md:9, verbatim.
private func performance9Verbatim(imageView: DocImageView, url1: URL, url2: URL) {
    imageView.kf.setImage(with: url1) { result in 
        // `result` is `.failure(.imageSettingError(.notCurrentSourceTask))`
        // due to another `setImage` below.
        //
        // But the download (and cache) is done normally.
    }

    // Set again immediately.
    imageView.kf.setImage(with: url2) { result in 
        // `result` is `.success`
    }
}

/// #84 Topic_PerformanceTips.md:31, verbatim.
private func performance31Verbatim(imageView: DocImageView, url1: URL, url2: URL) {
    imageView.kf.setImage(with: url1) { result in
        // `result` is `.failure(.requestError(.taskCancelled))`
        // Now the download task is cancelled.
    }

    imageView.kf.cancelDownloadTask()
    imageView.kf.setImage(with: url2) { result in
        // `result` is `.success`
    }
}

/// #83 again, with a `print` in each closure recording the result for the test.
private func performance9(imageView: DocImageView, url1: URL, url2: URL) {
    imageView.kf.setImage(with: url1) { result in 
        // `result` is `.failure(.imageSettingError(.notCurrentSourceTask))`
        // due to another `setImage` below.
        //
        // But the download (and cache) is done normally.
        if case .failure(.imageSettingError(reason: .notCurrentSourceTask)) = result { print("url1: not current") }
    }

    // Set again immediately.
    imageView.kf.setImage(with: url2) { result in 
        // `result` is `.success`
        if case .success = result { print("url2: success") }
    }
}

/// #84 again, with a `print` in each closure recording the result for the test.
private func performance31(imageView: DocImageView, url1: URL, url2: URL) {
    imageView.kf.setImage(with: url1) { result in
        // `result` is `.failure(.requestError(.taskCancelled))`
        // Now the download task is cancelled.
        if case .failure(.requestError(.taskCancelled)) = result { print("url1: cancelled") }
    }

    imageView.kf.cancelDownloadTask()
    imageView.kf.setImage(with: url2) { result in
        // `result` is `.success`
        if case .success = result { print("url2: success") }
    }
}

/// #86 Topic_PerformanceTips.md:68 and #87 :76, verbatim; the page's `MyProcessor()` and
/// `AnotherProcessor()` are the reader's, here two processors of this function.
private func performance68and76(imageView: DocImageView, url: URL) {
    struct MyProcessor: ImageProcessor {
        var identifier: String { "doc.my-processor" }
        func process(item: ImageProcessItem, options: KingfisherParsedOptionsInfo) -> KFCrossPlatformImage? {
            if case .image(let image) = item { return image.resized(to: PixelSize(width: 8, height: 6)) }
            return nil
        }
    }
    struct AnotherProcessor: ImageProcessor {
        var identifier: String { "doc.another-processor" }
        func process(item: ImageProcessItem, options: KingfisherParsedOptionsInfo) -> KFCrossPlatformImage? {
            if case .image(let image) = item { return image.resized(to: PixelSize(width: 4, height: 3)) }
            return nil
        }
    }
    let p1 = MyProcessor()
    imageView.kf.setImage(with: url, options: [.processor(p1), .cacheOriginalImage])

    let p2 = AnotherProcessor()
    imageView.kf.setImage(with: url, options: [.processor(p2)])
}

// MARK: Topics/Topic_Prefetch.md

// #90 :34 (`UICollectionViewDataSourcePrefetching`): UI.

/// #89 Topic_Prefetch.md:12, verbatim (the URLs are the test server's).
private func prefetch12(imageView: DocImageView, anotherImageView: DocImageView, urls: [URL]) -> ImagePrefetcher {
    let prefetcher = ImagePrefetcher(urls: urls) {
        skippedResources, failedResources, completedResources in
        print("These resources are prefetched: \(completedResources)")
    }
    prefetcher.start()

    // Later when you need to display these images:
    imageView.kf.setImage(with: urls[0])
    anotherImageView.kf.setImage(with: urls[1])
    return prefetcher
}

// MARK: Topics/Topic_Retry.md

/// #91 Topic_Retry.md:23, verbatim.
private func retry23(imageView: DocImageView, url: URL) {
    let retry = DelayRetryStrategy(
      maxRetryCount: 5,
      retryInterval: .seconds(3)
    )
    imageView.kf.setImage(with: url, options: [.retryStrategy(retry)])
}

/// #92 Topic_Retry.md:46, verbatim.
private func retry46(imageView: DocImageView, url: URL) {
    // Basic usage - retries immediately when network becomes available
    let networkRetry = NetworkRetryStrategy()
    imageView.kf.setImage(with: url, options: [.retryStrategy(networkRetry)])

    // With timeout - stops waiting after specified duration
    let networkRetryWithTimeout = NetworkRetryStrategy(timeoutInterval: 30.0)
    imageView.kf.setImage(with: url, options: [.retryStrategy(networkRetryWithTimeout)])
}

// MARK: Tutorial (Resources/code-files): the lines that are not UIKit or SwiftUI

/// 01-ViewController-2…13.swift and 02-ContentView-8…11.swift: the manager, the disk size and
/// purging the cache, verbatim lines of the tutorial's view code. Compiled only: purging the
/// shared cache would disturb the suites running beside this one; the test runs the same lines
/// on a manager of its own (`tutorialCacheLines(on:done:)`).
private func tutorialCacheLines(done: @escaping @Sendable () -> Void) {
    print(KingfisherManager.shared)
    KingfisherManager.shared.cache.calculateDiskStorageSize { result in
        switch result {
        case .success(let size):
            let sizeInMB = Double(size) / 1024 / 1024
            print(String(format: "Kingfisher Disk Cache: %.2fMB", sizeInMB))
            KingfisherManager.shared.cache.clearCache {
                done()
            }
        case .failure(let error):
            print("Some error: \(error)")
        }
    }
}

/// The lines of `tutorialCacheLines(done:)` on `manager` instead of `KingfisherManager.shared`.
private func tutorialCacheLines(on manager: KingfisherManager, done: @escaping @Sendable () -> Void) {
    print(manager)
    manager.cache.calculateDiskStorageSize { result in
        switch result {
        case .success(let size):
            let sizeInMB = Double(size) / 1024 / 1024
            print(String(format: "Kingfisher Disk Cache: %.2fMB", sizeInMB))
            manager.cache.clearCache {
                done()
            }
        case .failure(let error):
            print("Some error: \(error)")
        }
    }
}

/// 01-SampleCell / 01-ViewController: the processor and serializer the tutorial's cells use.
private func tutorialProcessor(imageView: DocImageView, url: URL) {
    let roundCorner = RoundCornerImageProcessor(radius: .widthFraction(0.5), roundingCorners: [.topLeft, .bottomRight])
    let pngSerializer = FormatIndicatedCacheSerializer.png
    imageView.kf.setImage(
        with: url,
        options: [.processor(roundCorner), .cacheSerializer(pngSerializer)]
    )
}

// MARK: What the pages say the code does

/// Reachability a test can switch, for ``NetworkRetryStrategy``: the network going away and
/// coming back cannot be made for real in a test.
private final class SwitchableReachability: NetworkReachability {
    let reachable = Mutex(false)
    let asked = Mutex(0)
    func isReachable(_ url: URL) async -> Bool {
        asked.withLock { $0 += 1 }
        return reachable.withLock { $0 }
    }
}

@Suite("Kingfisher's documentation, compiled", .serialized)
struct KingfisherDocsCompileTests {
    @Test func readmeAndCommonTasksSetTheImage() async throws {
        try await withPipeline { h in
            clearPrinted()
            h.server.route("/hi.jpg", .ok(TestImages.jpeg(width: 40, height: 30)))
            h.server.route("/lo.jpg", .ok(TestImages.jpeg(width: 4, height: 3)))
            let imageView = DocImageView()
            let placeholder = TestImages.image(width: 2, height: 2)
            // README: the low data mode source is never used on Linux.
            readme102(imageView: imageView, url: h.server.url("/hi.jpg"), placeholderImage: placeholder,
                      processor: RoundCornerImageProcessor(cornerRadius: 4), lowResolutionURL: h.server.url("/lo.jpg"))
            #expect(await eventually { imageView.image?.size == CGSize(width: 40, height: 30) })
            #expect(h.server.requestCount("/lo.jpg") == 0)

            // CommonTasks: the completion handler prints the image, where it came from and the source.
            h.server.route("/ct.jpg", .ok(TestImages.jpeg(width: 20, height: 10)))
            let other = DocImageView()
            commonTasks111(imageView: other, url: h.server.url("/ct.jpg"))
            #expect(await eventually { printedLines().count == 3 })
            let lines = printedLines()
            // A failed wait must fail the test, not index past the lines and end the process.
            try #require(lines.count == 3)
            #expect(lines[0] == "AlcedoImage(20x10, jpeg, 1 frame, sRGB)")
            #expect(lines[1] == "none")
            #expect(lines[2].contains("/ct.jpg"))
            #expect(other.image?.size == CGSize(width: 20, height: 10))
            // Again: now from memory.
            clearPrinted()
            commonTasks111(imageView: other, url: h.server.url("/ct.jpg"))
            #expect(await eventually { printedLines().count == 3 })
            #expect(printedLines()[1] == "memory")
            commonTasks95(imageView: other, url: h.server.url("/hi.jpg"))
            #expect(await eventually { other.image?.size == CGSize(width: 40, height: 30) })
        }
    }

    @Test func cachePageCalls() async throws {
        try await withPipeline { h in
            clearPrinted()
            h.server.route("/res.jpg", .ok(TestImages.jpeg(width: 12, height: 8)))
            // A resource's own cache key.
            try? await ImageCache.default.removeImage(forKey: "my_cache_key")
            let imageView = DocImageView()
            cache16(imageView: imageView, url: h.server.url("/res.jpg"))
            #expect(await eventually { imageView.image != nil })
            // Memory or disk: other suites clear the shared memory cache at any time, and the
            // disk copy is written after the image is shown, so both are waited for.
            #expect(await eventually { ImageCache.default.isCached(forKey: "my_cache_key") })
            #expect(await eventually { cache28(cacheKey: "my_cache_key").0 && cache28(cacheKey: "my_cache_key").1 != .none })

            // `retrieveImage(forKey:)` of a key that is not there: `.none` and no image.
            cache63(cache: h.cache)
            #expect(await eventually { printedLines().count == 2 })
            #expect(printedLines() == ["none", "nil"])

            // The async forms of `imageCachedTypeAsync`.
            try await h.cache.store(TestImages.image(width: 3, height: 3), forKey: "stored")
            #expect(await cache41(cache: h.cache, cacheKey: "stored") == .memory)
            cache82to124(cache: h.cache)
            #expect(h.cache.memoryStorage.config.totalCostLimit == 300 * 1024 * 1024)
            #expect(h.cache.memoryStorage.config.countLimit == 150)
            #expect(h.cache.diskStorage.config.sizeLimit == 1000 * 1024 * 1024)

            // Store, remove, clear: the completion handlers are called.
            clearPrinted()
            cache134and142(cache: h.cache, image: TestImages.image(width: 5, height: 5), data: TestImages.jpeg(width: 5, height: 5),
                           cacheKey: "manual")
            #expect(await eventually { h.cache.imageCachedType(forKey: "manual") != .none })
            cache152and158(cache: h.cache, cacheKey: "manual", processor: DefaultImageProcessor.default)
            #expect(await eventually { printedLines() == ["Removed!"] })
            cache171(cache: h.cache)
            #expect(await eventually { printedLines() == ["Removed!", "Done", "Done"] })
            cache183()
            #expect(await eventually { printedLines().count == 4 })
            #expect(printedLines()[3].hasPrefix("Disk cache size: ") && printedLines()[3].hasSuffix(" MB"))
        }
    }

    @Test func forceRefreshOnlyFromCacheAndWaitForCache() async throws {
        try await withPipeline { h in
            clearPrinted()
            h.server.route("/f.jpg", .ok(TestImages.jpeg(width: 6, height: 6)))
            let url = h.server.url("/f.jpg")
            let imageView = DocImageView()
            // Never loaded: only from the cache, nothing is asked of the server.
            cache212(imageView: imageView, url: url)
            cache241(imageView: imageView, url: url)
            #expect(await eventually { printedLines() == ["exists: true"] })
            #expect(h.server.requestCount("/f.jpg") == 1)
            cache204(imageView: imageView, url: url)
            #expect(await eventually { h.server.requestCount("/f.jpg") == 2 })
            cache117(imageView: imageView, url: url)
            #expect(await eventually { imageView.image != nil })
        }
    }

    @Test func downloaderPageCalls() async throws {
        try await withPipeline { h in
            clearPrinted()
            h.server.route("/d.jpg", .ok(TestImages.jpeg(width: 9, height: 9)))
            let url = h.server.url("/d.jpg")
            // The modifier's header reaches the server, from the downloader and from the view.
            downloader33(imageView: DocImageView(), downloader: h.downloader, url: url)
            #expect(await eventually { h.server.requests("/d.jpg").count >= 1 })
            #expect(h.server.requests("/d.jpg").allSatisfy { $0.headers.first(name: "Access-Token") == "abc" })

            // The asynchronous modifier is told of the download task.
            h.server.route("/d2.jpg", .ok(TestImages.jpeg(width: 9, height: 9)))
            let view = DocImageView()
            _ = downloader73(imageView: view, url: h.server.url("/d2.jpg"))
            #expect(await eventually { view.image != nil })
            #expect(printedLines().contains { $0.hasPrefix("A download task started: ") })
            #expect(h.server.requests("/d2.jpg").first?.headers.first(name: "X-Async") == "async")

            // Cancelling: the handler sees `isTaskCancelled`.
            clearPrinted()
            h.server.route("/slow.jpg", .ok(TestImages.jpeg()))
            h.server.hold("/slow.jpg")
            downloader88(downloader: h.downloader, url: h.server.url("/slow.jpg"))
            #expect(await eventually { printedLines() == ["true"] })
            h.server.release("/slow.jpg")

            // The timeout of the downloader and of one request.
            downloader162and169(downloader: h.downloader, url: url)
            #expect(h.downloader.downloadTimeout == 60)

            // Kingfisher 8's parsed options and `isInitialized`.
            #expect(migration223(downloader: h.downloader, url: url, options: KingfisherParsedOptionsInfo([.processor(BlackWhiteProcessor())])))
        }
    }

    @Test func processorPageCalls() async throws {
        try await withPipeline { h in
            h.server.route("/p.jpg", .ok(TestImages.jpeg(width: 24, height: 16)))
            let url = h.server.url("/p.jpg")
            let imageView = DocImageView()
            // Every built-in processor of the page works on an image.
            let processors = processor38(imageView: imageView, url: url)
            #expect(processors.count == 10)
            for processor in processors {
                let result = try processor.process(TestImages.image(width: 24, height: 16))
                #expect(result.width > 0, "\(processor.identifier)")
            }
            #expect(await eventually { imageView.image?.size == CGSize(width: 24, height: 16) })
            // `DefaultImageProcessor.default` is no processor: the same cache entry.
            processor13(imageView: imageView, url: url)
            #expect(await eventually { imageView.image != nil })
            let chained = processor75(imageView: imageView, url: url)
            #expect(await eventually { ImageCache.default.isCached(forKey: url.cacheKey, processorIdentifier: chained.identifier) })
            // A custom processor in Kingfisher's shape, by the pipeline.
            let result = try await h.manager.retrieveImage(with: url, options: [.processor(MyProcessor(someValue: 10))])
            #expect(result.image.size == CGSize(width: 24, height: 16))
        }
    }

    @Test func serializerPageCalls() async throws {
        try await withPipeline { h in
            h.server.route("/s.jpg", .ok(TestImages.jpeg(width: 20, height: 20)))
            let url = h.server.url("/s.jpg")
            let imageView = DocImageView()
            serializer8(imageView: imageView, url: url)
            let roundCorner = serializer52(imageView: imageView, url: url)
            // The processed image is stored on disk as PNG.
            #expect(await eventually { ImageCache.default.imageCachedType(forKey: url.cacheKey, processorIdentifier: roundCorner.identifier) != .none })
            var stored: Data?
            let deadline = ContinuousClock.now + .seconds(300)
            while stored == nil, ContinuousClock.now < deadline {
                stored = try await ImageCache.default.retrieveDataInDiskCache(forKey: url.cacheKey, processorIdentifier: roundCorner.identifier)?.data
                if stored == nil { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(stored.map(ImageFormat.sniff) == .png)
        }
    }

    @Test func requestModifiersWrittenWithURLRequest() async throws {
        // Kingfisher 8's synchronous modifier shape, on Alcedo's `URLRequest`.
        struct TokenModifier: ImageDownloadRequestModifier {
            func modified(for request: URLRequest) -> URLRequest? {
                var r = request
                r.setValue("Bearer t", forHTTPHeaderField: "Authorization")
                return r
            }
        }
        try await withPipeline { h in
            h.server.route("/m.jpg", .ok(TestImages.jpeg()))
            _ = try await h.manager.retrieveImage(with: h.server.url("/m.jpg"), options: [.requestModifier(TokenModifier())])
            #expect(h.server.requests("/m.jpg").first?.headers.first(name: "Authorization") == "Bearer t")
            h.server.route("/y.jpg", .ok(TestImages.jpeg()))
            _ = try await h.manager.retrieveImage(with: h.server.url("/y.jpg"), options: [.requestModifier(YourType())])
            #expect(h.server.requestCount("/y.jpg") == 1)
        }
    }

    @Test func dataProvidersAndIndicatorProgress() async throws {
        try await withPipeline { h in
            clearPrinted()
            let path = h.folder.url.appendingPathComponent("local.jpg").path
            try TestImages.jpeg(width: 7, height: 5).write(to: URL(fileURLWithPath: path))
            let imageView = DocImageView()
            provider18and26(imageView: imageView, path: path)
            #expect(await eventually { imageView.image?.size == CGSize(width: 7, height: 5) })
            let base64View = DocImageView()
            try? await ImageCache.default.removeImage(forKey: "some-cache-key")
            provider36(imageView: base64View, base64: TestImages.jpeg(width: 3, height: 2).base64EncodedString())
            #expect(await eventually { base64View.image?.size == CGSize(width: 3, height: 2) })

            h.server.route("/big.jpg", .ok(TestImages.jpeg(width: 300, height: 200)))
            let model = ProgressModel()
            indicator42(imageView: DocImageView(), url: h.server.url("/big.jpg"), myIndicator: model)
            #expect(await eventually { model.percentage == 100 })
            #expect(printedLines().last == "downloading progress: 100.0%")

            // Low Data Mode: the high-resolution URL is loaded.
            h.server.route("/high.jpg", .ok(TestImages.jpeg(width: 30, height: 20)))
            let lowData = DocImageView()
            lowDataMode27(imageView: lowData, highResolutionURL: h.server.url("/high.jpg"), localFileURL: URL(fileURLWithPath: path))
            #expect(await eventually { lowData.image?.size == CGSize(width: 30, height: 20) })
        }
    }

    @Test func performanceTipsSupersedeAndCancel() async throws {
        try await withPipeline { h in
            clearPrinted()
            h.server.route("/u1.jpg", .ok(TestImages.jpeg(width: 10, height: 10)))
            h.server.route("/u2.jpg", .ok(TestImages.jpeg(width: 11, height: 11)))
            h.server.hold("/u1.jpg")
            let imageView = DocImageView()
            performance9(imageView: imageView, url1: h.server.url("/u1.jpg"), url2: h.server.url("/u2.jpg"))
            #expect(await eventually { printedLines().contains("url2: success") })
            h.server.release("/u1.jpg")
            #expect(await eventually { printedLines().count == 2 })
            #expect(Set(printedLines()) == ["url1: not current", "url2: success"])
            #expect(imageView.image?.size == CGSize(width: 11, height: 11))
            // "But the download (and cache) is done normally."
            #expect(await eventually { ImageCache.default.isCached(forKey: h.server.url("/u1.jpg").cacheKey) })

            clearPrinted()
            h.server.route("/u3.jpg", .ok(TestImages.jpeg(width: 12, height: 12)))
            h.server.route("/u4.jpg", .ok(TestImages.jpeg(width: 13, height: 13)))
            h.server.hold("/u3.jpg")
            performance31(imageView: imageView, url1: h.server.url("/u3.jpg"), url2: h.server.url("/u4.jpg"))
            #expect(await eventually { printedLines().count == 2 })
            #expect(Set(printedLines()) == ["url1: cancelled", "url2: success"])
            h.server.release("/u3.jpg")
        }
    }

    /// Kingfisher reports an image made now from a cached original as `.none`; where the
    /// original came from is ``RetrieveImageResult/originalCacheType``.
    @Test func imageFromACachedOriginalIsCacheTypeNone() async throws {
        try await withPipeline { h in
            h.server.route("/o.jpg", .ok(TestImages.jpeg(width: 16, height: 12)))
            let url = h.server.url("/o.jpg")
            // The original, downloaded: in memory and on disk.
            let first = try await h.manager.retrieveImage(with: url, options: [.waitForCache])
            #expect(first.cacheType == .none && first.originalCacheType == .none)
            // A processor: made from the original in memory.
            let blurred = try await h.manager.retrieveImage(with: url, options: [.processor(BlurImageProcessor(blurRadius: 2)), .waitForCache])
            #expect(blurred.cacheType == .none)
            #expect(blurred.originalCacheType == .memory)
            #expect(blurred.response == nil)
            // From the original on disk.
            h.cache.clearMemoryCache()
            let tinted = try await h.manager.retrieveImage(with: url, options: [.processor(TintImageProcessor(tint: .blue)), .waitForCache])
            #expect(tinted.cacheType == .none)
            #expect(tinted.originalCacheType == .disk)
            // The processed image itself, cached: where it was.
            let again = try await h.manager.retrieveImage(with: url, options: [.processor(TintImageProcessor(tint: .blue))])
            #expect(again.cacheType == .memory && again.originalCacheType == .memory)
            h.cache.clearMemoryCache()
            let fromDisk = try await h.manager.retrieveImage(with: url, options: [.processor(TintImageProcessor(tint: .blue))])
            #expect(fromDisk.cacheType == .disk && fromDisk.originalCacheType == .disk)
            #expect(h.server.requestCount("/o.jpg") == 1)

            // The page's two processors on one URL, through the view.
            let imageView = DocImageView()
            performance68and76(imageView: imageView, url: url)
            #expect(await eventually { imageView.image?.size == CGSize(width: 4, height: 3) })
        }
    }

    /// A 200 body that is not an image fails as Kingfisher's processor error on the data.
    @Test func aBodyThatIsNotAnImageIsAProcessingFailure() async throws {
        try await withPipeline { h in
            let body = Data("<html><body>Sorry</body></html>".utf8)
            h.server.route("/page.jpg", .ok(body, contentType: "text/html"))
            do {
                _ = try await h.manager.retrieveImage(with: h.server.url("/page.jpg"))
                Issue.record("expected a failure")
            } catch let error as KingfisherError {
                guard case .processorError(reason: .processingFailed(let processor, item: .data(let data))) = error else {
                    Issue.record("\(error)")
                    return
                }
                #expect(processor.identifier == DefaultImageProcessor.default.identifier)
                #expect(data == body)
                #expect(error.localizedDescription
                        == #"processor error: DefaultImageProcessor gave no image for data (31 bytes, not an image: "<html><body>Sorry</body></html>")"#)
            }
        }
    }

    @Test func errorReasonsUnderKingfishersNames() async throws {
        try await withPipeline { h in
            h.server.route("/missing.jpg", .status(404))
            do {
                _ = try await h.manager.retrieveImage(with: h.server.url("/missing.jpg"))
            } catch let error as KingfisherError {
                guard case .responseError(reason: .invalidHTTPStatusCode(let response)) = error else {
                    Issue.record("\(error)")
                    return
                }
                #expect(response.statusCode == 404)
            }
            let cancelled = KingfisherError.requestError(reason: .cancelled)
            guard case .requestError(reason: .taskCancelled) = cancelled else {
                Issue.record("taskCancelled does not match")
                return
            }
            if case .requestError(reason: .taskCancelled) = KingfisherError.requestError(reason: .invalidURL("x")) {
                Issue.record("taskCancelled matches another reason")
            }
        }
    }

    @Test func prefetchAndRetryPages() async throws {
        try await withPipeline { h in
            clearPrinted()
            h.server.route("/image1.jpg", .ok(TestImages.jpeg(seed: 1)))
            h.server.route("/image2.jpg", .ok(TestImages.jpeg(seed: 2)))
            let urls = ["/image1.jpg", "/image2.jpg"].map { h.server.url($0) }
            let first = DocImageView(), second = DocImageView()
            let prefetcher = prefetch12(imageView: first, anotherImageView: second, urls: urls)
            #expect(await eventually { printedLines().count == 1 })
            #expect(printedLines()[0].hasPrefix("These resources are prefetched: "))
            #expect(urls.allSatisfy { printedLines()[0].contains($0.absoluteString) })
            #expect(prefetcher.result.completed.count == 2)
            #expect(await eventually { first.image != nil && second.image != nil })

            // The network retry: a 503, then the image at once (the loopback host is reachable).
            h.server.route("/r.jpg", sequence: [.status(503), .ok(TestImages.jpeg(width: 5, height: 4))])
            let retried = DocImageView()
            retry46(imageView: retried, url: h.server.url("/r.jpg"))
            #expect(await eventually { retried.image?.size == CGSize(width: 5, height: 4) })
            #expect(h.server.requestCount("/r.jpg") == 2)
        }
    }

    /// `NetworkRetryStrategy` waits while the host is unreachable, retries when it is back,
    /// and stops after its timeout.
    @Test func networkRetryWaitsForTheNetwork() async throws {
        try await withPipeline { h in
            h.server.route("/n.jpg", sequence: [.status(503), .ok(TestImages.jpeg(width: 3, height: 3))])
            let reachability = SwitchableReachability()
            let strategy = NetworkRetryStrategy(timeoutInterval: nil, pollInterval: .milliseconds(10), reachability: reachability)
            let task = Task { try await h.manager.retrieveImage(with: h.server.url("/n.jpg"), options: [.retryStrategy(strategy)]) }
            // Unreachable: no second request while the strategy keeps asking.
            #expect(await eventually { reachability.asked.withLock { $0 } >= 3 })
            #expect(h.server.requestCount("/n.jpg") == 1)
            reachability.reachable.withLock { $0 = true }
            let result = try await task.value
            #expect(result.image.size == CGSize(width: 3, height: 3))
            #expect(h.server.requestCount("/n.jpg") == 2)

            // With a timeout and the network never back: the first failure is reported.
            h.server.route("/t.jpg", .status(503))
            let gone = SwitchableReachability()
            let timed = NetworkRetryStrategy(timeoutInterval: 0.05, pollInterval: .milliseconds(10), reachability: gone)
            do {
                _ = try await h.manager.retrieveImage(with: h.server.url("/t.jpg"), options: [.retryStrategy(timed)])
                Issue.record("expected a failure")
            } catch let error as KingfisherError {
                #expect(error.isInvalidResponseStatusCode(503))
            }
            #expect(h.server.requestCount("/t.jpg") == 1)

            // Reachable but failing: at most `maxRetryCount` retries.
            h.server.route("/c.jpg", .status(503))
            let capped = NetworkRetryStrategy(maxRetryCount: 2)
            _ = try? await h.manager.retrieveImage(with: h.server.url("/c.jpg"), options: [.retryStrategy(capped)])
            #expect(h.server.requestCount("/c.jpg") == 3)
        }
    }

    /// The route check: loopback is reachable; a name that cannot resolve is not.
    @Test func routeReachability() async throws {
        let check = RouteReachability()
        #expect(await check.isReachable(URL(string: "http://127.0.0.1:9/x.jpg")!))
        #expect(await !check.isReachable(URL(string: "http://host.invalid/x.jpg")!))
        #expect(await check.isReachable(URL(string: "s3://bucket/key.jpg")!))
    }

    @Test func tutorialCacheLinesAndLowDataModeOption() async throws {
        try await withPipeline { h in
            clearPrinted()
            h.server.route("/purge.jpg", .ok(TestImages.jpeg()))
            _ = try await h.manager.retrieveImage(with: h.server.url("/purge.jpg"), options: [.waitForCache])
            let done = Mutex(false)
            tutorialCacheLines(on: h.manager) { done.withLock { $0 = true } }
            #expect(await eventually { done.withLock { $0 } })
            #expect(printedLines().first?.hasPrefix("ImageManager") == true || printedLines().first?.hasPrefix("Alcedo.ImageManager") == true)
            #expect(printedLines().count == 2 && printedLines()[1].hasPrefix("Kingfisher Disk Cache: "))
            #expect(h.cache.imageCachedType(forKey: h.server.url("/purge.jpg").cacheKey) == .none)
        }
        let parsed = KingfisherParsedOptionsInfo([.lowDataMode(.network(URL(string: "https://example.com/low.jpg")!))])
        #expect(parsed.lowDataModeSource?.url?.absoluteString == "https://example.com/low.jpg")
        try await withPipeline { h in
            h.server.route("/tut.jpg", .ok(TestImages.jpeg(width: 20, height: 20)))
            let imageView = DocImageView()
            tutorialProcessor(imageView: imageView, url: h.server.url("/tut.jpg"))
            #expect(await eventually { imageView.image != nil })
            // `.widthFraction(0.5)` on two corners: the top-left corner is transparent, the top-right not.
            #expect(imageView.image?.pixel(x: 0, y: 0).alpha == 0)
            #expect(imageView.image?.pixel(x: 19, y: 0).alpha == 255)
        }
    }
}
