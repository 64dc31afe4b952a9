/// How one caller wants an image downloaded.
///
/// Callers of the same URL share one network request; the request-level options
/// (``requestModifier``, ``redirectHandler``, ``retryStrategy``) of the caller that started it
/// apply to all of them. ``priority`` is the highest among the callers. ``processor`` and
/// ``decodingOptions`` are per caller: each distinct pair is decoded and processed once.
public struct DownloadOptions: Sendable {
    /// The place in the per-host queue (default `.normal`; use `.low` for prefetching).
    public var priority: DownloadPriority
    /// Runs on the decoded image (default ``DefaultImageProcessor``); its
    /// ``ImageProcessor/decodingTarget`` lets the decoder scale while decoding.
    public var processor: any ImageProcessor
    /// Options for the decoder (default ``DecodingOptions/default``); `targetSize` and
    /// `contentMode` are taken from the processor's decoding target when it has one, and
    /// `processedSize` from the processor's ``ImageProcessor/outputSize(for:)`` when not set.
    public var decodingOptions: DecodingOptions
    /// Changes or refuses the request before it is sent (default `nil`).
    public var requestModifier: (any ImageDownloadRequestModifier)?
    /// Decides about each redirect (default `nil`: follow, within the downloader's limit).
    public var redirectHandler: (any ImageDownloadRedirectHandler)?
    /// Retries failed attempts (default `nil`: no retry).
    public var retryStrategy: (any RetryStrategy)?
    /// The most bytes this caller accepts for the body (default `nil`: the downloader's
    /// ``ImageDownloader/Configuration/maximumBodySize``); the smaller of the two applies. A
    /// larger `Content-Length` is refused before the body is read, and a body without one is
    /// cut off as soon as it passes the limit (`.responseError(.bodyTooLarge)`). Callers
    /// with different limits do not share a request.
    public var maximumBodySize: Int?

    /// Creates options; every parameter defaults to the value stated on its property.
    public init(priority: DownloadPriority = .normal, processor: any ImageProcessor = DefaultImageProcessor.default,
                decodingOptions: DecodingOptions = .default, requestModifier: (any ImageDownloadRequestModifier)? = nil,
                redirectHandler: (any ImageDownloadRedirectHandler)? = nil, retryStrategy: (any RetryStrategy)? = nil,
                maximumBodySize: Int? = nil) {
        self.priority = priority
        self.processor = processor
        self.decodingOptions = decodingOptions
        self.requestModifier = requestModifier
        self.redirectHandler = redirectHandler
        self.retryStrategy = retryStrategy
        self.maximumBodySize = maximumBodySize
    }

    /// The decoding options with the processor's decoding target applied, and its result's
    /// size as the hint a memory budget reserves by (unless the caller set one).
    var effectiveDecodingOptions: DecodingOptions {
        var options = decodingOptions
        if let target = processor.decodingTarget {
            options.targetSize = target.size
            options.contentMode = target.mode
        }
        let processor = processor
        if options.processedSize == nil, case let identifier = processor.identifier, !identifier.isEmpty {
            options.processedSize = ProcessedSizeHint(processor)
        }
        return options
    }
}
