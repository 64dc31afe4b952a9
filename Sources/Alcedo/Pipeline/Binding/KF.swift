import Foundation

/// A chainable way to build a request and bind it to a target, as Kingfisher's `KF` builder:
///
/// ```swift
/// KF.url(url)
///     .placeholder(grey)
///     .downsampling(size: PixelSize(width: 200, height: 200))
///     .roundCorner(radius: .point(12))
///     .onSuccess { result in … }
///     .onFailure { error in … }
///     .set(to: avatar)
/// ```
///
/// Each call returns a new builder; nothing runs until ``Builder/set(to:)`` or ``Builder/retrieve()``.
public enum KF {
    /// A builder for `url` (a `file://` URL needs ``AlcedoOptionsInfoItem/allowLocalFiles``), cached under `cacheKey`
    /// (default `nil`: the URL's key under ``CacheKeyRule/global``).
    public static func url(_ url: URL?, cacheKey: String? = nil) -> Builder {
        Builder(source: url.map { ImageResource(downloadURL: $0, cacheKey: cacheKey).convertToSource() })
    }

    /// A builder for `resource`.
    public static func resource(_ resource: (any Resource)?) -> Builder {
        Builder(source: resource?.convertToSource())
    }

    /// A builder for `source`.
    public static func source(_ source: Source?) -> Builder {
        Builder(source: source)
    }

    /// A builder for a data provider.
    public static func dataProvider(_ provider: (any ImageDataProvider)?) -> Builder {
        Builder(source: provider.map { .provider($0) })
    }

    /// A request being built; see ``KF``.
    public struct Builder: Sendable {
        /// The source to load.
        public let source: Source?
        /// The options so far (the processor chain is added when the request is made).
        public private(set) var options: AlcedoOptionsInfo = []
        /// The processor chain so far (default ``DefaultImageProcessor``).
        public private(set) var processor: any ImageProcessor = DefaultImageProcessor.default
        private var placeholderImage: AlcedoImage?
        private var manager: ImageManager = .shared
        private var successHandlers: [@Sendable (RetrieveImageResult) -> Void] = []
        private var failureHandlers: [@Sendable (AlcedoError) -> Void] = []
        private var progressHandlers: [DownloadProgressBlock] = []
        private var previewHandlers: [@Sendable (AlcedoImage) -> Void] = []

        init(source: Source?) {
            self.source = source
        }

        /// The options with the processor chain, as the request is made with them.
        public var allOptions: AlcedoOptionsInfo {
            processor is DefaultImageProcessor ? options : options + [.processor(processor)]
        }

        private func with(_ change: (inout Builder) -> Void) -> Builder {
            var copy = self
            change(&copy)
            return copy
        }

        // MARK: Making the request

        /// Binds `target` to the built request (see ``ImageDisplaying``): the placeholder,
        /// the previews under ``progressiveJPEG(_:)`` (each also given to the ``onPreview(_:)``
        /// handlers), then the image or the failure image; the success or failure handlers are
        /// called once.
        @discardableResult
        public func set(to target: some ImageDisplaying) -> RetrieveImageTask? {
            let (successes, failures) = (successHandlers, failureHandlers)
            let completion: @Sendable (Result<RetrieveImageResult, AlcedoError>) -> Void = { result in
                switch result {
                case .success(let value): successes.forEach { $0(value) }
                case .failure(let error): failures.forEach { $0(error) }
                }
            }
            return target.setImage(with: source, placeholder: placeholderImage, options: allOptions, manager: manager,
                                   progressBlock: progressBlock, previewHandler: previewHandler, completionHandler: completion)
        }

        /// Starts the request with no target and returns at once (a fire-and-forget ending,
        /// neither `async` nor throwing, as Kingfisher's builder): the ``onSuccess(_:)`` or
        /// ``onFailure(_:)`` handlers are called once, on the callback queue (default
        /// ``CallbackQueue/untouch``), the ``onPreview(_:)`` and ``onProgress(_:)`` handlers as
        /// the request goes.
        ///
        /// ```swift
        /// KF.url(url)
        ///     .setProcessor(processor)
        ///     .onSuccess { result in print(result.image) }
        ///     .onFailure { error in print(error.localizedDescription) }
        ///     .start()
        /// ```
        /// - Returns: the task to cancel the request, or `nil` without a source (the failure
        ///   handlers then get ``ImageSettingErrorReason/emptySource``).
        @discardableResult
        public func start() -> RetrieveImageTask? {
            let (successes, failures) = (successHandlers, failureHandlers)
            guard let source else {
                let queue = AlcedoParsedOptionsInfo(manager.defaultOptions + allOptions).callbackQueue
                queue.execute { failures.forEach { $0(.imageSettingError(reason: .emptySource)) } }
                return nil
            }
            return manager.retrieveImage(with: source, options: allOptions, progressBlock: progressBlock,
                                         previewHandler: previewHandler) { result in
                switch result {
                case .success(let value): successes.forEach { $0(value) }
                case .failure(let error): failures.forEach { $0(error) }
                }
            }
        }

        /// All progress handlers as one, or `nil` without any.
        private var progressBlock: DownloadProgressBlock? {
            let handlers = progressHandlers
            guard !handlers.isEmpty else { return nil }
            return { received, total in handlers.forEach { $0(received, total) } }
        }

        /// All preview handlers as one, or `nil` without any.
        private var previewHandler: (@Sendable (AlcedoImage) -> Void)? {
            let handlers = previewHandlers
            guard !handlers.isEmpty else { return nil }
            return { image in handlers.forEach { $0(image) } }
        }

        /// Retrieves the image with no target; the handlers are called too (the preview
        /// handlers of ``onPreview(_:)`` with each progressive preview, before this returns).
        /// - Throws: ``ImageSettingErrorReason/emptySource`` without a source, else as
        ///   ``ImageManager/retrieveImage(with:options:progressBlock:previewHandler:)-(Source,_,_,_)``.
        public func retrieve() async throws(AlcedoError) -> RetrieveImageResult {
            do throws(AlcedoError) {
                guard let source else { throw .imageSettingError(reason: .emptySource) }
                let result = try await manager.retrieveImage(with: source, options: allOptions, progressBlock: progressBlock,
                                                             previewHandler: previewHandler)
                successHandlers.forEach { $0(result) }
                return result
            } catch {
                failureHandlers.forEach { $0(error) }
                throw error
            }
        }

        // MARK: Handlers

        /// Adds a handler called with the result on success.
        public func onSuccess(_ handler: @escaping @Sendable (RetrieveImageResult) -> Void) -> Builder {
            with { $0.successHandlers.append(handler) }
        }

        /// Adds a handler called with the error on failure (superseded requests included).
        public func onFailure(_ handler: @escaping @Sendable (AlcedoError) -> Void) -> Builder {
            with { $0.failureHandlers.append(handler) }
        }

        /// Adds a handler called with download progress: the bytes received and the announced
        /// length (`-1` when unknown), as Kingfisher's `onProgress`. `nil` adds nothing.
        public func onProgress(_ handler: DownloadProgressBlock?) -> Builder {
            guard let handler else { return self }
            return with { $0.progressHandlers.append(handler) }
        }

        /// Adds a handler called with each progressive preview, in order, under
        /// ``progressiveJPEG(_:)`` (without that option it is never called): by ``retrieve()``
        /// before it returns, and by ``set(to:)`` after the target showed the preview (on the
        /// callback queue; never once a newer request took the target). `nil` adds nothing.
        public func onPreview(_ handler: (@Sendable (AlcedoImage) -> Void)?) -> Builder {
            guard let handler else { return self }
            return with { $0.previewHandlers.append(handler) }
        }

        // MARK: Target and manager

        /// The image shown while loading (default none: the target is cleared).
        public func placeholder(_ image: AlcedoImage?) -> Builder { with { $0.placeholderImage = image } }

        /// The image shown when loading fails.
        public func onFailureImage(_ image: AlcedoImage?) -> Builder { option(.onFailureImage(image)) }

        /// Keep the current image while loading instead of showing the placeholder.
        public func keepCurrentImageWhileLoading(_ enabled: Bool = true) -> Builder {
            flag(enabled, .keepCurrentImageWhileLoading)
        }

        /// The manager that runs the request (default ``ImageManager/shared``).
        public func manager(_ manager: ImageManager) -> Builder { with { $0.manager = manager } }

        // MARK: Processors

        /// Replaces the processor chain with `processor`.
        public func setProcessor(_ processor: any ImageProcessor) -> Builder { with { $0.processor = processor } }

        /// Appends `processor` to the chain.
        public func appendProcessor(_ processor: any ImageProcessor) -> Builder {
            with { $0.processor = $0.processor |> processor }
        }

        /// Appends a ``DownsamplingImageProcessor`` (decoder-side scaling when first in the chain).
        public func downsampling(size: PixelSize) -> Builder { appendProcessor(DownsamplingImageProcessor(size: size)) }

        /// Appends a ``ResizingImageProcessor``.
        public func resizing(referenceSize: PixelSize, mode: ResizingImageProcessor.Mode = .none) -> Builder {
            appendProcessor(ResizingImageProcessor(referenceSize: referenceSize, mode: mode))
        }

        /// Appends a ``CroppingImageProcessor``.
        public func cropping(size: PixelSize, anchor: CroppingImageProcessor.Anchor = .center) -> Builder {
            appendProcessor(CroppingImageProcessor(size: size, anchor: anchor))
        }

        /// Appends a ``RoundCornerImageProcessor``.
        public func roundCorner(radius: RoundCornerImageProcessor.Radius, targetSize: PixelSize? = nil,
                                roundingCorners: RectCorner = .all, backgroundColor: RGBA? = nil) -> Builder {
            appendProcessor(RoundCornerImageProcessor(radius: radius, targetSize: targetSize, roundingCorners: roundingCorners,
                                                      backgroundColor: backgroundColor))
        }

        /// Appends a ``DownsamplingImageProcessor`` for a `CGSize` (Kingfisher's form).
        public func downsampling(size: CGSize) -> Builder { appendProcessor(DownsamplingImageProcessor(size: size)) }

        /// Appends a ``ResizingImageProcessor`` for a `CGSize` (Kingfisher's form).
        public func resizing(referenceSize: CGSize, mode: ResizingImageProcessor.Mode = .none) -> Builder {
            appendProcessor(ResizingImageProcessor(referenceSize: referenceSize, mode: mode))
        }

        /// Appends a ``CroppingImageProcessor`` for a `CGSize` and a unit `CGPoint` anchor
        /// (Kingfisher's form; default: the centre).
        public func cropping(size: CGSize, anchor: CGPoint = CGPoint(x: 0.5, y: 0.5)) -> Builder {
            appendProcessor(CroppingImageProcessor(size: size, anchor: anchor))
        }

        /// Appends a ``RoundCornerImageProcessor`` with a `CGSize` target size (Kingfisher's form).
        public func roundCorner(radius: RoundCornerImageProcessor.Radius, targetSize: CGSize,
                                roundingCorners: RectCorner = .all, backgroundColor: RGBA? = nil) -> Builder {
            appendProcessor(RoundCornerImageProcessor(radius: radius, targetSize: targetSize, roundingCorners: roundingCorners,
                                                      backgroundColor: backgroundColor))
        }

        /// Appends a ``BlurImageProcessor``.
        public func blur(radius: Double) -> Builder { appendProcessor(BlurImageProcessor(blurRadius: radius)) }

        /// Appends a ``TintImageProcessor``.
        public func tint(_ color: RGBA) -> Builder { appendProcessor(TintImageProcessor(tint: color)) }

        /// Appends a ``BlackWhiteProcessor``.
        public func blackWhite() -> Builder { appendProcessor(BlackWhiteProcessor()) }

        // MARK: Options

        /// Adds any option.
        public func option(_ item: AlcedoOptionsInfoItem) -> Builder { with { $0.options.append(item) } }

        /// Adds options.
        public func options(_ items: AlcedoOptionsInfo) -> Builder { with { $0.options += items } }

        private func flag(_ enabled: Bool, _ item: AlcedoOptionsInfoItem) -> Builder { enabled ? option(item) : self }

        /// ``AlcedoOptionsInfoItem/targetCache(_:)``.
        public func targetCache(_ cache: ImageCache) -> Builder { option(.targetCache(cache)) }
        /// ``AlcedoOptionsInfoItem/originalCache(_:)``.
        public func originalCache(_ cache: ImageCache) -> Builder { option(.originalCache(cache)) }
        /// ``AlcedoOptionsInfoItem/downloader(_:)``.
        public func downloader(_ downloader: ImageDownloader) -> Builder { option(.downloader(downloader)) }
        /// ``AlcedoOptionsInfoItem/forceRefresh``.
        public func forceRefresh(_ enabled: Bool = true) -> Builder { flag(enabled, .forceRefresh) }
        /// ``AlcedoOptionsInfoItem/fromMemoryCacheOrRefresh``.
        public func fromMemoryCacheOrRefresh(_ enabled: Bool = true) -> Builder { flag(enabled, .fromMemoryCacheOrRefresh) }
        /// ``AlcedoOptionsInfoItem/onlyFromCache``.
        public func onlyFromCache(_ enabled: Bool = true) -> Builder { flag(enabled, .onlyFromCache) }
        /// ``AlcedoOptionsInfoItem/cacheMemoryOnly``.
        public func cacheMemoryOnly(_ enabled: Bool = true) -> Builder { flag(enabled, .cacheMemoryOnly) }
        /// ``AlcedoOptionsInfoItem/waitForCache``.
        public func waitForCache(_ enabled: Bool = true) -> Builder { flag(enabled, .waitForCache) }
        /// ``AlcedoOptionsInfoItem/cacheOriginalImage``.
        public func cacheOriginalImage(_ enabled: Bool = true) -> Builder { flag(enabled, .cacheOriginalImage) }
        /// ``AlcedoOptionsInfoItem/respectHTTPFreshness``.
        public func respectHTTPFreshness(_ enabled: Bool = true) -> Builder { flag(enabled, .respectHTTPFreshness) }
        /// ``AlcedoOptionsInfoItem/onlyLoadFirstFrame``.
        public func onlyLoadFirstFrame(_ enabled: Bool = true) -> Builder { flag(enabled, .onlyLoadFirstFrame) }
        /// ``AlcedoOptionsInfoItem/cacheSerializer(_:)``.
        public func serialize(by serializer: any CacheSerializer) -> Builder { option(.cacheSerializer(serializer)) }
        /// ``AlcedoOptionsInfoItem/imageModifier(_:)``.
        public func imageModifier(_ modifier: any ImageModifier) -> Builder { option(.imageModifier(modifier)) }
        /// ``AlcedoOptionsInfoItem/requestModifier(_:)``.
        public func requestModifier(_ modifier: any ImageDownloadRequestModifier) -> Builder { option(.requestModifier(modifier)) }
        /// ``AlcedoOptionsInfoItem/redirectHandler(_:)``.
        public func redirectHandler(_ handler: any ImageDownloadRedirectHandler) -> Builder { option(.redirectHandler(handler)) }
        /// ``AlcedoOptionsInfoItem/downloadPriority(_:)``.
        public func downloadPriority(_ priority: DownloadPriority) -> Builder { option(.downloadPriority(priority)) }
        /// ``AlcedoOptionsInfoItem/memoryCacheExpiration(_:)``.
        public func memoryCacheExpiration(_ expiration: StorageExpiration) -> Builder { option(.memoryCacheExpiration(expiration)) }
        /// ``AlcedoOptionsInfoItem/diskCacheExpiration(_:)``.
        public func diskCacheExpiration(_ expiration: StorageExpiration) -> Builder { option(.diskCacheExpiration(expiration)) }
        /// ``AlcedoOptionsInfoItem/memoryCacheAccessExtendingExpiration(_:)``.
        public func memoryCacheAccessExtendingExpiration(_ extending: ExpirationExtending) -> Builder {
            option(.memoryCacheAccessExtendingExpiration(extending))
        }
        /// ``AlcedoOptionsInfoItem/diskCacheAccessExtendingExpiration(_:)``.
        public func diskCacheAccessExtendingExpiration(_ extending: ExpirationExtending) -> Builder {
            option(.diskCacheAccessExtendingExpiration(extending))
        }
        /// ``AlcedoOptionsInfoItem/retryStrategy(_:)``.
        public func retry(_ strategy: any RetryStrategy) -> Builder { option(.retryStrategy(strategy)) }
        /// A ``DelayRetryStrategy`` with `maxCount` retries `interval` apart (default 3 s).
        public func retry(maxCount: Int, interval: DelayRetryStrategy.Interval = .seconds(3)) -> Builder {
            retry(DelayRetryStrategy(maxRetryCount: maxCount, retryInterval: interval))
        }
        /// ``AlcedoOptionsInfoItem/alternativeSources(_:)``.
        public func alternativeSources(_ sources: [Source]) -> Builder { option(.alternativeSources(sources)) }
        /// ``AlcedoOptionsInfoItem/callbackQueue(_:)``.
        public func callbackQueue(_ queue: CallbackQueue) -> Builder { option(.callbackQueue(queue)) }
        /// ``AlcedoOptionsInfoItem/allowLocalFiles``: read a `file://` URL from disk.
        public func allowLocalFiles(_ enabled: Bool = true) -> Builder { flag(enabled, .allowLocalFiles) }
        /// ``AlcedoOptionsInfoItem/progressiveJPEG(_:)`` (default ``ImageProgressive/default``; `nil`: no previews).
        public func progressiveJPEG(_ progressive: ImageProgressive? = .default) -> Builder {
            progressive.map { option(.progressiveJPEG($0)) } ?? self
        }
        /// Kingfisher's `URLSessionTask` priority (see ``AlcedoOptionsInfoItem/downloadPriority(_:)-(Float)``).
        @_disfavoredOverload
        public func downloadPriority(_ priority: Float) -> Builder { option(.downloadPriority(priority)) }
        /// ``AlcedoOptionsInfoItem/scaleFactor(_:)``: multiplies the processors' point sizes.
        public func scaleFactor(_ factor: CGFloat) -> Builder { option(.scaleFactor(factor)) }

        // MARK: Kingfisher options without a screen (no effect on Linux)

        /// ``AlcedoOptionsInfoItem/transition(_:)``. No effect on Linux.
        public func transition(_ transition: ImageTransition) -> Builder { option(.transition(transition)) }
        /// A fade of `duration` seconds (``ImageTransition/fade(_:)``). No effect on Linux.
        public func fade(duration: TimeInterval) -> Builder { transition(.fade(duration)) }
        /// ``AlcedoOptionsInfoItem/forceTransition``. No effect on Linux.
        public func forceTransition(_ enabled: Bool = true) -> Builder { flag(enabled, .forceTransition) }
        /// ``AlcedoOptionsInfoItem/backgroundDecode``. No effect on Linux (decoding never runs on the caller's thread).
        public func backgroundDecode(_ enabled: Bool = true) -> Builder { flag(enabled, .backgroundDecode) }
        /// ``AlcedoOptionsInfoItem/preloadAllAnimationData``. No effect on Linux.
        public func preloadAllAnimationData(_ enabled: Bool = true) -> Builder { flag(enabled, .preloadAllAnimationData) }
        /// ``AlcedoOptionsInfoItem/loadDiskFileSynchronously``. No effect on Linux.
        public func loadDiskFileSynchronously(_ enabled: Bool = true) -> Builder { flag(enabled, .loadDiskFileSynchronously) }

        /// Kingfisher's Low Data Mode source (``AlcedoOptionsInfoItem/lowDataMode(_:)``). **Never used on Linux.**
        public func lowDataModeSource(_ source: Source?) -> Builder { option(.lowDataMode(source)) }
    }
}
