import Foundation

/// The flow of one source: memory → disk (variant, then original) → load → decode → process →
/// store, run once per ``PipelineKey`` in flight.
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
    func retrieveSingle(_ source: Source, originalSource: Source, options: AlcedoParsedOptionsInfo,
                        progress: (@Sendable (DownloadProgress) -> Void)?) async throws(AlcedoError) -> RetrieveImageResult {
        let clock = ContinuousClock()
        let start = clock.now
        let request = LoadRequest(source: source, options: options, manager: self)
        if let hit = memoryResult(request, originalSource: originalSource, since: start) { return hit }
        let loaded = try await pipelines.value(for: request.pipelineKey, priority: PriorityTicket(priority: options.downloadPriority),
                                               progress: progress) { [self] context in
            do throws(AlcedoError) {
                return .success(try await run(request, context: context))
            } catch {
                return .failure(error)
            }
        }
        return deliver(loaded, request, originalSource: originalSource, since: start)
    }

    /// The result for `source` if its processed image is in memory (and the request reads the
    /// caches), without any suspension: what a binding shows at once.
    func memoryCachedResult(for source: Source, options: AlcedoParsedOptionsInfo) -> RetrieveImageResult? {
        memoryResult(LoadRequest(source: source, options: options, manager: self), originalSource: source,
                     since: ContinuousClock.now)
    }

    private func memoryResult(_ request: LoadRequest, originalSource: Source, since start: ContinuousClock.Instant) -> RetrieveImageResult? {
        guard let hit = memoryHit(request) else { return nil }
        var metrics = RetrieveImageMetrics()
        metrics.cacheLookup = ContinuousClock.now - start
        return deliver(LoadedImage(image: hit, cacheType: .memory, originalData: nil, response: nil, metrics: metrics),
                       request, originalSource: originalSource, since: start)
    }

    /// The caller's result: the first frame under ``AlcedoOptionsInfoItem/onlyLoadFirstFrame``,
    /// the image modifier applied, the total time set.
    private func deliver(_ loaded: LoadedImage, _ request: LoadRequest, originalSource: Source,
                         since start: ContinuousClock.Instant) -> RetrieveImageResult {
        var image = loaded.image
        if request.options.onlyLoadFirstFrame && image.isAnimated { image = image.frame(at: 0) }
        if let modifier = request.options.imageModifier { image = modifier.modify(image) }
        var metrics = loaded.metrics
        metrics.total = ContinuousClock.now - start
        return RetrieveImageResult(image: image, cacheType: loaded.cacheType, source: request.source, originalSource: originalSource,
                                   originalData: loaded.originalData, response: loaded.response, metrics: metrics)
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
        let clock = ContinuousClock()
        var metrics = RetrieveImageMetrics()
        let options = request.options
        let refresh = options.forceRefresh || options.fromMemoryCacheOrRefresh

        // 1. Caches.
        var lookupStart = clock.now
        if let image = memoryHit(request) {
            metrics.cacheLookup = clock.now - lookupStart
            return LoadedImage(image: image, cacheType: .memory, originalData: nil, response: nil, metrics: metrics)
        }
        var revalidating: DiskHit?
        if !refresh {
            if !request.variantIsOriginal, let original = originalInMemory(request) {
                metrics.cacheLookup = clock.now - lookupStart
                let image = try await process(original, request, priority: context.ticket.priority, metrics: &metrics)
                // The variant goes to disk only if its original is there (not memory-only, not no-store).
                let originalOnDisk = try? await request.originalCache.diskMetadata(forKey: request.key)
                await store(image, data: nil, info: originalOnDisk?.httpCacheInfo, request, storeOriginal: false,
                            toDisk: originalOnDisk != nil, metrics: &metrics)
                return LoadedImage(image: image, cacheType: .memory, originalData: nil, response: nil, metrics: metrics)
            }
            let hit = await diskHit(request)
            metrics.cacheLookup = clock.now - lookupStart
            if let hit {
                if request.needsRevalidation(hit.metadata.httpCacheInfo) {
                    revalidating = hit
                } else if let served = try await serve(hit, request, info: hit.metadata.httpCacheInfo, response: nil,
                                                       priority: context.ticket.priority, metrics: &metrics) {
                    return served
                }
            }
            if options.onlyFromCache { throw .cacheError(reason: .notCached(key: request.key)) }
        } else if options.onlyFromCache {
            throw .cacheError(reason: .notCached(key: request.key))
        } else if case .network = request.source {
            // A refresh revalidates what is on disk rather than forgetting it.
            lookupStart = clock.now
            revalidating = await diskHit(request)
            metrics.cacheLookup = clock.now - lookupStart
        }

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
                        forKey: request.key, processorIdentifier: identifier(for: hit, request), httpCacheInfo: info)
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
            data = try await provider.data()
        }
        metrics.loading = clock.now - loadStart

        // 3. Decode and process, 4. store.
        let decoded = try await decode(data, request, options: request.decodingOptions, fromDisk: false,
                                       priority: context.ticket.priority, metrics: &metrics)
        let image = try await process(decoded, request, priority: context.ticket.priority, metrics: &metrics)
        await store(image, data: data, info: response?.cacheInfo, request, storeOriginal: true, metrics: &metrics)
        return LoadedImage(image: image, cacheType: .none, originalData: data, response: response, metrics: metrics)
    }

    // MARK: Cache lookups

    /// The original image in memory (in the original cache), for a request with a variant.
    private func originalInMemory(_ request: LoadRequest) -> AlcedoImage? {
        guard !request.variantIsOriginal else { return nil }
        return request.originalCache.retrieveImageInMemoryCache(
            forKey: request.key, extendingExpiration: request.options.memoryCacheAccessExtendingExpiration)
    }

    /// The variant on disk, else the original on disk; read errors count as misses.
    private func diskHit(_ request: LoadRequest) async -> DiskHit? {
        let extending = request.options.diskCacheAccessExtendingExpiration
        if request.storesVariantOnDisk,
           let entry = try? await request.targetCache.retrieveDataInDiskCache(
               forKey: request.key, processorIdentifier: request.variant, extendingExpiration: extending) {
            return DiskHit(kind: .variant, data: entry.data, metadata: entry.metadata)
        }
        if let entry = try? await request.originalCache.retrieveDataInDiskCache(forKey: request.key, extendingExpiration: extending) {
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
        let image: AlcedoImage
        switch hit.kind {
        case .variant:
            do {
                image = try await decode(hit.data, request, options: request.variantDecodingOptions, fromDisk: true,
                                         priority: priority, metrics: &metrics)
            } catch {
                if error.isCancellation { throw error }
                return nil
            }
            let clock = ContinuousClock()
            let start = clock.now
            request.targetCache.storeToMemory(image, forKey: request.key, processorIdentifier: request.variant,
                                              expiration: request.memoryExpiration(for: info))
            metrics.storing += clock.now - start
        case .original:
            let decoded: AlcedoImage
            do {
                decoded = try await decode(hit.data, request, options: request.decodingOptions, fromDisk: true,
                                           priority: priority, metrics: &metrics)
            } catch {
                if error.isCancellation { throw error }
                return nil
            }
            image = try await process(decoded, request, priority: priority, metrics: &metrics)
            await store(image, data: hit.data, info: info, request, storeOriginal: false, metrics: &metrics)
        }
        return LoadedImage(image: image, cacheType: .disk, originalData: hit.data, response: response, metrics: metrics)
    }

    // MARK: Decoding and processing

    private func downloadOptions(_ request: LoadRequest, _ context: RequestCoalescer<PipelineKey, LoadedImage>.WorkContext) -> DownloadOptions {
        var options = request.options.downloadOptions
        options.priority = context.ticket.priority
        return options
    }

    /// Decodes `data` off the cooperative pool: loaded bytes with the downloader's codecs,
    /// disk entries (`fromDisk`) with the request's serializer.
    private func decode(_ data: Data, _ request: LoadRequest, options: DecodingOptions, fromDisk: Bool,
                        priority: DownloadPriority, metrics: inout RetrieveImageMetrics) async throws(AlcedoError) -> AlcedoImage {
        let serializer = request.serializer
        let registry = request.downloader.codecRegistry
        let timed = await BlockingWorkPool.shared.run(priority: priority) { () -> Result<(AlcedoImage, Duration), AlcedoError> in
            let clock = ContinuousClock()
            let start = clock.now
            return Result { () throws(AlcedoError) in
                let image = fromDisk ? try serializer.image(with: data, options: options) : try registry.decode(data, options: options)
                return (image, clock.now - start)
            }
        }
        let (image, duration) = try timed.get()
        metrics.decoding += duration
        return image
    }

    /// Runs the processor off the cooperative pool (the first frame only under
    /// ``AlcedoOptionsInfoItem/onlyLoadFirstFrame``).
    private func process(_ image: AlcedoImage, _ request: LoadRequest, priority: DownloadPriority,
                         metrics: inout RetrieveImageMetrics) async throws(AlcedoError) -> AlcedoImage {
        let processor = request.options.processor
        guard !request.processorIsDefault else {
            return request.options.onlyLoadFirstFrame && image.isAnimated ? image.frame(at: 0) : image
        }
        let firstFrameOnly = request.options.onlyLoadFirstFrame
        let timed = await BlockingWorkPool.shared.run(priority: priority) { () -> Result<(AlcedoImage, Duration), AlcedoError> in
            let clock = ContinuousClock()
            let start = clock.now
            return Result { () throws(AlcedoError) in
                let input = firstFrameOnly && image.isAnimated ? image.frame(at: 0) : image
                return (try processor.process(input), clock.now - start)
            }
        }
        let (processed, duration) = try timed.get()
        metrics.processing += duration
        return processed
    }
}
