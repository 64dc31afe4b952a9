#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The one call that takes a ``Source`` (a URL, a ``Resource``, a file, a base64 string,
/// bytes) to a decoded, processed, cached image.
///
/// ```swift
/// let result = try await ImageManager.shared.retrieveImage(
///     with: url, options: [.processor(DownsamplingImageProcessor(size: PixelSize(width: 256, height: 256)))])
/// // result.image, result.cacheType, result.metrics
/// ```
///
/// ## The flow of one request
/// memory cache (processed key `key@identifier`) → disk cache (processed key) → original in
/// the original cache (memory, then disk: decoded, processed, the variant stored) → load
/// (download, or the data provider) → decode, with decoder-side scaling from the processor's
/// ``ImageProcessor/decodingTarget`` → process → store (memory before delivery; disk before
/// delivery with ``AlcedoOptionsInfoItem/waitForCache``, else right after) → deliver (the
/// ``ImageModifier`` applied, never cached). Every option is in ``AlcedoOptionsInfoItem``.
///
/// ## Work is done once
/// Requests with the same source key, processor and options share one run of the flow while
/// it is in flight: one cache lookup, one load, one decode and one processing run, however
/// many callers wait. Downloads are further shared per URL by the ``ImageDownloader``, so
/// several processors of one URL make one download. Cancelling a caller (its Swift `Task`, or
/// the ``RetrieveImageTask`` of a callback form) removes that caller only; the shared work
/// stops when no caller is left.
///
/// ## Threads
/// Decoding, processing and encoding for the disk run on a pool as wide as the machine's
/// cores, file I/O on the cache's own queue: the cooperative pool is never blocked. A failure
/// to write the disk cache does not fail the request (the memory cache keeps working).
public final class ImageManager: Sendable {
    /// The manager used when none is given: ``ImageDownloader/default`` and ``ImageCache/default``.
    public static let shared = ImageManager()

    /// The downloader used when a request names none.
    public let downloader: ImageDownloader
    /// The cache used when a request names none.
    public let cache: ImageCache

    private let defaults: Mutex<AlcedoOptionsInfo>
    let pipelines = RequestCoalescer<PipelineKey, LoadedImage>(originalURL: { $0.url })

    /// Creates a manager.
    /// - Parameters:
    ///   - downloader: the default downloader (default ``ImageDownloader/default``).
    ///   - cache: the default cache (default ``ImageCache/default``).
    ///   - defaultOptions: options applied before every request's own (default none).
    public init(downloader: ImageDownloader = .default, cache: ImageCache = .default, defaultOptions: AlcedoOptionsInfo = []) {
        self.downloader = downloader
        self.cache = cache
        self.defaults = Mutex(defaultOptions)
    }

    /// Options applied before every request's own (a request's option of the same kind wins).
    public var defaultOptions: AlcedoOptionsInfo {
        get { defaults.withLock { $0 } }
        set { defaults.withLock { $0 = newValue } }
    }

    /// The request's options read with the defaults before them.
    func parsedOptions(_ options: AlcedoOptionsInfo?) -> AlcedoParsedOptionsInfo {
        AlcedoParsedOptionsInfo(defaultOptions + (options ?? []))
    }

    // MARK: async

    /// Retrieves the image of `source`, from the caches or by loading it.
    ///
    /// ```swift
    /// let result = try await manager.retrieveImage(with: source)
    /// let tracked = try await manager.retrieveImage(with: source, progressBlock: { received, total in … })
    /// let previewed = try await manager.retrieveImage(with: url, options: [.progressiveJPEG(.default)],
    ///                                                 previewHandler: { preview in show(preview) })
    /// ```
    ///
    /// The progress block has Kingfisher's two parameters and comes before the preview
    /// handler, so a one-parameter trailing closure never lands here:
    /// `manager.retrieveImage(with: url) { result in … }` is the callback form, in `async` code
    /// as well. Label the preview handler.
    /// - Parameters:
    ///   - source: where the image comes from: a download or a data provider.
    ///   - options: the request's options (default `nil`: the manager's ``defaultOptions``).
    ///   - progressBlock: called as a download's body arrives (default `nil`), on the thread
    ///     that received it. A caller that joins a download already under way is first
    ///     called once with the bytes received so far.
    ///   - previewHandler: called with each progressive preview, in order, under
    ///     ``AlcedoOptionsInfoItem/progressiveJPEG(_:)`` (default `nil`: no previews are made
    ///     for this caller), on the thread that made the preview. Every call has returned
    ///     before this function returns or throws, and none comes after; a baseline JPEG, a
    ///     cache hit or a non-network source gives none. Cancelling the calling task stops them.
    /// - Throws: ``AlcedoError``: `.requestError(.cancelled)` when the calling task is
    ///   cancelled, `.cacheError(.imageNotExisting)` for a miss under
    ///   ``AlcedoOptionsInfoItem/onlyFromCache``, the failing stage's error otherwise, or
    ///   ``ImageSettingErrorReason/alternativeSourcesExhausted(_:)``.
    public func retrieveImage(with source: Source, options: AlcedoOptionsInfo? = nil,
                              progressBlock: DownloadProgressBlock? = nil,
                              previewHandler: (@Sendable (AlcedoImage) -> Void)? = nil) async throws(AlcedoError) -> RetrieveImageResult {
        let parsed = parsedOptions(options)
        guard let previewHandler, parsed.progressiveJPEG != nil else {
            return try await retrieve(source, options: parsed, progress: progressHandler(progressBlock))
        }
        let delivery = PreviewDelivery(previewHandler)
        let result: Result<RetrieveImageResult, AlcedoError>
        do throws(AlcedoError) {
            result = .success(try await retrieve(source, options: parsed, progress: progressHandler(progressBlock),
                                                 preview: delivery.deliver))
        } catch {
            result = .failure(error)
        }
        await delivery.close()
        return try result.get()
    }

    /// Retrieves the image of `resource` (a `URL` is a resource; see ``AlcedoOptionsInfoItem/allowLocalFiles``
    /// for `file://` URLs); the parameters are those of the ``Source`` form.
    public func retrieveImage(with resource: any Resource, options: AlcedoOptionsInfo? = nil,
                              progressBlock: DownloadProgressBlock? = nil,
                              previewHandler: (@Sendable (AlcedoImage) -> Void)? = nil) async throws(AlcedoError) -> RetrieveImageResult {
        try await retrieveImage(with: resource.convertToSource(), options: options, progressBlock: progressBlock,
                                previewHandler: previewHandler)
    }

    // MARK: callbacks

    /// Retrieves the image of `source` and calls `completionHandler` exactly once, on the
    /// request's ``AlcedoOptionsInfoItem/callbackQueue(_:)`` (default ``CallbackQueue/untouch``).
    ///
    /// A trailing closure is the completion handler, in `async` code too (the `async` form's
    /// progress block takes two parameters, so a one-parameter closure cannot match it); the
    /// progress block is used only when labelled.
    /// - Parameters:
    ///   - source: where the image comes from: a download or a data provider.
    ///   - options: the request's options (default `nil`: the manager's ``defaultOptions``).
    ///   - progressBlock: called as a download's body arrives (on the thread that received it).
    ///   - completionHandler: called once with the result or the error.
    /// - Returns: a task to cancel this caller (`task?.cancel()`, as in Kingfisher; never `nil`
    ///   here, optional for Kingfisher's shape).
    @discardableResult
    public func retrieveImage(with source: Source, options: AlcedoOptionsInfo? = nil,
                              progressBlock: DownloadProgressBlock? = nil,
                              completionHandler: @escaping @Sendable (Result<RetrieveImageResult, AlcedoError>) -> Void) -> RetrieveImageTask? {
        retrieveImage(with: source, options: options, progressBlock: progressBlock, previewHandler: nil,
                      completionHandler: completionHandler)
    }

    /// The callback form, with `previewHandler` called (on the callback queue) with each
    /// progressive preview before the completion (see ``AlcedoOptionsInfoItem/progressiveJPEG(_:)``);
    /// the task's ``RetrieveImageTask/progressiveImages`` gets them too.
    func retrieveImage(with source: Source, options: AlcedoOptionsInfo?, progressBlock: DownloadProgressBlock?,
                       previewHandler: (@Sendable (AlcedoImage) -> Void)?,
                       completionHandler: @escaping @Sendable (Result<RetrieveImageResult, AlcedoError>) -> Void) -> RetrieveImageTask {
        retrieveImage(with: source, parsedOptions: parsedOptions(options), progressBlock: progressBlock,
                      previewHandler: previewHandler, completionHandler: completionHandler)
    }

    /// The callback form with options already read (the manager's ``defaultOptions`` are not added);
    /// `downloadTaskUpdated` is told of each alternative source's task (see
    /// ``retrieve(_:options:progress:preview:downloadTaskUpdated:)``).
    func retrieveImage(with source: Source, parsedOptions parsed: AlcedoParsedOptionsInfo, progressBlock: DownloadProgressBlock?,
                       previewHandler: (@Sendable (AlcedoImage) -> Void)?,
                       downloadTaskUpdated: (@Sendable (DownloadTask?) -> Void)? = nil,
                       completionHandler: @escaping @Sendable (Result<RetrieveImageResult, AlcedoError>) -> Void) -> RetrieveImageTask {
        let handle = RetrieveImageTask()
        let previews = handle.previewContinuation
        var preview: (@Sendable (AlcedoImage) -> Void)?
        if parsed.progressiveJPEG != nil {
            let queue = parsed.callbackQueue
            preview = { (image: AlcedoImage) in
                previews.yield(image)
                if let previewHandler { queue.execute { previewHandler(image) } }
            }
        } else {
            previews.finish()
        }
        let deliverPreview = preview
        handle.attach(Task {
            let result: Result<RetrieveImageResult, AlcedoError>
            do throws(AlcedoError) {
                result = .success(try await retrieve(source, options: parsed, progress: progressHandler(progressBlock),
                                                     preview: deliverPreview, downloadTaskUpdated: downloadTaskUpdated))
            } catch {
                result = .failure(error)
            }
            previews.finish()
            parsed.callbackQueue.execute { completionHandler(result) }
        })
        return handle
    }

    /// Retrieves the image of `resource` with a completion handler (see the ``Source`` form).
    @discardableResult
    public func retrieveImage(with resource: any Resource, options: AlcedoOptionsInfo? = nil,
                              progressBlock: DownloadProgressBlock? = nil,
                              completionHandler: @escaping @Sendable (Result<RetrieveImageResult, AlcedoError>) -> Void) -> RetrieveImageTask? {
        retrieveImage(with: resource.convertToSource(), options: options, progressBlock: progressBlock,
                      completionHandler: completionHandler)
    }

    // MARK: Alternative sources

    /// Tries `source`, then, as each fails, the source its ``RetrievingContext`` gives next
    /// (the alternative sources in order: see ``RetrievingContext/nextSource(afterFailureOf:with:)``).
    /// With `downloadTaskUpdated`, each source after the first is tried as a task of its own,
    /// and `downloadTaskUpdated` is told of it as it starts (see
    /// ``retrieveAlternative(_:context:progress:preview:downloadTaskUpdated:)``).
    func retrieve(_ source: Source, options: AlcedoParsedOptionsInfo,
                  progress: (@Sendable (DownloadProgress) -> Void)?,
                  preview: (@Sendable (AlcedoImage) -> Void)? = nil,
                  downloadTaskUpdated: (@Sendable (DownloadTask?) -> Void)? = nil) async throws(AlcedoError) -> RetrieveImageResult {
        let context = RetrievingContext(options: options, originalSource: source)
        let hasAlternatives = !(options.alternativeSources ?? []).isEmpty
        var candidate = source
        var isFirst = true
        while true {
            do {
                if !isFirst, let downloadTaskUpdated {
                    return try await retrieveAlternative(candidate, context: context, progress: progress, preview: preview,
                                                         downloadTaskUpdated: downloadTaskUpdated)
                }
                return try await retrieveSingle(candidate, originalSource: context.originalSource, options: context.options,
                                                progress: progress, preview: preview)
            } catch {
                if error.isCancellation || error.isNotCurrentTask { throw error }
                // A cancelled caller tries no other source: with alternatives it ends cancelled,
                // without them with the source's own error.
                if Task.isCancelled { throw hasAlternatives ? .requestError(reason: .cancelled) : error }
                candidate = try context.nextSource(afterFailureOf: candidate, with: error).get()
                isFirst = false
            }
        }
    }

    /// Tries the alternative source `candidate` in a task of its own and tells
    /// `downloadTaskUpdated` of it as it starts, before its outcome, as Kingfisher tells its caller of the new download task an
    /// alternative source starts: a ``DownloadTask`` for a network source, whose
    /// ``DownloadTask/cancel()`` cancels this attempt (the retrieval then ends cancelled, without
    /// trying the sources after it) and whose ``DownloadTask/progress`` is this attempt's; `nil`
    /// for a data provider, which has no download. Cancelling the calling task cancels the
    /// attempt too.
    private func retrieveAlternative(_ candidate: Source, context: RetrievingContext<Source>,
                                     progress: (@Sendable (DownloadProgress) -> Void)?,
                                     preview: (@Sendable (AlcedoImage) -> Void)?,
                                     downloadTaskUpdated: @Sendable (DownloadTask?) -> Void) async throws(AlcedoError) -> RetrieveImageResult {
        let originalSource = context.originalSource
        let options = context.options
        guard case .network(let resource) = candidate else {
            downloadTaskUpdated(nil)
            return try await retrieveSingle(candidate, originalSource: originalSource, options: options, progress: progress,
                                            preview: preview)
        }
        let (updates, continuation) = AsyncStream.makeStream(of: DownloadProgress.self, bufferingPolicy: .bufferingNewest(1))
        let attempt = Task { () async -> Result<RetrieveImageResult, AlcedoError> in
            defer { continuation.finish() }
            let report: @Sendable (DownloadProgress) -> Void = { value in
                continuation.yield(value)
                progress?(value)
            }
            do throws(AlcedoError) {
                return .success(try await self.retrieveSingle(candidate, originalSource: originalSource, options: options,
                                                              progress: report, preview: preview))
            } catch {
                return .failure(error)
            }
        }
        downloadTaskUpdated(DownloadTask(url: resource.downloadURL, progress: updates, cancel: { attempt.cancel() }))
        let result = await withTaskCancellationHandler {
            await attempt.value
        } onCancel: {
            attempt.cancel()
        }
        return try result.get()
    }
}
