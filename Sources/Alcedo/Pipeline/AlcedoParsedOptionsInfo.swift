import Foundation

/// An ``AlcedoOptionsInfo`` list read into fields, the last occurrence of each option winning.
/// Every field has the default stated on its option in ``AlcedoOptionsInfoItem``.
public struct AlcedoParsedOptionsInfo: Sendable {
    /// ``AlcedoOptionsInfoItem/targetCache(_:)``. `nil`: the default stated there.
    public var targetCache: ImageCache?
    /// ``AlcedoOptionsInfoItem/originalCache(_:)``. `nil`: the default stated there.
    public var originalCache: ImageCache?
    /// ``AlcedoOptionsInfoItem/downloader(_:)``. `nil`: the default stated there.
    public var downloader: ImageDownloader?
    /// ``AlcedoOptionsInfoItem/forceRefresh``.
    public var forceRefresh = false
    /// ``AlcedoOptionsInfoItem/fromMemoryCacheOrRefresh``.
    public var fromMemoryCacheOrRefresh = false
    /// ``AlcedoOptionsInfoItem/onlyFromCache``.
    public var onlyFromCache = false
    /// ``AlcedoOptionsInfoItem/cacheMemoryOnly``.
    public var cacheMemoryOnly = false
    /// ``AlcedoOptionsInfoItem/waitForCache``.
    public var waitForCache = false
    /// ``AlcedoOptionsInfoItem/asyncCacheTypeCheck`` (default `false`; Alcedo checks the caches
    /// off the caller's thread either way).
    public var asyncCacheTypeCheck = false
    /// ``AlcedoOptionsInfoItem/alsoPrefetchToMemory``.
    public var alsoPrefetchToMemory = false
    /// ``AlcedoOptionsInfoItem/cacheOriginalImage``.
    public var cacheOriginalImage = false
    /// ``AlcedoOptionsInfoItem/processor(_:)``.
    public var processor: any ImageProcessor = DefaultImageProcessor.default
    /// ``AlcedoOptionsInfoItem/cacheSerializer(_:)``. `nil`: the default stated there.
    public var cacheSerializer: (any CacheSerializer)?
    /// ``AlcedoOptionsInfoItem/imageModifier(_:)``.
    public var imageModifier: (any ImageModifier)?
    /// ``AlcedoOptionsInfoItem/requestModifier(_:)``.
    public var requestModifier: (any ImageDownloadRequestModifier)?
    /// ``AlcedoOptionsInfoItem/redirectHandler(_:)``.
    public var redirectHandler: (any ImageDownloadRedirectHandler)?
    /// ``AlcedoOptionsInfoItem/downloadPriority(_:)``.
    public var downloadPriority: DownloadPriority = .normal
    /// ``AlcedoOptionsInfoItem/memoryCacheExpiration(_:)``. `nil`: the default stated there.
    public var memoryCacheExpiration: StorageExpiration?
    /// ``AlcedoOptionsInfoItem/memoryCacheAccessExtendingExpiration(_:)``.
    public var memoryCacheAccessExtendingExpiration: ExpirationExtending = .cacheTime
    /// ``AlcedoOptionsInfoItem/diskCacheExpiration(_:)``. `nil`: the default stated there.
    public var diskCacheExpiration: StorageExpiration?
    /// ``AlcedoOptionsInfoItem/diskCacheAccessExtendingExpiration(_:)``.
    public var diskCacheAccessExtendingExpiration: ExpirationExtending = .cacheTime
    /// ``AlcedoOptionsInfoItem/onlyLoadFirstFrame``.
    public var onlyLoadFirstFrame = false
    /// ``AlcedoOptionsInfoItem/page(_:)``.
    public var page = 0
    /// ``AlcedoOptionsInfoItem/retryStrategy(_:)``.
    public var retryStrategy: (any RetryStrategy)?
    /// ``AlcedoOptionsInfoItem/alternativeSources(_:)``.
    public var alternativeSources: [Source]?
    /// ``AlcedoOptionsInfoItem/callbackQueue(_:)``.
    public var callbackQueue: CallbackQueue = .untouch
    /// ``AlcedoOptionsInfoItem/processingQueue(_:)`` (default `nil`: on the work pool).
    public var processingQueue: CallbackQueue?
    /// ``AlcedoOptionsInfoItem/respectHTTPFreshness``.
    public var respectHTTPFreshness = false
    /// ``AlcedoOptionsInfoItem/decodingLimits(_:)``.
    public var decodingLimits: DecodingLimits = .default
    /// ``AlcedoOptionsInfoItem/maximumBodySize(_:)``. `nil`: the downloader's limit.
    public var maximumBodySize: Int?
    /// ``AlcedoOptionsInfoItem/memoryBudget(_:)``.
    public var memoryBudget: MemoryBudget?
    /// ``AlcedoOptionsInfoItem/colorManagement(_:)``.
    public var colorManagement: ColorManagement = .convertToSRGB
    /// ``AlcedoOptionsInfoItem/readMetadata``.
    public var readsMetadata = false
    /// ``AlcedoOptionsInfoItem/preferEmbeddedThumbnail``.
    public var prefersEmbeddedThumbnail = false
    /// ``AlcedoOptionsInfoItem/keepCurrentImageWhileLoading``.
    public var keepCurrentImageWhileLoading = false
    /// ``AlcedoOptionsInfoItem/onFailureImage(_:)``. `nil` when not given; `.some(nil)` when given as `nil`.
    public var onFailureImage: AlcedoImage??
    /// ``AlcedoOptionsInfoItem/allowLocalFiles``.
    public var allowLocalFiles = false
    /// ``AlcedoOptionsInfoItem/progressiveJPEG(_:)``. `nil`: no previews.
    public var progressiveJPEG: ImageProgressive?
    /// ``AlcedoOptionsInfoItem/scaleFactor(_:)`` (default 1), already applied to ``processor``.
    public var scaleFactor: CGFloat = 1

    /// ``scaleFactor`` as the ``AlcedoImage/pointScale`` of the images the request gives (1
    /// when it is not a positive number).
    var pointScale: Double { scaleFactor > 0 && Double(scaleFactor).isFinite ? Double(scaleFactor) : 1 }
    /// ``AlcedoOptionsInfoItem/transition(_:)`` (no effect on Linux; kept for reading back).
    public var transition: ImageTransition = .none
    /// ``AlcedoOptionsInfoItem/forceTransition`` (no effect on Linux).
    public var forceTransition = false
    /// ``AlcedoOptionsInfoItem/backgroundDecode`` (no effect on Linux).
    public var backgroundDecode = false
    /// ``AlcedoOptionsInfoItem/preloadAllAnimationData`` (no effect on Linux).
    public var preloadAllAnimationData = false
    /// ``AlcedoOptionsInfoItem/loadDiskFileSynchronously`` (honoured only by the cache's callback disk read).
    public var loadDiskFileSynchronously = false
    /// ``AlcedoOptionsInfoItem/diskStoreWriteOptions(_:)`` (default `[]`; no effect on Linux).
    public var diskStoreWriteOptions: Data.WritingOptions = []
    /// ``AlcedoOptionsInfoItem/lowDataMode(_:)`` (default `nil`; never used on Linux).
    public var lowDataModeSource: Source?
    /// ``AlcedoOptionsInfoItem/forcedCacheFileExtension(_:)`` (default `nil`: the disk storage's extension).
    public var forcedExtension: String?
    /// Kingfisher's check that the request is still wanted (the view it is for still waits for
    /// this source); no option item sets it. When it answers `false`, a disk-cache retrieval stops
    /// before reading, decoding or storing in memory (``ImageCache`` answers `.none`), and the
    /// manager neither starts the work nor tries alternative sources: the request ends with
    /// ``ImageSettingErrorReason/notCurrentSourceTask(result:error:source:)``. Default `nil`: always wanted.
    public var sourceTaskIdentifierChecker: (@Sendable () -> Bool)?

    /// `true` when ``sourceTaskIdentifierChecker`` says the request is no longer wanted.
    public var isSourceTaskStale: Bool { sourceTaskIdentifierChecker.map { !$0() } ?? false }

    /// Kingfisher's options for making an image from data with these options: the scale factor,
    /// ``preloadAllAnimationData`` and ``onlyLoadFirstFrame``.
    public var imageCreatingOptions: ImageCreatingOptions {
        ImageCreatingOptions(scale: scaleFactor, duration: 0, preloadAll: preloadAllAnimationData, onlyFirstFrame: onlyLoadFirstFrame)
    }

    /// Reads `info` (default `nil`: every option at its default).
    public init(_ info: AlcedoOptionsInfo?) {
        for item in info ?? [] {
            switch item {
            case .targetCache(let cache): targetCache = cache
            case .originalCache(let cache): originalCache = cache
            case .downloader(let downloader): self.downloader = downloader
            case .forceRefresh: forceRefresh = true
            case .fromMemoryCacheOrRefresh: fromMemoryCacheOrRefresh = true
            case .onlyFromCache: onlyFromCache = true
            case .cacheMemoryOnly: cacheMemoryOnly = true
            case .waitForCache: waitForCache = true
            case .asyncCacheTypeCheck: asyncCacheTypeCheck = true
            case .alsoPrefetchToMemory: alsoPrefetchToMemory = true
            case .cacheOriginalImage: cacheOriginalImage = true
            case .processor(let processor): self.processor = processor
            case .cacheSerializer(let serializer): cacheSerializer = serializer
            case .imageModifier(let modifier): imageModifier = modifier
            case .requestModifier(let modifier): requestModifier = modifier
            case .redirectHandler(let handler): redirectHandler = handler
            case .downloadPriority(let priority): downloadPriority = priority
            case .memoryCacheExpiration(let expiration): memoryCacheExpiration = expiration
            case .memoryCacheAccessExtendingExpiration(let extending): memoryCacheAccessExtendingExpiration = extending
            case .diskCacheExpiration(let expiration): diskCacheExpiration = expiration
            case .diskCacheAccessExtendingExpiration(let extending): diskCacheAccessExtendingExpiration = extending
            case .onlyLoadFirstFrame: onlyLoadFirstFrame = true
            case .page(let index): page = max(0, index)
            case .retryStrategy(let strategy): retryStrategy = strategy
            case .alternativeSources(let sources): alternativeSources = sources
            case .callbackQueue(let queue): callbackQueue = queue
            case .processingQueue(let queue): processingQueue = queue
            case .respectHTTPFreshness: respectHTTPFreshness = true
            case .decodingLimits(let limits): decodingLimits = limits
            case .maximumBodySize(let bytes): maximumBodySize = bytes
            case .memoryBudget(let budget): memoryBudget = budget
            case .colorManagement(let management): colorManagement = management
            case .readMetadata: readsMetadata = true
            case .preferEmbeddedThumbnail: prefersEmbeddedThumbnail = true
            case .keepCurrentImageWhileLoading: keepCurrentImageWhileLoading = true
            case .onFailureImage(let image): onFailureImage = .some(image)
            case .allowLocalFiles: allowLocalFiles = true
            case .progressiveJPEG(let progressive): progressiveJPEG = progressive
            case .scaleFactor(let factor): scaleFactor = factor
            case .transition(let value): transition = value
            case .forceTransition: forceTransition = true
            case .backgroundDecode: backgroundDecode = true
            case .preloadAllAnimationData: preloadAllAnimationData = true
            case .loadDiskFileSynchronously: loadDiskFileSynchronously = true
            case .diskStoreWriteOptions(let options): diskStoreWriteOptions = options
            case .lowDataMode(let source): lowDataModeSource = source
            case .forcedCacheFileExtension(let ext): forcedExtension = ext
            }
        }
        if scaleFactor != 1, scaleFactor > 0, let scalable = processor as? any PointSizedProcessor {
            processor = scalable.scaled(by: Double(scaleFactor))
        }
    }

    /// How images are decoded for this request, before the processor's decoding target.
    var decodingOptions: DecodingOptions {
        var options = DecodingOptions(firstFrameOnly: onlyLoadFirstFrame, limits: decodingLimits, colorManagement: colorManagement)
        options.page = page
        options.readsMetadata = readsMetadata
        options.prefersEmbeddedThumbnail = prefersEmbeddedThumbnail
        return options
    }

    /// The download options for this request.
    var downloadOptions: DownloadOptions {
        DownloadOptions(priority: downloadPriority, processor: processor, decodingOptions: decodingOptions,
                        requestModifier: requestModifier, redirectHandler: redirectHandler, retryStrategy: retryStrategy,
                        maximumBodySize: maximumBodySize)
    }
}
