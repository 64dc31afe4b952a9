import Alcedo
import Foundation

/// Where the server's ImageManager, ImageCache and ImageDownloader are made: the one place
/// that wires Alcedo's pipeline for serving (caches for originals and results, the guarded
/// loader, the limits). Change or extend the caching tiers here.
public struct ImageServerPipeline: Sendable {
    /// Fetches, decodes, processes and caches sources.
    public let manager: ImageManager
    /// Originals (bytes on disk) and processed variants (in memory and on disk).
    public let cache: ImageCache
    /// Downloads through the ``GuardedImageLoader``.
    public let downloader: ImageDownloader
    /// The checks on sources.
    public let sourceGuard: SourceGuard

    /// Wires the pipeline for `configuration`.
    public init(configuration: ImageServerConfiguration) {
        sourceGuard = SourceGuard(allowPrivateNetworks: configuration.allowPrivateNetworks,
                                  allowedSources: configuration.allowedSources,
                                  trustedHosts: configuration.trustedSourceHosts)
        let loader = GuardedImageLoader(sourceGuard: sourceGuard)
        downloader = ImageDownloader(
            name: "alcedo-serve",
            configuration: ImageDownloader.Configuration(timeout: configuration.downloadTimeout,
                                                         maximumBodySize: configuration.maxSourceBytes),
            loader: loader)
        cache = ImageCache(
            memoryStorage: MemoryStorage.Backend(config: MemoryStorage.Config(totalCostLimit: configuration.memoryCacheBytes)),
            diskStorage: DiskStorage.Backend(config: DiskStorage.Config(name: "alcedo-serve", directory: configuration.cacheDirectory)),
            sharedTier: configuration.sharedCacheTier)
        manager = ImageManager(downloader: downloader, cache: cache, defaultOptions: [
            // The original's bytes go to disk so that every other variant starts from them.
            .cacheOriginalImage,
            // Disk writes finish before delivery: the next variant of a source finds its original.
            .waitForCache,
            // A stale source is revalidated with its validators (a 304 refreshes it).
            .respectHTTPFreshness,
            .decodingLimits(configuration.decodingLimits),
        ])
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
