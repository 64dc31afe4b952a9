#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The flow of one source: memory → disk and shared tier (variant, then original) → load →
/// decode → process → store, run once per ``PipelineKey`` in flight (and, with a shared tier,
/// once among the processes that share it: see ``ImageCache/coalesceWork(forKey:processorIdentifier:forcedExtension:)``).
extension ImageManager {
    /// A disk entry found for a request: the processed variant, or the original to process.
    struct DiskHit: Sendable {
        enum Kind: Sendable { case variant, original }
        let kind: Kind
        let data: Data
        let metadata: DiskEntryMetadata
    }

    /// Retrieves one source (no alternatives): a memory hit at once, anything else through
    /// the shared run of the flow.
    /// - Parameter readingCaches: `false` to load and store the source without looking in the
    ///   caches first (``loadAndCache(_:revalidating:workLock:context:metrics:)`` alone, shared
    ///   only with callers that skip the caches too).
    func retrieveSingle(_ source: Source, originalSource: Source, options: AlcedoParsedOptionsInfo,
                        progress: (@Sendable (DownloadProgress) -> Void)?,
                        preview: (@Sendable (AlcedoImage) -> Void)? = nil,
                        readingCaches: Bool = true) async throws(AlcedoError) -> RetrieveImageResult {
        let clock = ContinuousClock()
        let start = clock.now
        let request = LoadRequest(source: try resolved(source, options: options), options: options, manager: self)
        if readingCaches, let hit = memoryResult(request, originalSource: originalSource, since: start) { return hit }
        if options.isSourceTaskStale {
            throw .imageSettingError(reason: .notCurrentSourceTask(result: nil, error: nil, source: originalSource))
        }
        var progress = progress
        let previewer = previewer(for: request, deliver: preview)
        defer { previewer?.close() }
        if let previewer {
            progress = { [progress] value in
                previewer.receive(value)
                progress?(value)
            }
        }
        let loaded: LoadedImage
        do throws(AlcedoError) {
            var key = request.pipelineKey
            if !readingCaches { key.flags.insert(.skipsCacheLookup) }
            loaded = try await pipelines.value(for: key, priority: PriorityTicket(priority: options.downloadPriority),
                                               progress: progress) { [self] context in
                do throws(AlcedoError) {
                    return .success(readingCaches ? try await run(request, context: context)
                                                  : try await loadAndCache(request, context: context))
                } catch {
                    return .failure(error)
                }
            }
        } catch {
            // A cancelled load from a data provider is Kingfisher's `dataProviderCancelled`.
            if case .provider(let provider) = request.source, error.isTaskCancelled {
                throw .requestError(reason: .dataProviderCancelled(provider: provider))
            }
            throw error
        }
        let result = deliver(loaded, request, originalSource: originalSource, since: start)
        if options.isSourceTaskStale {
            throw .imageSettingError(reason: .notCurrentSourceTask(result: result, error: nil, source: originalSource))
        }
        return result
    }

    /// The previewer of a network request made with ``AlcedoOptionsInfoItem/progressiveJPEG(_:)``
    /// whose caller takes previews; `nil` otherwise.
    private func previewer(for request: LoadRequest, deliver: (@Sendable (AlcedoImage) -> Void)?) -> ProgressivePreviewer? {
        guard let deliver, let settings = request.options.progressiveJPEG, case .network = request.source else { return nil }
        return ProgressivePreviewer(settings: settings, decodingOptions: request.decodingOptions,
                                    processor: request.processorIsDefault ? nil : request.options.processor,
                                    modifier: request.options.imageModifier, priority: request.options.downloadPriority,
                                    deliver: deliver)
    }

    /// The result for `source` if its processed image is in memory (and the request reads the
    /// caches), without any suspension: what a binding shows at once.
    func memoryCachedResult(for source: Source, options: AlcedoParsedOptionsInfo) -> RetrieveImageResult? {
        guard let loadable = try? resolved(source, options: options) else { return nil }
        return memoryResult(LoadRequest(source: loadable, options: options, manager: self), originalSource: source,
                            since: ContinuousClock.now)
    }

    /// The source to load: a `file://` resource becomes a ``LocalFileImageDataProvider`` under
    /// ``AlcedoOptionsInfoItem/allowLocalFiles`` and is refused otherwise, before any cache or
    /// file is looked at; a resource with a scheme other than `http(s)` or one the downloader's
    /// loader reads (``ImageDataLoading/supportedSchemes``, such as `s3` or `local`) is an invalid URL.
    func resolved(_ source: Source, options: AlcedoParsedOptionsInfo) throws(AlcedoError) -> Source {
        guard case .network(let resource) = source else { return source }
        let url = resource.downloadURL
        let scheme = url.scheme?.lowercased()
        switch scheme {
        case "http", "https":
            return source
        case "file":
            guard options.allowLocalFiles else { throw .requestError(reason: .localFileNotAllowed(url)) }
            return .provider(LocalFileImageDataProvider(fileURL: url, cacheKey: resource.cacheKey))
        default:
            let downloader = options.downloader ?? self.downloader
            guard let scheme, downloader.loader.supportedSchemes.contains(scheme) else {
                throw .requestError(reason: .invalidURL(url.absoluteString))
            }
            return source
        }
    }

    private func memoryResult(_ request: LoadRequest, originalSource: Source, since start: ContinuousClock.Instant) -> RetrieveImageResult? {
        guard let hit = memoryHit(request) else { return nil }
        var metrics = RetrieveImageMetrics()
        metrics.cacheLookup = ContinuousClock.now - start
        metrics.memoryCacheLookup = metrics.cacheLookup
        return deliver(LoadedImage(image: hit, cacheType: .memory, originalData: nil, response: nil, metrics: metrics),
                       request, originalSource: originalSource, since: start)
    }

    /// The caller's result: the first frame under ``AlcedoOptionsInfoItem/onlyLoadFirstFrame``,
    /// the image modifier applied, the total time set.
    private func deliver(_ loaded: LoadedImage, _ request: LoadRequest, originalSource: Source,
                         since start: ContinuousClock.Instant) -> RetrieveImageResult {
        var image = loaded.image.withPointScale(request.options.pointScale)
        if request.options.onlyLoadFirstFrame && image.isAnimated { image = image.frame(at: 0) }
        if let modifier = request.options.imageModifier { image = modifier.modify(image) }
        var metrics = loaded.metrics
        metrics.total = ContinuousClock.now - start
        // Bytes of the variant describe it only as it was made: not after the modifier or a frame cut.
        let variantData = request.options.imageModifier == nil && image.frames.count == loaded.image.frames.count
            ? loaded.variantData : nil
        var result = RetrieveImageResult(image: image, cacheType: loaded.processedFromCachedOriginal ? .none : loaded.cacheType,
                                         source: request.source, originalSource: originalSource,
                                         originalData: loaded.originalData, response: loaded.response, metrics: metrics,
                                         variantData: variantData, originalCacheType: loaded.cacheType,
                                         storedCacheInfo: loaded.storedCacheInfo)
        result.cacheSerializer = request.serializer
        return result
    }

    /// The processed image in memory, unless the request skips the caches.
    private func memoryHit(_ request: LoadRequest) -> AlcedoImage? {
        guard !request.options.forceRefresh else { return nil }
        return request.targetCache.retrieveImageInMemoryCache(
            forKey: request.key, processorIdentifier: request.variant,
            extendingExpiration: request.options.memoryCacheAccessExtendingExpiration)
    }

    /// The whole flow for one request, run once for every caller of its key.
    func run(_ request: LoadRequest, context: RequestCoalescer<PipelineKey, LoadedImage>.WorkContext) async throws(AlcedoError) -> LoadedImage {
        // Whatever the run reserved from a memory budget is given back once it is stored.
        defer { request.memoryHold?.release() }
        let clock = ContinuousClock()
        var metrics = RetrieveImageMetrics()
        let options = request.options
        let refresh = options.forceRefresh || options.fromMemoryCacheOrRefresh

        // 1. Caches.
        var lookupStart = clock.now
        if let image = memoryHit(request) {
            metrics.cacheLookup = clock.now - lookupStart
            metrics.memoryCacheLookup = metrics.cacheLookup
            return LoadedImage(image: image, cacheType: .memory, originalData: nil, response: nil, metrics: metrics)
        }
        var revalidating: DiskHit?
        var workLock: LoadRequest.WorkEntry?
        var originalLock: LoadRequest.WorkEntry?
        // The original's work lock, when this process took it, goes once the load is stored.
        defer {
            if let originalLock {
                Task { await originalLock.cache.releaseWorkLock(forKey: request.key, processorIdentifier: originalLock.identifier) }
            }
        }
        if !refresh {
            if !request.variantIsOriginal, let original = originalInMemory(request) {
                metrics.cacheLookup = clock.now - lookupStart
                metrics.memoryCacheLookup = metrics.cacheLookup
                let image = try await transform(.image(original), request, options: request.decodingOptions, process: true,
                                                priority: context.ticket.priority, metrics: &metrics).mapError(\.error).get()
                // The variant goes to disk only if its original is there (not memory-only, not no-store).
                let originalOnDisk = try? await request.originalCache.diskMetadata(forKey: request.key,
                                                                                   forcedExtension: options.forcedExtension)
                let variantData = await store(image, data: nil, info: originalOnDisk?.httpCacheInfo, request, storeOriginal: false,
                                              toDisk: originalOnDisk != nil, metrics: &metrics)
                return LoadedImage(image: image, cacheType: .memory, originalData: nil, response: nil, metrics: metrics,
                                   variantData: variantData, processedFromCachedOriginal: true)
            }
            metrics.memoryCacheLookup = clock.now - lookupStart
            let hit = await diskHit(request)
            metrics.cacheLookup = clock.now - lookupStart
            if let hit {
                if request.needsRevalidation(hit.metadata.httpCacheInfo) {
                    revalidating = hit
                } else {
                    // An original found here (perhaps stored by another process sharing the
                    // tier) is processed into the variant: take the variant's work lock first,
                    // so the processes sharing the tier make it once.
                    let work = request.workEntry
                    var heldLock: LoadRequest.WorkEntry?
                    if hit.kind == .original, work.kind == .variant, work.cache.sharedTier != nil {
                        let outcome = try await coalesce(request, work: work, priority: context.ticket.priority, metrics: &metrics)
                        if let served = outcome.served { return served }
                        heldLock = outcome.lock
                    }
                    let served: LoadedImage?
                    do throws(AlcedoError) {
                        served = try await serve(hit, request, info: hit.metadata.httpCacheInfo, response: nil,
                                                 priority: context.ticket.priority, metrics: &metrics)
                    } catch {
                        if let heldLock { await heldLock.cache.releaseWorkLock(forKey: request.key, processorIdentifier: heldLock.identifier) }
                        throw error
                    }
                    if let heldLock { await heldLock.cache.releaseWorkLock(forKey: request.key, processorIdentifier: heldLock.identifier) }
                    if let served { return served }
                }
            }
            if options.onlyFromCache { throw .cacheError(reason: .imageNotExisting(key: request.key)) }
            if revalidating == nil {
                // Another process sharing the tier may be making this very entry: wait for it.
                let outcome = try await coalesce(request, work: request.workEntry, priority: context.ticket.priority,
                                                 metrics: &metrics)
                if let served = outcome.served { return served }
                workLock = outcome.lock
                // Another process may be downloading this source for another variant: wait for
                // its original rather than download it again.
                if let served = try await coalesceOriginal(request, holding: workLock, priority: context.ticket.priority,
                                                           metrics: &metrics, originalLock: &originalLock) {
                    return served
                }
            }
        } else if options.onlyFromCache {
            throw .cacheError(reason: .imageNotExisting(key: request.key))
        } else if case .network = request.source {
            // A refresh revalidates what is on disk rather than forgetting it.
            lookupStart = clock.now
            revalidating = await diskHit(request)
            metrics.cacheLookup = clock.now - lookupStart
        }

        do throws(AlcedoError) {
            return try await loadAndCache(request, revalidating: revalidating, workLock: workLock, context: context,
                                          metrics: &metrics)
        } catch {
            if let workLock { await workLock.cache.releaseWorkLock(forKey: request.key, processorIdentifier: workLock.identifier) }
            throw error
        }
    }

    /// ``loadAndCache(_:revalidating:workLock:context:metrics:)`` as a run of its own: the source
    /// loaded whole, without looking in the caches first.
    private func loadAndCache(_ request: LoadRequest,
                              context: RequestCoalescer<PipelineKey, LoadedImage>.WorkContext) async throws(AlcedoError) -> LoadedImage {
        defer { request.memoryHold?.release() }
        var metrics = RetrieveImageMetrics()
        return try await loadAndCache(request, revalidating: nil, workLock: nil, context: context, metrics: &metrics)
    }

    /// Waits for, or takes on, the work of `work` among the processes sharing its tier: the
    /// result when another process stored it in the meantime, else the work lock this process
    /// now holds (`nil` when it holds none and works anyway).
    private func coalesce(_ request: LoadRequest, work: LoadRequest.WorkEntry, priority: DownloadPriority,
                          metrics: inout RetrieveImageMetrics) async throws(AlcedoError)
        -> (served: LoadedImage?, lock: LoadRequest.WorkEntry?) {
        switch await work.cache.coalesceWork(forKey: request.key, processorIdentifier: work.identifier,
                                             forcedExtension: request.options.forcedExtension) {
        case .found(let entry):
            let hit = DiskHit(kind: work.kind, data: entry.data, metadata: DiskEntryMetadata(
                key: entry.metadata.key, hash: "", dataSize: entry.data.count, fileSize: entry.data.count,
                creationDate: entry.metadata.creationDate, lastAccessDate: Date(),
                expirationDate: entry.metadata.expirationDate, httpCacheInfo: entry.metadata.httpCacheInfo))
            return (try await serve(hit, request, info: hit.metadata.httpCacheInfo, response: nil,
                                    priority: priority, metrics: &metrics), nil)
        case .proceed(let holdsLock):
            return (nil, holdsLock ? work : nil)
        }
    }

    /// For a variant of a network source whose original is kept (``AlcedoOptionsInfoItem/cacheOriginalImage``)
    /// in a cache with a shared tier: coalesces on the original too, so that processes making
    /// different variants of one new source download it once. Returns the variant made from the
    /// original another process stored (the variant's lock `holding` released), or `nil` with
    /// `originalLock` set when this process now holds the original's lock (or none was taken).
    private func coalesceOriginal(_ request: LoadRequest, holding variantLock: LoadRequest.WorkEntry?, priority: DownloadPriority,
                                  metrics: inout RetrieveImageMetrics,
                                  originalLock: inout LoadRequest.WorkEntry?) async throws(AlcedoError) -> LoadedImage? {
        guard case .network = request.source, request.workEntry.kind == .variant, request.options.cacheOriginalImage,
              request.originalCache.sharedTier != nil else { return nil }
        let work = LoadRequest.WorkEntry(cache: request.originalCache, identifier: "", kind: .original)
        let outcome: (served: LoadedImage?, lock: LoadRequest.WorkEntry?)
        do throws(AlcedoError) {
            outcome = try await coalesce(request, work: work, priority: priority, metrics: &metrics)
        } catch {
            if let variantLock { await variantLock.cache.releaseWorkLock(forKey: request.key, processorIdentifier: variantLock.identifier) }
            throw error
        }
        if outcome.served != nil, let variantLock {
            await variantLock.cache.releaseWorkLock(forKey: request.key, processorIdentifier: variantLock.identifier)
        }
        originalLock = outcome.lock
        return outcome.served
    }

    /// Loads, decodes, processes and stores (steps 2 to 4 of ``run(_:context:)``, what every
    /// miss comes to, and all that ``loadAndCacheImage(source:context:completionHandler:)`` does);
    /// the stores release `workLock` when they are done.
    /// - Parameter revalidating: the disk entry to ask the server about (a conditional request)
    ///   rather than downloading the source whole; `nil` to load it whole.
    func loadAndCache(_ request: LoadRequest, revalidating: DiskHit?, workLock: LoadRequest.WorkEntry?,
                      context: RequestCoalescer<PipelineKey, LoadedImage>.WorkContext,
                      metrics: inout RetrieveImageMetrics) async throws(AlcedoError) -> LoadedImage {
        let clock = ContinuousClock()
        // 2. Load.
        let loadStart = clock.now
        let data: Data
        var response: DownloadResponse?
        switch request.source {
        case .network(let resource):
            let url = resource.downloadURL
            if let hit = revalidating, let validators = hit.metadata.httpCacheInfo {
                let outcome = try await request.downloader.revalidateData(with: url, validators: validators,
                                                                          options: downloadOptions(request, context),
                                                                          progress: context.reportProgress)
                metrics.loading = clock.now - loadStart
                switch outcome {
                case .notModified(let info, let notModified):
                    _ = try? await cache(for: hit, request).updateDiskMetadata(
                        forKey: request.key, processorIdentifier: identifier(for: hit, request),
                        forcedExtension: request.options.forcedExtension, httpCacheInfo: info)
                    if let served = try await serve(hit, request, info: info, response: notModified,
                                                    priority: context.ticket.priority, metrics: &metrics) {
                        return served
                    }
                    // The cached bytes no longer decode: fetch them whole.
                    let fresh = try await request.downloader.downloadData(with: url, options: downloadOptions(request, context),
                                                                          progress: context.reportProgress)
                    (data, response) = (fresh.data, fresh.response)
                case .modified(let fresh):
                    (data, response) = (fresh.data, fresh.response)
                }
            } else {
                let fresh = try await request.downloader.downloadData(with: url, options: downloadOptions(request, context),
                                                                      progress: context.reportProgress)
                (data, response) = (fresh.data, fresh.response)
            }
        case .provider(let provider):
            data = try await provider.loadedData()
        }
        metrics.loading = clock.now - loadStart

        // 3. Decode and process, 4. store.
        let image = try await transform(.bytes(data, fromDisk: false), request, options: request.decodingOptions, process: true,
                                        priority: context.ticket.priority, metrics: &metrics).mapError(\.error).get()
        let variantData = await store(image, data: data, info: response?.cacheInfo, request, storeOriginal: true,
                                      releasing: workLock, metrics: &metrics)
        return LoadedImage(image: image, cacheType: .none, originalData: data, response: response, metrics: metrics,
                           variantData: variantData)
    }

    // MARK: Cache lookups

    /// The original image in memory (in the original cache), for a request with a variant.
    /// Not used under a ``ColorManagement`` other than the default: the original in memory is sRGB.
    private func originalInMemory(_ request: LoadRequest) -> AlcedoImage? {
        // The original in memory is the first page: another page is decoded from the bytes.
        guard !request.variantIsOriginal, request.options.colorManagement == .convertToSRGB, request.options.page == 0,
              !request.options.readsMetadata, !request.options.prefersEmbeddedThumbnail else { return nil }
        return request.originalCache.retrieveImageInMemoryCache(
            forKey: request.key, extendingExpiration: request.options.memoryCacheAccessExtendingExpiration)
    }

    /// The variant on disk or in the shared tier, else the original on disk or in the shared
    /// tier; read errors count as misses.
    private func diskHit(_ request: LoadRequest) async -> DiskHit? {
        let extending = request.options.diskCacheAccessExtendingExpiration
        if request.storesVariantOnDisk,
           let entry = try? await request.targetCache.retrieveStoredData(
               forKey: request.key, processorIdentifier: request.variant, forcedExtension: request.options.forcedExtension,
               extendingExpiration: extending) {
            return DiskHit(kind: .variant, data: entry.data, metadata: entry.metadata)
        }
        if let entry = try? await request.originalCache.retrieveStoredData(forKey: request.key,
                                                                           forcedExtension: request.options.forcedExtension,
                                                                           extendingExpiration: extending) {
            return DiskHit(kind: .original, data: entry.data, metadata: entry.metadata)
        }
        return nil
    }

    private func cache(for hit: DiskHit, _ request: LoadRequest) -> ImageCache {
        hit.kind == .variant ? request.targetCache : request.originalCache
    }

    private func identifier(for hit: DiskHit, _ request: LoadRequest) -> String {
        hit.kind == .variant ? request.variant : ""
    }

    /// Decodes a disk entry (processing an original) and stores what the request lacks in
    /// memory and on disk; `nil` when the entry does not decode (it is then loaded again).
    private func serve(_ hit: DiskHit, _ request: LoadRequest, info: HTTPCacheInfo?, response: DownloadResponse?,
                       priority: DownloadPriority, metrics: inout RetrieveImageMetrics) async throws(AlcedoError) -> LoadedImage? {
        let outcome = await transform(.bytes(hit.data, fromDisk: true), request,
                                      options: hit.kind == .variant ? request.variantDecodingOptions : request.decodingOptions,
                                      process: hit.kind == .original, priority: priority, metrics: &metrics)
        let image: AlcedoImage
        switch outcome {
        case .success(let value): image = value
        // An entry that does not decode is loaded again; a processor's failure is the request's.
        case .failure(.decoding(let error)): if error.isCancellation { throw error } else { return nil }
        case .failure(.processing(let error)): throw error
        }
        let variantData: Data?
        switch hit.kind {
        case .variant:
            let clock = ContinuousClock()
            let start = clock.now
            request.targetCache.storeToMemory(image, forKey: request.key, processorIdentifier: request.variant,
                                              expiration: request.memoryExpiration(for: info))
            metrics.storing += clock.now - start
            variantData = request.processorIsDefault ? nil : hit.data
        case .original:
            variantData = await store(image, data: hit.data, info: info, request, storeOriginal: false, metrics: &metrics)
        }
        return LoadedImage(image: image, cacheType: .disk, originalData: hit.data, response: response, metrics: metrics,
                           variantData: variantData, processedFromCachedOriginal: hit.kind == .original && !request.variantIsOriginal,
                           storedCacheInfo: info)
    }

    // MARK: Decoding and processing

    private func downloadOptions(_ request: LoadRequest, _ context: RequestCoalescer<PipelineKey, LoadedImage>.WorkContext) -> DownloadOptions {
        var options = request.options.downloadOptions
        options.priority = context.ticket.priority
        return options
    }

    /// What ``transform(_:_:options:process:priority:metrics:)`` starts from.
    enum TransformInput: Sendable {
        /// Encoded bytes: loaded ones (decoded with the downloader's codecs) or a disk entry's
        /// (`fromDisk`, decoded with the request's serializer).
        case bytes(Data, fromDisk: Bool)
        /// An image already decoded (an original from the memory cache).
        case image(AlcedoImage)
    }

    /// The stage a transform failed in.
    enum TransformError: Error {
        case decoding(AlcedoError)
        case processing(AlcedoError)

        var error: AlcedoError {
            switch self {
            case .decoding(let error), .processing(let error): return error
            }
        }
    }

    /// Decodes and (with `process`) runs the processor in one job on the work pool, off the
    /// cooperative pool; under ``AlcedoOptionsInfoItem/onlyLoadFirstFrame`` only the first
    /// frame is processed.
    private func transform(_ input: TransformInput, _ request: LoadRequest, options: DecodingOptions, process: Bool,
                           priority: DownloadPriority, metrics: inout RetrieveImageMetrics) async -> Result<AlcedoImage, TransformError> {
        let serializer = request.serializer
        let registry = request.downloader.codecRegistry
        let processor = request.options.processor
        let runsProcessor = process && !request.processorIsDefault
        let firstFrameOnly = request.options.onlyLoadFirstFrame
        let parsed = request.options
        // Under `.processingQueue`, the processor runs on that queue after the decode.
        let processingQueue = runsProcessor ? parsed.processingQueue : nil
        // A render abandoned past its CPU budget keeps its memory counted in the same budget.
        let options = {
            var options = options
            options.abandonedWorkBudget = request.memoryHold?.budget
            return options
        }()
        var estimate: WorkingSetEstimate?
        if let hold = request.memoryHold {
            let working = Self.workingSet(input, options: options, registry: registry, serializer: serializer)
            estimate = working
            let waitStart = ContinuousClock.now
            defer { metrics.memoryWait += ContinuousClock.now - waitStart }
            do throws(AlcedoError) {
                try await hold.reserve(working, for: "decoding and processing this \(working.decodedSize) image "
                                                   + "(\(working.framesHeld) frame\(working.framesHeld == 1 ? "" : "s") held)")
            } catch {
                // The request's failure, not the entry's: a disk entry is not loaded again for it.
                return .failure(.processing(error))
            }
        }
        defer { if let estimate { request.memoryHold?.shrink(to: estimate.afterProcessing) } }
        let outcome = await BlockingWorkPool.shared.run(priority: priority) { () -> Result<TransformOutcome, AlcedoError> in
            .success(Self.transformNow(input, serializer: serializer, registry: registry, options: options,
                                       processor: runsProcessor && processingQueue == nil ? processor : nil,
                                       parsedOptions: parsed, firstFrameOnly: firstFrameOnly))
        }
        switch outcome {
        case .failure(let error):
            return .failure(.decoding(error))  // the wait for the pool was cancelled
        case .success(let done):
            metrics.decoding += done.decoding
            metrics.processing += done.processing
            metrics.processingSteps += done.steps
            guard let processingQueue, case .success(let decoded) = done.result else { return done.result }
            let clock = ContinuousClock()
            let start = clock.now
            let processed = await withCheckedContinuation {
                (continuation: CheckedContinuation<(Result<AlcedoImage, AlcedoError>, [ProcessingStepTime]), Never>) in
                processingQueue.execute {
                    continuation.resume(returning: Self.processNow(decoded, processor: processor, options: parsed))
                }
            }
            metrics.processing += clock.now - start
            metrics.processingSteps += processed.1
            return processed.0.mapError { .processing($0) }
        }
    }

    /// Runs `processor` on `image` with the request's options visible to processors written
    /// in Kingfisher's shape (``ImageProcessor/process(item:options:)``); returns the result
    /// with the time each step took (``ProcessingStepClock``).
    static func processNow(_ image: AlcedoImage, processor: any ImageProcessor,
                           options: AlcedoParsedOptionsInfo) -> (Result<AlcedoImage, AlcedoError>, [ProcessingStepTime]) {
        ProcessingContext.$options.withValue(options) {
            ProcessingStepClock.run(processor, on: image)
        }
    }

    /// The working set of a transform of `input`: from the header of encoded bytes (only the
    /// source's size when the header does not read: the decode then fails as fast), from the
    /// size of a decoded image.
    private static func workingSet(_ input: TransformInput, options: DecodingOptions, registry: ImageCodecRegistry,
                                   serializer: any CacheSerializer) -> WorkingSetEstimate {
        switch input {
        case .bytes(let data, _):
            if let estimate = try? WorkingSetEstimate.estimate(data: data, options: options, registry: registry, outputFormat: { info in
                serializer.encodedFormat(forSource: info.format, animated: info.frameCount > 1 && !options.firstFrameOnly)
            }) {
                return estimate
            }
            return WorkingSetEstimate(decodedSize: PixelSize(width: 1, height: 1), framesHeld: 1, outputSize: PixelSize(width: 1, height: 1),
                                      sourceBytes: data.count, decoded: 0, decoderWorking: 0, processing: 0, encoding: 0)
        case .image(let image):
            return WorkingSetEstimate.estimate(image: image, options: options,
                                               outputFormat: serializer.encodedFormat(forSource: image.sourceFormat,
                                                                                      animated: image.isAnimated))
        }
    }

    /// The synchronous body of ``transform(_:_:options:process:priority:metrics:)``.
    private static func transformNow(_ input: TransformInput, serializer: any CacheSerializer, registry: ImageCodecRegistry,
                                     options: DecodingOptions, processor: (any ImageProcessor)?,
                                     parsedOptions: AlcedoParsedOptionsInfo, firstFrameOnly: Bool) -> TransformOutcome {
        let clock = ContinuousClock()
        let start = clock.now
        var image: AlcedoImage
        switch input {
        case .image(let decoded):
            image = decoded
        case .bytes(let data, let fromDisk):
            do throws(AlcedoError) {
                image = fromDisk ? try serializer.deserializedImage(with: data, options: options) : try registry.decode(data, options: options)
            } catch {
                return TransformOutcome(result: .failure(.decoding(error)), decoding: clock.now - start, processing: .zero)
            }
        }
        let decoded = clock.now - start
        image = image.withPointScale(parsedOptions.pointScale)
        if firstFrameOnly && image.isAnimated { image = image.frame(at: 0) }
        guard let processor else { return TransformOutcome(result: .success(image), decoding: decoded, processing: .zero) }
        let processingStart = clock.now
        let (processed, steps) = processNow(image, processor: processor, options: parsedOptions)
        switch processed {
        case .success(let processed): image = processed.withPointScale(parsedOptions.pointScale)
        case .failure(let error):
            return TransformOutcome(result: .failure(.processing(error)), decoding: decoded, processing: clock.now - processingStart,
                                    steps: steps)
        }
        return TransformOutcome(result: .success(image), decoding: decoded, processing: clock.now - processingStart, steps: steps)
    }

    /// The result of a transform with the time each stage took.
    struct TransformOutcome: Sendable {
        let result: Result<AlcedoImage, TransformError>
        let decoding: Duration
        let processing: Duration
        /// The processing steps, one by one (empty when nothing was processed).
        var steps: [ProcessingStepTime] = []
    }
}

extension ImageDataProvider {
    /// ``data()``, its failure as the manager reports it: an ``AlcedoError`` as thrown, a
    /// cancellation as `.requestError(.dataProviderCancelled)`, anything else as
    /// `.imageSettingError(.dataProviderError)`.
    func loadedData() async throws(AlcedoError) -> Data {
        do {
            return try await data()
        } catch let error as AlcedoError {
            throw error
        } catch is CancellationError {
            throw .requestError(reason: .dataProviderCancelled(provider: self))
        } catch {
            throw .imageSettingError(reason: .dataProviderError(provider: self, error: error))
        }
    }
}
