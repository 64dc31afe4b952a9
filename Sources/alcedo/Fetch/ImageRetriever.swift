import Alcedo
import Foundation

/// A retrieved, processed image.
struct RetrievedImage: Sendable {
    let image: AlcedoImage
    /// The size before processing, when the original bytes were at hand (not for memory hits).
    let sourceSize: PixelSize?
    let cacheType: CacheType
    /// The status of the download's final response (`200`, or `304` for a revalidation), if any.
    let httpStatus: Int?
}

/// How one retrieval treats the caches.
struct RetrievalOptions: Sendable {
    /// Skip the caches and load again; a download revalidates what the disk holds.
    var forceRefresh = false
    /// Never load: fail when the image is in neither cache.
    var onlyFromCache = false
    /// What to do with colour profiles (default: convert to sRGB).
    var colorManagement: ColorManagement = .convertToSRGB
}

/// Retrieves command-line targets through an ``ImageManager``.
///
/// Every request waits for its disk write (``AlcedoOptionsInfoItem/waitForCache``), so the
/// cache holds the result before the process exits.
struct ImageRetriever: Sendable {
    let manager: ImageManager
    /// Options every request carries, before its own.
    let baseOptions: AlcedoOptionsInfo

    /// A retriever on ``makeCache(cacheDirectory:memoryOnly:)``'s cache and the default downloader.
    static func make(cacheDirectory: URL?, memoryOnly: Bool) -> ImageRetriever {
        let cache = makeCache(cacheDirectory: cacheDirectory, memoryOnly: memoryOnly)
        return ImageRetriever(manager: ImageManager(downloader: .default, cache: cache),
                              baseOptions: memoryOnly ? [.waitForCache, .cacheMemoryOnly] : [.waitForCache])
    }

    /// A cache on the disk folder `cacheDirectory` (nil: the default cache, as `alcedo cache`
    /// finds it), or with `memoryOnly` a cache whose disk part is never used: requests must
    /// then carry ``AlcedoOptionsInfoItem/cacheMemoryOnly``, and nothing is read from or
    /// written to any disk cache.
    static func makeCache(cacheDirectory: URL?, memoryOnly: Bool) -> ImageCache {
        let memory = MemoryStorage.Backend<AlcedoImage>(config: MemoryStorage.Config())
        let diskConfig: DiskStorage.Config
        if memoryOnly {
            // A folder that is never made: nothing is written, so every disk lookup misses.
            let unused = FileManager.default.temporaryDirectory
                .appendingPathComponent("alcedo-memory-only-\(getpid())-\(UUID().uuidString)", isDirectory: true)
            diskConfig = DiskStorage.Config(folderURL: unused)
        } else if let cacheDirectory {
            diskConfig = DiskStorage.Config(folderURL: cacheDirectory)
        } else {
            diskConfig = DiskStorage.Config(name: "default")
        }
        return ImageCache(memoryStorage: memory, diskStorage: DiskStorage.Backend(config: diskConfig))
    }

    /// The same disk cache behind a new, empty memory cache.
    func withEmptyMemoryCache() -> ImageRetriever {
        let cache = ImageCache(memoryStorage: MemoryStorage.Backend(config: MemoryStorage.Config()),
                               diskStorage: DiskStorage.Backend(config: manager.cache.diskStorage.config))
        return ImageRetriever(manager: ImageManager(downloader: manager.downloader, cache: cache), baseOptions: baseOptions)
    }

    func retrieve(_ target: FetchTarget, processor: (any ImageProcessor)?,
                  options: RetrievalOptions) async throws(FetchFailure) -> RetrievedImage {
        let source = target.source
        var items = baseOptions
        if let processor { items.append(.processor(processor)) }
        if options.forceRefresh { items.append(.forceRefresh) }
        if options.onlyFromCache { items.append(.onlyFromCache) }
        if options.colorManagement != .convertToSRGB { items.append(.colorManagement(options.colorManagement)) }

        let result: RetrieveImageResult
        do {
            result = try await manager.retrieveImage(with: source, options: items)
        } catch {
            throw FetchFailure(error)
        }
        var sourceSize: PixelSize?
        if let original = result.originalData {
            sourceSize = await Blocking.run { () -> PixelSize? in
                (try? ImageCodecRegistry.shared.info(for: original)).map { PixelSize(width: $0.width, height: $0.height) }
            }
        }
        return RetrievedImage(image: result.image, sourceSize: sourceSize, cacheType: result.cacheType,
                              httpStatus: result.response?.statusCode)
    }
}
