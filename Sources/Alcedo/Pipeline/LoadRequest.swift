#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One request with its options resolved against the manager: the caches, the downloader,
/// the keys and the decoding options every stage uses.
struct LoadRequest: Sendable {
    /// Marks the cached variant of a request made with ``AlcedoOptionsInfoItem/onlyLoadFirstFrame``,
    /// so a first frame is never served to a request that wants the whole animation.
    static let firstFrameMarker = "com.alcedo.firstFrame"
    /// Marks a variant decoded from a page other than the first (multi-page TIFF).
    static let pageMarker = "com.alcedo.page."
    /// Marks the cached variant of a request made with a ``ColorManagement`` other than the
    /// default, so that sRGB and source-space pixels never stand in for each other.
    static let colorMarker = "com.alcedo.color."
    /// Marks a variant decoded with ``AlcedoOptionsInfoItem/readMetadata``.
    static let metadataMarker = "com.alcedo.metadata"
    /// Marks a variant decoded from an embedded thumbnail (``AlcedoOptionsInfoItem/preferEmbeddedThumbnail``).
    static let thumbnailMarker = "com.alcedo.thumbnail"

    let source: Source
    let options: AlcedoParsedOptionsInfo
    let targetCache: ImageCache
    /// Where the original is stored and looked for: the original cache with a processor, the
    /// target cache without one (the original is then the variant itself).
    let originalCache: ImageCache
    let downloader: ImageDownloader
    let serializer: any CacheSerializer
    /// The source's cache key.
    let key: String
    /// The identifier the processed image is cached under (`key@variant`); empty for the original.
    let variant: String
    /// `true` when the processor is the identity: the image stored is the original itself.
    let processorIsDefault: Bool
    /// How loaded bytes and disk originals are decoded: the processor's decoding target applied.
    let decodingOptions: DecodingOptions
    /// How a processed variant read from disk is decoded: at its stored size.
    let variantDecodingOptions: DecodingOptions
    /// The reservation of a run under ``AlcedoOptionsInfoItem/memoryBudget(_:)`` (else `nil`).
    let memoryHold: MemoryHold?

    init(source: Source, options: AlcedoParsedOptionsInfo, manager: ImageManager) {
        self.source = source
        self.options = options
        targetCache = options.targetCache ?? manager.cache
        processorIsDefault = options.processor.identifier.isEmpty
        originalCache = processorIsDefault ? targetCache : (options.originalCache ?? targetCache)
        downloader = options.downloader ?? manager.downloader
        serializer = options.cacheSerializer ?? targetCache.cacheSerializer
        key = source.cacheKey
        var variant = options.processor.identifier
        if options.colorManagement != .convertToSRGB {
            let marker = Self.colorMarker + options.colorManagement.rawValue
            variant = variant.isEmpty ? marker : variant + "|>" + marker
        }
        if options.onlyLoadFirstFrame {
            variant = variant.isEmpty ? Self.firstFrameMarker : variant + "|>" + Self.firstFrameMarker
        }
        for (on, marker) in [(options.readsMetadata, Self.metadataMarker), (options.prefersEmbeddedThumbnail, Self.thumbnailMarker)] where on {
            variant = variant.isEmpty ? marker : variant + "|>" + marker
        }
        if options.page != 0 {
            let marker = Self.pageMarker + String(options.page)
            variant = variant.isEmpty ? marker : variant + "|>" + marker
        }
        self.variant = variant
        decodingOptions = options.downloadOptions.effectiveDecodingOptions
        variantDecodingOptions = options.decodingOptions
        memoryHold = options.memoryBudget.map(MemoryHold.init(budget:))
    }

    /// `true` when the variant is the original as stored (no processor, all frames).
    var variantIsOriginal: Bool { variant.isEmpty }

    /// `true` when the variant is written to disk: a processed image. Without a processor the
    /// original bytes are written instead, under the bare key.
    var storesVariantOnDisk: Bool { !processorIsDefault }

    /// The entry a load for this request writes first: the variant in the target cache, or
    /// without a processor the original (in the target cache, which is then the original cache).
    struct WorkEntry: Sendable {
        let cache: ImageCache
        let identifier: String
        let kind: ImageManager.DiskHit.Kind
    }

    /// See ``WorkEntry``: what processes sharing a tier coalesce on.
    var workEntry: WorkEntry {
        storesVariantOnDisk ? WorkEntry(cache: targetCache, identifier: variant, kind: .variant)
            : WorkEntry(cache: originalCache, identifier: "", kind: .original)
    }

    /// The key that identifies this request's work among those in flight.
    var pipelineKey: PipelineKey {
        var flags: PipelineKey.Flags = []
        if options.forceRefresh { flags.insert(.forceRefresh) }
        if options.fromMemoryCacheOrRefresh { flags.insert(.fromMemoryCacheOrRefresh) }
        if options.onlyFromCache { flags.insert(.onlyFromCache) }
        if options.cacheMemoryOnly { flags.insert(.cacheMemoryOnly) }
        if options.waitForCache { flags.insert(.waitForCache) }
        if options.cacheOriginalImage { flags.insert(.cacheOriginalImage) }
        if options.respectHTTPFreshness { flags.insert(.respectHTTPFreshness) }
        let url: URL?
        switch source {
        case .network(let resource): url = resource.downloadURL
        case .provider: url = nil
        }
        return PipelineKey(url: url, cacheKey: key, variant: variant, decoding: decodingOptions,
                           targetCache: ObjectIdentifier(targetCache), originalCache: ObjectIdentifier(originalCache),
                           downloader: ObjectIdentifier(downloader), forcedExtension: options.forcedExtension, flags: flags)
    }

    /// The memory expiration of an image stored now: the option's, capped by the response's
    /// freshness under ``AlcedoOptionsInfoItem/respectHTTPFreshness``.
    func memoryExpiration(for info: HTTPCacheInfo?) -> StorageExpiration? {
        guard options.respectHTTPFreshness, let freshUntil = info?.freshUntil else { return options.memoryCacheExpiration }
        let now = Date()
        let configured = options.memoryCacheExpiration ?? targetCache.memoryStorage.config.expiration
        return configured.estimatedExpiration(since: now) <= freshUntil ? configured : (freshUntil <= now ? .expired : .date(freshUntil))
    }

    /// `true` when a disk entry with `info` must be asked about before it is used.
    func needsRevalidation(_ info: HTTPCacheInfo?) -> Bool {
        guard options.respectHTTPFreshness, !options.onlyFromCache, case .network = source, let info else { return false }
        return info.isStale(at: Date())
    }
}

/// What identifies one run of the flow among those in flight: the same source key, variant,
/// decoding, caches, downloader and cache-affecting options.
struct PipelineKey: Hashable, Sendable {
    struct Flags: OptionSet, Hashable, Sendable {
        let rawValue: UInt16
        static let forceRefresh = Flags(rawValue: 1 << 0)
        static let fromMemoryCacheOrRefresh = Flags(rawValue: 1 << 1)
        static let onlyFromCache = Flags(rawValue: 1 << 2)
        static let cacheMemoryOnly = Flags(rawValue: 1 << 3)
        static let waitForCache = Flags(rawValue: 1 << 4)
        static let cacheOriginalImage = Flags(rawValue: 1 << 5)
        static let respectHTTPFreshness = Flags(rawValue: 1 << 6)
        /// The run loads without looking in the caches first (``ImageManager/loadAndCacheImage(source:context:completionHandler:)``).
        static let skipsCacheLookup = Flags(rawValue: 1 << 7)
    }

    /// The download URL of a network source; `nil` for a provider.
    let url: URL?
    let cacheKey: String
    let variant: String
    let decoding: DecodingOptions
    let targetCache: ObjectIdentifier
    let originalCache: ObjectIdentifier
    let downloader: ObjectIdentifier
    /// The disk files' forced extension: requests that store under different names are not one.
    let forcedExtension: String?
    var flags: Flags
}

/// What one run of the flow produced, shared by every caller that waited for it.
struct LoadedImage: Sendable {
    var image: AlcedoImage
    /// Where the bytes (or the decoded original) the image was made from came from.
    var cacheType: CacheType
    var originalData: Data?
    var response: DownloadResponse?
    var metrics: RetrieveImageMetrics
    /// The processed variant's bytes as the serializer wrote them, when at hand.
    var variantData: Data? = nil
    /// `true` when the image was processed now from an original found in a cache: the
    /// caller's ``RetrieveImageResult/cacheType`` is then `.none`, as in Kingfisher.
    var processedFromCachedOriginal = false
    /// The HTTP facts kept with the cache entry that answered (a disk or shared-tier hit).
    var storedCacheInfo: HTTPCacheInfo? = nil
}
