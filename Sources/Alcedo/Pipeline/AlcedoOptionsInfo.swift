import Foundation

/// The options of one request, as a list: `[.processor(p), .forceRefresh, .cacheOriginalImage]`.
/// When an option appears twice, the last one wins. A manager's
/// ``ImageManager/defaultOptions`` come before the request's own.
public typealias AlcedoOptionsInfo = [AlcedoOptionsInfoItem]

/// One option of a request (Kingfisher's `KingfisherOptionsInfoItem`). Every option not given
/// keeps the default stated on it.
public enum AlcedoOptionsInfoItem: Sendable {
    /// The cache processed images are read from and stored in. Default: the manager's ``ImageManager/cache``.
    case targetCache(ImageCache)
    /// The cache the original (unprocessed) image is read from and, with
    /// ``cacheOriginalImage``, stored in. Default: the target cache.
    case originalCache(ImageCache)
    /// The downloader for network sources. Default: the manager's ``ImageManager/downloader``.
    case downloader(ImageDownloader)
    /// Do not read the caches; load again. For a network source whose response is on disk
    /// with validators (`ETag`, `Last-Modified`), the request is conditional: a
    /// `304 Not Modified` serves the cached bytes (and refreshes their freshness), a `200`
    /// replaces them.
    case forceRefresh
    /// Use the memory cache; on a miss, skip the disk cache and load as ``forceRefresh`` does.
    case fromMemoryCacheOrRefresh
    /// Never load: serve from the caches or fail with
    /// ``CacheErrorReason/imageNotExisting(key:)``.
    case onlyFromCache
    /// Store in memory only, never on disk.
    case cacheMemoryOnly
    /// Deliver the result only once it is stored on disk. Default: the disk write finishes
    /// after delivery (a memory store always happens before).
    case waitForCache
    /// For ``ImagePrefetcher``: an image found only on disk is also loaded into the memory
    /// cache (it still counts as skipped). Default: such an image is skipped without loading.
    case alsoPrefetchToMemory
    /// With a processor, also store the original bytes on disk in the original cache, so
    /// another processor can start from them without a download.
    case cacheOriginalImage
    /// The processor run on the decoded image; its identifier keys the cached variant
    /// (`key@identifier`), and its ``ImageProcessor/decodingTarget`` lets the decoder scale.
    /// Default ``DefaultImageProcessor``.
    case processor(any ImageProcessor)
    /// Turns images into disk bytes and back. Default: the target cache's serializer.
    case cacheSerializer(any CacheSerializer)
    /// Changes the delivered image, after the caches (never stored). Default: none.
    case imageModifier(any ImageModifier)
    /// Changes or refuses the download request. Default: none.
    case requestModifier(any ImageDownloadRequestModifier)
    /// Decides about redirects. Default: follow, within the downloader's limit.
    case redirectHandler(any ImageDownloadRedirectHandler)
    /// The download's place in the per-host queue. Default `.normal` (`.low` for the prefetcher).
    case downloadPriority(DownloadPriority)
    /// The memory expiration of stored images. Default: the memory storage's (300 s).
    case memoryCacheExpiration(StorageExpiration)
    /// What a memory hit does to the entry's expiration. Default `.cacheTime`.
    case memoryCacheAccessExtendingExpiration(ExpirationExtending)
    /// The disk expiration of stored images. Default: the disk storage's (7 days).
    case diskCacheExpiration(StorageExpiration)
    /// What a disk hit does to the entry's expiration. Default `.cacheTime`.
    case diskCacheAccessExtendingExpiration(ExpirationExtending)
    /// Decode only the first frame of an animation; a cached animation is delivered as its
    /// first frame.
    case onlyLoadFirstFrame
    /// Decode page N (from 0) of a multi-page source (TIFF); a page the file lacks is a
    /// decoding error. Default 0, the first page. The page is part of the processed cache key.
    case page(Int)
    /// Retries failed downloads. Default: none.
    case retryStrategy(any RetryStrategy)
    /// Sources tried in order when the source fails (cancellation excepted); when every one
    /// fails, the error is ``ImageSettingErrorReason/alternativeSourcesExhausted(_:)``.
    case alternativeSources([Source])
    /// Where callback forms call back. Default ``CallbackQueue/untouch``.
    case callbackQueue(CallbackQueue)
    /// Kingfisher 8's request to check the caches off the caller's thread, returning at once a
    /// task that can cancel whatever comes next (Kingfisher's default checks the disk on the
    /// caller's thread first). Alcedo's callback forms always work that way, with or without the
    /// option: it is accepted, and read into ``AlcedoParsedOptionsInfo/asyncCacheTypeCheck``, so that
    /// shared code compiles unchanged.
    case asyncCacheTypeCheck
    /// Where the processor runs (Kingfisher's option): ``CallbackQueue/dispatch(_:)`` runs it on
    /// that queue, after the bytes are decoded on Alcedo's work pool; ``CallbackQueue/untouch``
    /// runs it on the thread that finished decoding. Default (no option): on the work pool with
    /// the decode, bounded to the core count.
    case processingQueue(CallbackQueue)
    /// Honour the server's freshness (`Cache-Control: max-age`, `no-cache`, `Expires`): a
    /// disk entry that has gone stale is revalidated with a conditional request before it is
    /// used, and images stored in memory expire when their response does.
    case respectHTTPFreshness
    /// Limits for decoding (decompression bombs). Default ``DecodingLimits/default``.
    case decodingLimits(DecodingLimits)
    /// The most bytes a download for this request may have, below the downloader's own
    /// limit (default: the downloader's ``ImageDownloader/Configuration/maximumBodySize``);
    /// see ``DownloadOptions/maximumBodySize``.
    case maximumBodySize(Int)
    /// Reserve each decode's working set from this budget before decoding: it is estimated
    /// from the source's header (``WorkingSetEstimate``), waits while the memory is not free
    /// and fails with ``AlcedoError/memoryBudgetError(reason:)`` when it could never fit or
    /// the budget's queue is full. Held until the result is stored. Default: none.
    case memoryBudget(MemoryBudget)
    /// What to do with the colour profiles images carry. Default ``ColorManagement/convertToSRGB``:
    /// every image is converted to sRGB once, after decoder-side scaling. Images decoded under
    /// another setting are cached apart from the default ones.
    case colorManagement(ColorManagement)
    /// Read the EXIF, XMP and IPTC blocks of decoded files into ``AlcedoImage/metadata``
    /// (``DecodingOptions/readsMetadata``). Default: not read. Cached apart from images decoded without it.
    case readMetadata
    /// Decode the thumbnail a HEIC or AVIF file embeds instead of its main image, when it has
    /// one (``DecodingOptions/prefersEmbeddedThumbnail``, imgproxy's `enforce_thumbnail`).
    /// Default: the main image. Cached apart from images decoded without it.
    case preferEmbeddedThumbnail
    /// Bindings: keep the current image while loading instead of showing the placeholder.
    case keepCurrentImageWhileLoading
    /// Bindings: the image shown when loading fails (default: none; the target is left as it is).
    case onFailureImage(AlcedoImage?)
    /// Read `file://` URLs given as a `URL` or a ``Resource`` from the local disk (through a
    /// ``LocalFileImageDataProvider``). Default: off, and such a request fails with
    /// ``RequestErrorReason/localFileNotAllowed(_:)`` before any cache or file is looked at,
    /// so a URL that comes from outside (a query parameter of a server) cannot read local files
    /// nor learn which paths exist. `Source.provider(LocalFileImageDataProvider(fileURL:))`
    /// reads a file without this option: naming the provider is the explicit choice.
    case allowLocalFiles
    /// Show a progressive JPEG while it downloads: the scans received so far are decoded and
    /// delivered as previews, on ``RetrieveImageTask/progressiveImages`` and to a bound
    /// target, before the final image (see ``ImageProgressive``). Default: off (no previews).
    case progressiveJPEG(ImageProgressive)

    // MARK: Kingfisher options without a screen

    /// Kingfisher's transition when an image is shown. **No effect on Linux** (there is no view
    /// to animate); accepted so that a Kingfisher option list compiles unchanged.
    case transition(ImageTransition)
    /// Kingfisher's "run the transition for cached images too". **No effect on Linux.**
    case forceTransition
    /// The scale of sizes given in points (Kingfisher's `.scaleFactor`, default 1). The nearest
    /// meaning without a screen: the target sizes of the request's processor
    /// (``DownsamplingImageProcessor``, ``ResizingImageProcessor``, ``CroppingImageProcessor``,
    /// the ``RoundCornerImageProcessor`` target size) are multiplied by it, so
    /// `DownsamplingImageProcessor(size: CGSize(width: 100, height: 100))` with
    /// `.scaleFactor(2)` gives 200x200 pixels, as it does on a 2x screen with Kingfisher.
    /// Processors of your own are left as they are.
    case scaleFactor(CGFloat)
    /// Kingfisher's "decode off the main thread". **No effect on Linux:** Alcedo always decodes
    /// on its work pool, never on the caller's thread.
    case backgroundDecode
    /// Kingfisher's "decode every frame of an animation up front". **No effect on Linux:**
    /// Alcedo decodes every frame anyway (unless ``onlyLoadFirstFrame``).
    case preloadAllAnimationData
    /// Kingfisher's "read the disk cache on the calling thread". Honoured by the callback form
    /// of ``ImageCache/retrieveImageInDiskCache(forKey:options:callbackQueue:completionHandler:)``;
    /// everywhere else (the manager, `async` calls) disk reads run on the cache's I/O queue,
    /// never blocking the caller.
    case loadDiskFileSynchronously
    /// Kingfisher's options for writing disk cache files (`Data.WritingOptions`). **No effect
    /// on Linux:** every entry is written to a temporary file and renamed over the entry, which
    /// is what `.atomic` asks; the value is kept in
    /// ``AlcedoParsedOptionsInfo/diskStoreWriteOptions`` so that shared code compiles unchanged.
    case diskStoreWriteOptions(Data.WritingOptions)
    /// Kingfisher's Low Data Mode source: the source to load instead when the system's Low
    /// Data Mode stops a request on a constrained network (`nil`: fail then). **Never used on
    /// Linux:** there is no Low Data Mode or constrained network, so no request is stopped for
    /// it and the requested source is always loaded; accepted (and kept in
    /// ``AlcedoParsedOptionsInfo/lowDataModeSource``) so that shared code compiles unchanged.
    case lowDataMode(Source?)
    /// The extension of the disk cache files this request reads and writes, instead of the disk
    /// storage's ``DiskStorage/EntryStore/Config/pathExtension`` (`nil`: the configured one, the
    /// default when the option is absent), as Kingfisher's `.forcedCacheFileExtension`. It applies
    /// to the processed image in the target cache and the original in the original cache alike:
    /// entries stored with another extension, or without one, are not found by this request.
    /// Memory entries do not depend on it.
    case forcedCacheFileExtension(String?)
}
