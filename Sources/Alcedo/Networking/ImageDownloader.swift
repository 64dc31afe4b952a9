#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// Downloads images over HTTP(S): one network request per URL in flight however many
/// callers ask, per-host limits with priorities, timeouts, size and format checks, retries,
/// progress, and conditional requests for HTTP revalidation.
///
/// ```swift
/// let downloader = ImageDownloader(name: "avatars")
/// let result = try await downloader.downloadImage(with: url)
/// // result.image, result.originalData, result.response.cacheInfo
/// await downloader.shutdown()
/// ```
///
/// Decoding uses an ``ImageCodecRegistry`` with decoder-side scaling from the processor's
/// ``ImageProcessor/decodingTarget``; each distinct processor runs once per URL in flight.
/// Every failure is an ``AlcedoError``: ``AlcedoError/requestError(reason:)`` before a usable
/// response, ``AlcedoError/responseError(reason:)`` for a response that is not an acceptable
/// image body, and the decoder's or processor's own errors.
///
/// A downloader you create owns its loader: call ``shutdown()`` when done with it.
public final class ImageDownloader: Sendable {
    /// The downloader used when none is given. It lives as long as the process.
    public static let `default` = ImageDownloader(name: "default")

    /// A name for logs and debugging.
    public let name: String
    /// The limits and defaults of this downloader. Settable on a live downloader (thread-safe):
    /// a change applies to requests that start after it; requests in flight keep the values
    /// they started with. See also the Kingfisher-style properties such as ``downloadTimeout``.
    public var configuration: Configuration {
        get { settings.withLock { $0 } }
        set {
            settings.withLock { settings in
                settings = newValue
                hostLimiter.setLimit(newValue.maximumConcurrentRequestsPerHost)
                ownedLoader?.configuration = Self.loaderConfiguration(for: newValue)
            }
        }
    }
    /// The transport (default: ``HTTPImageLoader``).
    public let loader: any ImageDataLoading
    /// The decoders used by `downloadImage(with:options:progressBlock:)`.
    public let codecRegistry: ImageCodecRegistry

    let dataFetches = RequestCoalescer<FetchKey, FetchOutcome>(originalURL: { $0.url })
    let imageFetches = RequestCoalescer<ProcessingKey, ImageLoadingResult>(originalURL: { $0.fetch.url })
    let hostLimiter: PriorityLimiter
    private let settings: Mutex<Configuration>
    /// The built-in loader this downloader created, which follows its connection settings.
    private let ownedLoader: HTTPImageLoader?

    /// Creates a downloader.
    /// - Parameters:
    ///   - name: A name for logs and debugging.
    ///   - configuration: Limits and defaults (default ``Configuration/init(maximumConcurrentRequestsPerHost:connectTimeout:timeout:maximumBodySize:acceptableStatusCodes:maximumRedirects:defaultHeaders:delegate:)``).
    ///   - loader: The transport; default `nil` creates an ``HTTPImageLoader``
    ///     with the configuration's connect timeout and per-host limit (and follows their changes).
    ///   - codecRegistry: The decoders to use (default ``ImageCodecRegistry/shared``).
    public init(name: String, configuration: Configuration = Configuration(), loader: (any ImageDataLoading)? = nil,
                codecRegistry: ImageCodecRegistry = .shared) {
        self.name = name
        self.settings = Mutex(configuration)
        let owned = loader == nil ? HTTPImageLoader(configuration: Self.loaderConfiguration(for: configuration)) : nil
        self.ownedLoader = owned
        self.loader = loader ?? owned!
        self.codecRegistry = codecRegistry
        self.hostLimiter = PriorityLimiter(limit: configuration.maximumConcurrentRequestsPerHost)
    }

    /// The built-in loader's settings for a downloader configuration.
    private static func loaderConfiguration(for configuration: Configuration) -> HTTPImageLoader.Configuration {
        HTTPImageLoader.Configuration(connectTimeout: configuration.connectTimeout,
                                                 maximumConnectionsPerHost: max(8, configuration.maximumConcurrentRequestsPerHost))
    }

    /// Changes the configuration in one step (read, change, write under the lock's protection
    /// against a concurrent change being lost).
    func updateConfiguration(_ change: (inout Configuration) -> Void) {
        settings.withLock { settings in
            change(&settings)
            hostLimiter.setLimit(settings.maximumConcurrentRequestsPerHost)
            ownedLoader?.configuration = Self.loaderConfiguration(for: settings)
        }
    }

    // MARK: Images

    /// Downloads, decodes and processes the image at `url`.
    /// - Parameters:
    ///   - url: An `http` or `https` URL.
    ///   - options: Priority, processor, hooks and retries (default: none of them).
    ///   - progressBlock: Called as the body arrives (default `nil`). It takes two parameters,
    ///     so a one-parameter trailing closure is always the callback form's completion handler.
    /// - Throws: ``AlcedoError``; `.requestError(.cancelled)` when the calling task is cancelled.
    public func downloadImage(with url: URL, options: DownloadOptions = DownloadOptions(),
                              progressBlock: DownloadProgressBlock? = nil) async throws(AlcedoError) -> ImageLoadingResult {
        try await imageFetches.value(for: processingKey(url, options), priority: PriorityTicket(priority: options.priority),
                                     progress: progressHandler(progressBlock), work: imageWork(url, options))
    }

    /// Downloads, decodes and processes the image at `url`, calling `completionHandler` once
    /// with the result (on an arbitrary thread). A trailing closure is the completion handler;
    /// the progress block is used only when labelled.
    /// - Returns: A task to cancel this caller or follow its progress.
    @discardableResult
    public func downloadImage(with url: URL, options: DownloadOptions = DownloadOptions(),
                              progressBlock: DownloadProgressBlock? = nil,
                              completionHandler: @escaping @Sendable (Result<ImageLoadingResult, AlcedoError>) -> Void) -> DownloadTask {
        task(imageFetches, key: processingKey(url, options), url: url, priority: options.priority,
             awaitsAsyncModifier: options.requestModifier is any AsyncImageDownloadRequestModifier, progressBlock: progressBlock,
             completionHandler: completionHandler, work: imageWork(url, options))
    }

    // MARK: Data

    /// Downloads the bytes at `url` without decoding them; they are checked to be an image
    /// (by their signature). Used for caching originals.
    public func downloadData(with url: URL, options: DownloadOptions = DownloadOptions(),
                             progressBlock: DownloadProgressBlock? = nil) async throws(AlcedoError) -> ImageDataResult {
        try await downloadData(with: url, options: options, progress: progressHandler(progressBlock))
    }

    func downloadData(with url: URL, options: DownloadOptions,
                      progress: (@Sendable (DownloadProgress) -> Void)?) async throws(AlcedoError) -> ImageDataResult {
        let key = FetchKey(url: url, validators: nil, bodyLimit: options.maximumBodySize)
        let outcome = try await dataFetches.value(for: key, priority: PriorityTicket(priority: options.priority),
                                                  progress: progress, work: dataWork(key, options))
        return try Self.dataResult(outcome, url: url)
    }

    /// Downloads the bytes at `url` without decoding them, calling `completionHandler` once.
    @discardableResult
    public func downloadData(with url: URL, options: DownloadOptions = DownloadOptions(),
                             progressBlock: DownloadProgressBlock? = nil,
                             completionHandler: @escaping @Sendable (Result<ImageDataResult, AlcedoError>) -> Void) -> DownloadTask {
        let key = FetchKey(url: url, validators: nil, bodyLimit: options.maximumBodySize)
        return task(dataFetches, key: key, url: url, priority: options.priority, progressBlock: progressBlock,
                    completionHandler: { completionHandler($0.flatMap { outcome in Result { () throws(AlcedoError) in try Self.dataResult(outcome, url: url) } }) },
                    work: dataWork(key, options))
    }

    /// Asks the server whether the cached entry described by `validators` changed: sends
    /// `If-None-Match` (ETag) and `If-Modified-Since` (Last-Modified).
    ///
    /// - Returns: ``RevalidationResult/notModified(_:response:)`` for a 304, with `validators`
    ///   refreshed by the 304's headers (keep serving the cached bytes), or
    ///   ``RevalidationResult/modified(_:)`` with the new bytes (replace the cached ones).
    ///   Without any validator the request is an ordinary download and the result is `.modified`.
    ///
    /// Conditional requests are coalesced with those carrying the same validators, not with
    /// plain downloads of the URL.
    public func revalidateData(with url: URL, validators: HTTPCacheInfo, options: DownloadOptions = DownloadOptions(),
                               progressBlock: DownloadProgressBlock? = nil) async throws(AlcedoError) -> RevalidationResult {
        try await revalidateData(with: url, validators: validators, options: options, progress: progressHandler(progressBlock))
    }

    func revalidateData(with url: URL, validators: HTTPCacheInfo, options: DownloadOptions,
                        progress: (@Sendable (DownloadProgress) -> Void)?) async throws(AlcedoError) -> RevalidationResult {
        let key = FetchKey(url: url, validators: validators, bodyLimit: options.maximumBodySize)
        let outcome = try await dataFetches.value(for: key, priority: PriorityTicket(priority: options.priority),
                                                  progress: progress, work: dataWork(key, options))
        switch outcome {
        case .notModified(let response):
            return .notModified(validators.revalidated(with: response.headers, at: response.cacheInfo.responseDate),
                                response: response)
        case .downloaded(let data, let response):
            return .modified(ImageDataResult(data: data, url: url, response: response))
        }
    }

    // MARK: Cancelling and shutting down

    /// Cancels every caller of `url` and its network request.
    public func cancel(url: URL) {
        imageFetches.cancelAll { $0.fetch.url == url }
        dataFetches.cancelAll { $0.url == url }
    }

    /// Cancels every download in flight.
    public func cancelAll() {
        imageFetches.cancelAll()
        dataFetches.cancelAll()
    }

    /// Cancels every download and shuts the loader down; the downloader cannot be used after.
    public func shutdown() async {
        cancelAll()
        await loader.shutdown()
    }

    /// The callers waiting for `url`, at the network level (one per data caller, one per
    /// distinct processor of image callers).
    func networkCallerCount(for url: URL) -> Int {
        dataFetches.callerCount(FetchKey(url: url, validators: nil))
    }

    // MARK: Plumbing

    private func processingKey(_ url: URL, _ options: DownloadOptions) -> ProcessingKey {
        ProcessingKey(fetch: FetchKey(url: url, validators: nil, bodyLimit: options.maximumBodySize), processorIdentifier: options.processor.identifier,
                      decoding: options.effectiveDecodingOptions)
    }

    private func dataWork(_ key: FetchKey, _ options: DownloadOptions) -> RequestCoalescer<FetchKey, FetchOutcome>.Work {
        { [self] context in await fetch(key, options: options, context: context) }
    }

    private func imageWork(_ url: URL, _ options: DownloadOptions) -> RequestCoalescer<ProcessingKey, ImageLoadingResult>.Work {
        { [self] context in await decodeAndProcess(url, options: options, context: context) }
    }

    /// Fetches the bytes through the data coalescer, then decodes and processes them once.
    private func decodeAndProcess(_ url: URL, options: DownloadOptions,
                                  context: RequestCoalescer<ProcessingKey, ImageLoadingResult>.WorkContext) async -> Result<ImageLoadingResult, AlcedoError> {
        let key = FetchKey(url: url, validators: nil, bodyLimit: options.maximumBodySize)
        let outcome: FetchOutcome
        do {
            outcome = try await dataFetches.value(for: key, priority: context.ticket, progress: context.reportProgress,
                                                  work: dataWork(key, options))
        } catch {
            return .failure(error)
        }
        let dataResult: ImageDataResult
        do {
            dataResult = try Self.dataResult(outcome, url: url)
        } catch {
            return .failure(error)
        }
        let registry = codecRegistry
        let processor = options.processor
        let decodingOptions = options.effectiveDecodingOptions
        let result = await BlockingWorkPool.shared.run(priority: context.ticket.priority) { () -> Result<ImageLoadingResult, AlcedoError> in
            Result { () throws(AlcedoError) in
                let image = try processor.process(registry.decode(dataResult.data, options: decodingOptions))
                return ImageLoadingResult(image: image, originalData: dataResult.data, url: dataResult.response.requestURL ?? url,
                                          response: dataResult.response)
            }
        }
        if case .success(let loaded) = result, let delegate = configuration.delegate {
            delegate.imageDownloader(self, didDownload: loaded.image, for: url, with: loaded.response)
        }
        return result
    }

    private func task<Key, Value>(_ coalescer: RequestCoalescer<Key, Value>, key: Key, url: URL, priority: DownloadPriority,
                                  awaitsAsyncModifier: Bool = false, progressBlock: DownloadProgressBlock?,
                                  completionHandler: @escaping @Sendable (Result<Value, AlcedoError>) -> Void,
                                  work: @escaping RequestCoalescer<Key, Value>.Work) -> DownloadTask {
        let (stream, continuation) = AsyncStream.makeStream(of: DownloadProgress.self, bufferingPolicy: .bufferingNewest(1))
        let started = DownloadTask.StartFlag(started: !awaitsAsyncModifier)
        let subscription = coalescer.subscribe(
            key, priority: PriorityTicket(priority: priority),
            progress: { progress in
                started.markStarted()
                continuation.yield(progress)
                progressBlock?(Int64(progress.receivedBytes), progress.totalSize)
            },
            completion: { result in
                started.markStarted()
                continuation.finish()
                completionHandler(result)
            },
            work: work)
        return DownloadTask(url: url, progress: stream, started: started, cancel: { coalescer.cancel(subscription) })
    }

    private static func dataResult(_ outcome: FetchOutcome, url: URL) throws(AlcedoError) -> ImageDataResult {
        switch outcome {
        case .downloaded(let data, let response):
            return ImageDataResult(data: data, url: url, response: response)
        case .notModified(let response):
            // Only conditional requests accept a 304, and they never come through here.
            throw .responseError(reason: .invalidHTTPStatusCode(response: response))
        }
    }
}

/// What identifies one network fetch: the URL, and the validators of a conditional request.
struct FetchKey: Hashable, Sendable {
    let url: URL
    let etag: String?
    let lastModified: String?
    /// The caller's own body limit (``DownloadOptions/maximumBodySize``): callers with
    /// different limits do not share a request.
    let bodyLimit: Int?
    /// The body is taken whatever it is (a Live Photo's video): no check that it is an image.
    let acceptsAnyBody: Bool

    init(url: URL, validators: HTTPCacheInfo?, bodyLimit: Int? = nil, acceptsAnyBody: Bool = false) {
        self.url = url
        self.etag = validators?.etag
        self.lastModified = validators?.lastModified
        self.bodyLimit = bodyLimit
        self.acceptsAnyBody = acceptsAnyBody
    }

    /// The validators to send, or `nil` for an unconditional request.
    var validators: HTTPCacheInfo? {
        etag == nil && lastModified == nil ? nil : HTTPCacheInfo(etag: etag, lastModified: lastModified)
    }
}

/// What identifies one decode-and-process run of a fetch.
struct ProcessingKey: Hashable, Sendable {
    let fetch: FetchKey
    let processorIdentifier: String
    let decoding: DecodingOptions
}

/// How a network fetch ended.
enum FetchOutcome: Sendable {
    case downloaded(Data, DownloadResponse)
    case notModified(DownloadResponse)
}
