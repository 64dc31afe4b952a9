#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What ``ImageManager/retrieveImage(with:options:progressBlock:previewHandler:)-(Source,_,_,_)`` delivers.
public struct RetrieveImageResult: Sendable {
    /// The image, processed, with the image modifier (if any) applied.
    public let image: AlcedoImage
    /// Where the image came from, as Kingfisher reports it: `.memory` or `.disk` when this
    /// processed image was in that cache (`.disk` also for cached bytes confirmed by a
    /// `304 Not Modified`), `.none` when it was made now: loaded from the network or a
    /// provider, or processed from an original found in a cache (see ``originalCacheType``).
    public let cacheType: CacheType
    /// Where the bytes, or the decoded original, the image was made from came from: the same
    /// as ``cacheType``, except for an image processed now from a cached original, where it is
    /// `.memory` or `.disk` (the original's cache) while ``cacheType`` is `.none`. An image
    /// server reports this one (no source bytes were fetched).
    public let originalCacheType: CacheType
    /// The source that gave the image: the requested one, or an alternative source.
    public let source: Source
    /// The source that was requested (differs from ``source`` after an alternative source was used).
    public let originalSource: Source
    /// The encoded bytes the image was decoded from, when they were at hand: after a load, or
    /// a disk hit. `nil` for a memory hit.
    public let originalData: Data?
    /// The final response head of a download (`nil` when nothing was downloaded; the `304`
    /// of a revalidation).
    public let response: DownloadResponse?
    /// Where the time went.
    public let metrics: RetrieveImageMetrics
    /// The processed image's bytes as the cache serializer encoded them for the disk cache
    /// (for a request with a processor): read from the disk or the shared tier on a hit of the
    /// variant, or written before delivery under ``AlcedoOptionsInfoItem/waitForCache``.
    /// `nil` when they were not at hand (a memory hit, a write after delivery, no processor).
    /// A server whose serializer writes its response format sends these bytes as they are,
    /// without encoding the image again.
    public let variantData: Data?
    /// The source's HTTP validators and freshness as kept with the cache entry that answered (a
    /// disk or shared-tier hit, of the variant or of the original); `nil` after a download or a
    /// memory hit. A variant found in another machine's tier keeps its source's `ETag` here.
    public let storedCacheInfo: HTTPCacheInfo?
    /// The serializer of the cache the request used, for ``data()`` (`nil`: ``DefaultCacheSerializer/default``).
    var cacheSerializer: (any CacheSerializer)?

    /// Kingfisher's `data()`: the bytes of this result. For an image loaded now (``originalCacheType``
    /// `.none`: downloaded or from a provider) the bytes it was decoded from; otherwise, as
    /// Kingfisher, the image encoded by the request's cache serializer
    /// (`data(with: image, original: nil)`), which takes time: keep the value. `nil` when the
    /// serializer cannot encode the image.
    public func data() -> Data? {
        if originalCacheType == .none, let originalData { return originalData }
        return (cacheSerializer ?? DefaultCacheSerializer.default).data(with: image, original: nil)
    }

    /// Creates a result; `originalCacheType` defaults to `cacheType`, `storedCacheInfo` to `nil`.
    public init(image: AlcedoImage, cacheType: CacheType, source: Source, originalSource: Source,
                originalData: Data?, response: DownloadResponse?, metrics: RetrieveImageMetrics, variantData: Data? = nil,
                originalCacheType: CacheType? = nil, storedCacheInfo: HTTPCacheInfo? = nil) {
        self.storedCacheInfo = storedCacheInfo
        self.image = image
        self.cacheType = cacheType
        self.originalCacheType = originalCacheType ?? cacheType
        self.source = source
        self.originalSource = originalSource
        self.originalData = originalData
        self.response = response
        self.metrics = metrics
        self.variantData = variantData
    }
}

/// The time one request spent in each stage. Requests that joined work already in flight
/// share its figures; stages that did not run are zero.
public struct RetrieveImageMetrics: Sendable, Hashable, CustomStringConvertible {
    /// Looking in the memory and disk caches (reading the disk entry included, decoding it not).
    public var cacheLookup: Duration = .zero
    /// The part of ``cacheLookup`` spent in the memory cache (the rest went to the disk cache
    /// and the shared tier behind it).
    public var memoryCacheLookup: Duration = .zero
    /// Downloading (or revalidating), or reading a data provider.
    public var loading: Duration = .zero
    /// Waiting for the memory budget to grant the decode's working set (and with it a
    /// processing slot), with ``AlcedoOptionsInfoItem/memoryBudget(_:)``.
    public var memoryWait: Duration = .zero
    /// Decoding the bytes (a download's, a provider's or a disk entry's).
    public var decoding: Duration = .zero
    /// Running the processor.
    public var processing: Duration = .zero
    /// The parts of ``processing``, in the order they ran: each processor of a `|>` chain, or
    /// the steps a processor reported with ``ProcessingStepClock`` (empty when nothing was processed).
    public var processingSteps: [ProcessingStepTime] = []
    /// Storing in the caches before delivery (the memory store, and the disk store with
    /// ``AlcedoOptionsInfoItem/waitForCache``).
    public var storing: Duration = .zero
    /// The part of ``storing`` spent encoding the processed variant for the disk cache (with
    /// ``AlcedoOptionsInfoItem/waitForCache``; zero when the variant was not written before delivery).
    public var encoding: Duration = .zero
    /// From the call to delivery.
    public var total: Duration = .zero

    public init() {}

    public var description: String {
        "total \(total.alcedoMilliseconds), cache \(cacheLookup.alcedoMilliseconds), load \(loading.alcedoMilliseconds), "
            + "decode \(decoding.alcedoMilliseconds), process \(processing.alcedoMilliseconds), store \(storing.alcedoMilliseconds)"
    }
}

extension Duration {
    /// The duration in milliseconds with two decimals, for messages (`12.34 ms`).
    var alcedoMilliseconds: String {
        let milliseconds = alcedoTimeInterval * 1000
        return String(cFormat: "%.2f ms", milliseconds)
    }
}
