/// An ``AlcedoOptionsInfo`` list read into fields, the last occurrence of each option winning.
/// Every field has the default stated on its option in ``AlcedoOptionsInfoItem``.
public struct AlcedoParsedOptionsInfo: Sendable {
    public var targetCache: ImageCache?
    public var originalCache: ImageCache?
    public var downloader: ImageDownloader?
    public var forceRefresh = false
    public var fromMemoryCacheOrRefresh = false
    public var onlyFromCache = false
    public var cacheMemoryOnly = false
    public var waitForCache = false
    public var cacheOriginalImage = false
    public var processor: any ImageProcessor = DefaultImageProcessor.default
    public var cacheSerializer: (any CacheSerializer)?
    public var imageModifier: (any ImageModifier)?
    public var requestModifier: (any ImageDownloadRequestModifier)?
    public var redirectHandler: (any ImageDownloadRedirectHandler)?
    public var downloadPriority: DownloadPriority = .normal
    public var memoryCacheExpiration: StorageExpiration?
    public var memoryCacheAccessExtendingExpiration: ExpirationExtending = .cacheTime
    public var diskCacheExpiration: StorageExpiration?
    public var diskCacheAccessExtendingExpiration: ExpirationExtending = .cacheTime
    public var onlyLoadFirstFrame = false
    public var retryStrategy: (any RetryStrategy)?
    public var alternativeSources: [Source]?
    public var callbackQueue: CallbackQueue = .untouch
    public var respectHTTPFreshness = false
    public var decodingLimits: DecodingLimits = .default
    public var keepCurrentImageWhileLoading = false
    public var onFailureImage: AlcedoImage??

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
            case .retryStrategy(let strategy): retryStrategy = strategy
            case .alternativeSources(let sources): alternativeSources = sources
            case .callbackQueue(let queue): callbackQueue = queue
            case .respectHTTPFreshness: respectHTTPFreshness = true
            case .decodingLimits(let limits): decodingLimits = limits
            case .keepCurrentImageWhileLoading: keepCurrentImageWhileLoading = true
            case .onFailureImage(let image): onFailureImage = .some(image)
            }
        }
    }

    /// How images are decoded for this request, before the processor's decoding target.
    var decodingOptions: DecodingOptions {
        DecodingOptions(firstFrameOnly: onlyLoadFirstFrame, limits: decodingLimits)
    }

    /// The download options for this request.
    var downloadOptions: DownloadOptions {
        DownloadOptions(priority: downloadPriority, processor: processor, decodingOptions: decodingOptions,
                        requestModifier: requestModifier, redirectHandler: redirectHandler, retryStrategy: retryStrategy)
    }
}
