import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Logging

/// A retrieved, processed image.
struct RetrievedImage: Sendable {
    let image: AlcedoImage
    /// The size before processing, when the original bytes were at hand (not for memory hits).
    let sourceSize: PixelSize?
    /// Where the source bytes came from (``RetrieveImageResult/originalCacheType``): a variant
    /// processed now from a cached original reports that cache, not `none`.
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

    /// A retriever on ``makeCache(cacheDirectory:memoryOnly:memoryLimit:)``'s cache and the
    /// default downloader. When the disk cache folder cannot be used, the retriever works
    /// from memory only (after the warning `makeCache` prints).
    /// With `maxMemory` (default `nil`: no budget), every decode first reserves its working set
    /// from a ``MemoryBudget`` of that many bytes, the memory cache's limit set aside in it, and
    /// the downloader counts each body against the same budget while it arrives (many large
    /// downloads at once wait instead of passing the budget).
    /// With `s3`, `s3://` URLs are read through it (beside HTTP, on a downloader of their own).
    static func make(cacheDirectory: URL?, memoryOnly: Bool, memoryLimit: Int = defaultMemoryLimit,
                     maxMemory: Int? = nil, s3: S3ImageDataLoader? = nil) -> ImageRetriever {
        let (cache, diskUsable) = makeCache(cacheDirectory: cacheDirectory, memoryOnly: memoryOnly, memoryLimit: memoryLimit)
        var options: AlcedoOptionsInfo = memoryOnly || !diskUsable
            ? [.waitForCache, .cacheMemoryOnly, .allowLocalFiles] : [.waitForCache, .allowLocalFiles]
        var budget: MemoryBudget?
        if let maxMemory {
            let made = MemoryBudget(capacity: maxMemory, queueLength: .max)
            made.setCeiling(memoryLimit, for: "memory")
            options.append(.memoryBudget(made))
            budget = made
        }
        let downloader: ImageDownloader
        if s3 != nil || budget != nil {
            downloader = ImageDownloader(name: "alcedo", configuration: ImageDownloader.Configuration(memoryBudget: budget),
                                         loader: s3.map { CompositeImageDataLoader([HTTPImageLoader(), $0]) })
        } else {
            downloader = .default
        }
        return ImageRetriever(manager: ImageManager(downloader: downloader, cache: cache), baseOptions: options)
    }

    /// A run's memory budget when none is given: 75% of the control group's limit when there is
    /// one, else 1 GiB, and always above the memory cache's limit (`memoryLimit`) by 256 MiB at least.
    static func defaultMaxMemory(memoryLimit: Int) -> Int {
        max(ProcessMemory.controlGroupLimit.map { $0 / 4 * 3 } ?? 1 << 30, memoryLimit + (256 << 20))
    }

    /// The memory cache limit of a command-line run, in bytes of decoded pixels (256 MiB): a
    /// batch tool writes each result and rarely needs it again, so its memory cache stays
    /// small whatever the machine (the library's default is a quarter of the memory).
    static let defaultMemoryLimit = 256 << 20

    /// A cache on the disk folder `cacheDirectory` (nil: the default cache, as `alcedo cache`
    /// finds it), or with `memoryOnly` a cache whose disk part is never used: requests must
    /// then carry ``AlcedoOptionsInfoItem/cacheMemoryOnly``, and nothing is read from or
    /// written to any disk cache. The memory part holds at most `memoryLimit` bytes.
    ///
    /// The folder is checked first: when it cannot hold entries (a regular file, a dangling
    /// symbolic link, a folder that cannot be made), one warning goes to standard error and
    /// `diskUsable` is `false`; a read-only folder is warned about and still read. Disk
    /// failures later in the run are not printed again (the library's logger is silenced:
    /// standard output may be JSON).
    static func makeCache(cacheDirectory: URL?, memoryOnly: Bool,
                          memoryLimit: Int = defaultMemoryLimit) -> (cache: ImageCache, diskUsable: Bool) {
        let memory = MemoryStorage.Backend<AlcedoImage>(config: MemoryStorage.Config(totalCostLimit: memoryLimit))
        let diskConfig: DiskStorage.EntryStore.Config
        if memoryOnly {
            // A folder that is never made: nothing is written, so every disk lookup misses.
            let unused = FileManager.default.temporaryDirectory
                .appendingPathComponent("alcedo-memory-only-\(getpid())-\(UUID().uuidString)", isDirectory: true)
            diskConfig = DiskStorage.EntryStore.Config(folderURL: unused)
        } else if let cacheDirectory {
            diskConfig = DiskStorage.EntryStore.Config(folderURL: cacheDirectory)
        } else {
            diskConfig = DiskStorage.EntryStore.Config(name: "default")
        }
        let disk = DiskStorage.EntryStore(config: diskConfig)
        var diskUsable = !memoryOnly
        if !memoryOnly {
            do {
                try disk.prepareFolder()
            } catch {
                if case .cacheError(let reason) = error, case .readOnly? = reason.storageFailure {
                    Console.error("alcedo: warning: \(error); nothing new will be cached on disk")
                } else {
                    Console.error("alcedo: warning: \(error); continuing without the disk cache")
                    diskUsable = false
                }
            }
        }
        let cache = ImageCache(memoryStorage: memory, diskStorage: disk,
                               logger: Logger(label: "alcedo.cache", factory: { _ in SwiftLogNoOpLogHandler() }))
        return (cache, diskUsable)
    }

    /// The same disk cache behind a new, empty memory cache.
    func withEmptyMemoryCache() -> ImageRetriever {
        let cache = ImageCache(memoryStorage: MemoryStorage.Backend(config: manager.cache.memoryStorage.config),
                               diskStorage: DiskStorage.EntryStore(config: manager.cache.diskStorage.config),
                               logger: manager.cache.logger)
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
        return RetrievedImage(image: result.image, sourceSize: sourceSize, cacheType: result.originalCacheType,
                              httpStatus: result.response?.statusCode)
    }
}
