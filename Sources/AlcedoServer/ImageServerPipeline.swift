import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where the server's ImageManager, ImageCache and ImageDownloader are made: the one place
/// that wires Alcedo's pipeline for serving (caches for originals and results, the guarded
/// loader, the limits). Change or extend the caching tiers here.
public struct ImageServerPipeline: Sendable {
    /// Fetches, decodes, processes and caches sources.
    public let manager: ImageManager
    /// Originals (bytes on disk) and processed variants (in memory and on disk).
    public let cache: ImageCache
    /// Downloads through the ``GuardedImageLoader`` (http, https), an ``S3ImageDataLoader`` (s3,
    /// with ``ImageServerConfiguration/s3``) and a ``LocalFolderImageDataLoader`` (local, with
    /// ``ImageServerConfiguration/localRoot``).
    public let downloader: ImageDownloader
    /// The checks on sources.
    public let sourceGuard: SourceGuard

    /// Wires the pipeline for `configuration`; with `memoryBudget` (default `nil`: none) every
    /// decode reserves its working set from it first.
    public init(configuration: ImageServerConfiguration, memoryBudget: MemoryBudget? = nil) {
        sourceGuard = configuration.sourceGuard
        // HTTP through the guard; S3 straight to its configured endpoint; local inside the root.
        var loaders: [any ImageDataLoading] = [GuardedImageLoader(sourceGuard: sourceGuard)]
        if let s3 = configuration.s3 {
            let credentials = s3.credentials ?? (try? S3Credentials.resolve())
            loaders.append(S3ImageDataLoader(configuration: s3, resolvedCredentials: credentials))
        }
        if let root = configuration.localRoot { loaders.append(LocalFolderImageDataLoader(root: root)) }
        let loader = loaders.count == 1 ? loaders[0] : CompositeImageDataLoader(loaders)
        var headers = ImageDownloader.Configuration.standardHeaders
        headers["User-Agent"] = configuration.userAgent
        downloader = ImageDownloader(
            name: "alcedo-serve",
            configuration: ImageDownloader.Configuration(connectTimeout: configuration.connectTimeout,
                                                         timeout: configuration.downloadTimeout,
                                                         maximumBodySize: configuration.maxSourceBytes,
                                                         maximumRedirects: configuration.maxRedirects,
                                                         defaultHeaders: headers,
                                                         // Bodies count against the budget while they arrive.
                                                         memoryBudget: memoryBudget),
            loader: loader)
        cache = ImageCache(
            memoryStorage: MemoryStorage.Backend(config: MemoryStorage.Config(totalCostLimit: configuration.memoryCacheBytes)),
            diskStorage: DiskStorage.EntryStore(config: DiskStorage.EntryStore.Config(name: "alcedo-serve", directory: configuration.cacheDirectory)),
            // A full or read-only cache disk is logged where the server logs, once per change.
            logger: configuration.logger,
            sharedTier: Self.sharedTier(configuration))
        var defaults: AlcedoOptionsInfo = [
            // The original's bytes go to disk so that every other variant starts from them.
            .cacheOriginalImage,
            // Disk writes finish before delivery: the next variant of a source finds its original.
            .waitForCache,
            // A stale source is revalidated with its validators (a 304 refreshes it).
            .respectHTTPFreshness,
            .decodingLimits(configuration.decodingLimits),
        ]
        if let memoryBudget { defaults.append(.memoryBudget(memoryBudget)) }
        manager = ImageManager(downloader: downloader, cache: cache, defaultOptions: defaults)
    }

    /// The shared tier of the cache: a tier on a ``TieredSharedStorage`` that asks
    /// ``ImageServerConfiguration/sharedCacheTier``'s storage first, then the result or source
    /// store (with the shared tier's settings, when there is one), and records each lookup as a
    /// stage of the request; `nil` with neither.
    static func sharedTier(_ configuration: ImageServerConfiguration) -> SharedCacheTier? {
        guard configuration.sharedCacheTier != nil || configuration.resultStore != nil || configuration.sourceStore != nil else {
            return nil
        }
        let storage = TieredSharedStorage(front: configuration.sharedCacheTier?.storage, results: configuration.resultStore,
                                          sources: configuration.sourceStore)
        return SharedCacheTier(storage: storage, config: configuration.sharedCacheTier?.config ?? .init(logger: configuration.logger))
    }

    /// The options of one request: the processing and the response's encoding make the
    /// variant, which the caches keep as the response's bytes.
    func options(processor: ImgproxyProcessor, encoding: ResponseEncoding, firstFrameOnly: Bool, page: Int? = nil) -> AlcedoOptionsInfo {
        var options: AlcedoOptionsInfo = [.processor(ServedVariantProcessor(processing: processor, encoding: encoding)),
                                          .cacheSerializer(ResponseSerializer(encoding: encoding))]
        if firstFrameOnly { options.append(.onlyLoadFirstFrame) }
        // `pg:` picks a page of a multi-page source (TIFF) as it decodes; for animations the
        // processor picks the frame.
        if let page, page > 0 { options.append(.page(page)) }
        return options
    }

    /// Releases the downloader's connections.
    public func shutdown() async {
        await downloader.shutdown()
    }
}
