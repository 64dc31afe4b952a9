#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Storing what a run of the flow produced.
extension ImageManager {
    /// Stores `image` in memory under the request's variant, then on disk unless the request
    /// is memory-only or the response said `no-store`: the processed variant (encoded by the
    /// serializer), or without a processor the original bytes as loaded; with
    /// ``AlcedoOptionsInfoItem/cacheOriginalImage``, also the original bytes in the original cache.
    ///
    /// The disk part is awaited under ``AlcedoOptionsInfoItem/waitForCache`` (the processed image,
    /// then the original kept beside it) and runs after delivery otherwise: a
    /// ``CacheCallbackCoordinator`` decides when this returns. Disk failures are not reported:
    /// the memory cache keeps working.
    /// - Parameters:
    ///   - data: the bytes `image` came from.
    ///   - storeOriginal: `true` after a load (the original is new); `false` when the original
    ///     came from a cache.
    ///   - toDisk: `false` to keep the image in memory only whatever the options say.
    ///   - workLock: the shared tier's work lock this request holds, released once the writes are done.
    /// - Returns: the variant's bytes as the serializer encoded them, when they were written
    ///   before returning (under ``AlcedoOptionsInfoItem/waitForCache``); else `nil`.
    @discardableResult
    func store(_ image: AlcedoImage, data: Data?, info: HTTPCacheInfo?, _ request: LoadRequest, storeOriginal: Bool,
               toDisk: Bool = true, releasing workLock: LoadRequest.WorkEntry? = nil,
               metrics: inout RetrieveImageMetrics) async -> Data? {
        let clock = ContinuousClock()
        let start = clock.now
        let options = request.options
        request.targetCache.storeToMemory(image, forKey: request.key, processorIdentifier: request.variant,
                                          expiration: request.memoryExpiration(for: info))
        defer { metrics.storing += clock.now - start }
        let writes = DiskWrites(request: request, image: image, data: data, info: info, storeOriginal: storeOriginal,
                                workLock: workLock)
        guard toDisk, !options.cacheMemoryOnly, info?.noStore != true, writes.hasWork else {
            if let workLock { await workLock.cache.releaseWorkLock(forKey: request.key, processorIdentifier: workLock.identifier) }
            return nil
        }
        // The coordinator decides when this returns: at once, or (under `.waitForCache`) once
        // the writes it waits for are done.
        let coordinator = CacheCallbackCoordinator(shouldWaitForCache: options.waitForCache,
                                                   shouldCacheOriginal: writes.keepsOriginalBesideVariant)
        let (delivered, delivery) = AsyncStream.makeStream(of: DiskWrites.Written.self, bufferingPolicy: .bufferingNewest(1))
        coordinator.apply(.cacheInitiated) { delivery.finish() }
        let writing = Task {
            await writes.perform(coordinator: coordinator) { written in
                delivery.yield(written)
                delivery.finish()
            }
        }
        // A caller that waits for the writes and is cancelled cancels them, as if they ran in its task.
        let written = await withTaskCancellationHandler {
            await delivered.first { _ in true }
        } onCancel: {
            if options.waitForCache { writing.cancel() }
        }
        guard let written else { return nil }
        metrics.encoding += written.encoding
        return written.variant
    }
}

/// The disk (and shared-tier) writes of one store, run in a task of their own.
private struct DiskWrites: Sendable {
    let request: LoadRequest
    let image: AlcedoImage
    let data: Data?
    let info: HTTPCacheInfo?
    let storeOriginal: Bool
    let workLock: LoadRequest.WorkEntry?

    /// The processed variant is written (encoded from its pixels).
    var writesVariant: Bool { request.storesVariantOnDisk }
    /// The original bytes are written as loaded: without a processor (the variant is the
    /// original), or with ``AlcedoOptionsInfoItem/cacheOriginalImage``.
    var writesOriginal: Bool {
        storeOriginal && data != nil && (request.processorIsDefault || request.options.cacheOriginalImage)
    }

    var hasWork: Bool { writesVariant || writesOriginal }

    /// The original is written beside a processed variant (``AlcedoOptionsInfoItem/cacheOriginalImage``
    /// with a processor): a second write, after the variant's. Without a processor the original
    /// is the one image written.
    var keepsOriginalBesideVariant: Bool { writesVariant && writesOriginal }

    /// What the writes produced: the variant's encoded bytes, if they were written, and the
    /// time encoding them took.
    struct Written: Sendable {
        var variant: Data?
        var encoding = Duration.zero
    }

    /// Writes the image, then the original kept beside it, then releases the work lock,
    /// reporting each write to `coordinator`; `deliver` gets what was written when the
    /// coordinator says the caller's wait is over.
    func perform(coordinator: CacheCallbackCoordinator, deliver: @Sendable (Written) -> Void) async {
        var written = Written()
        if writesVariant { written = await writeVariant() }
        let done = written
        if keepsOriginalBesideVariant { coordinator.apply(.cachingImage) { deliver(done) } }
        if writesOriginal { await writeOriginal() }
        if let workLock { await workLock.cache.releaseWorkLock(forKey: request.key, processorIdentifier: workLock.identifier) }
        coordinator.apply(keepsOriginalBesideVariant ? .cachingOriginalImage : .cachingImage) { deliver(done) }
    }

    /// Encodes the processed variant from its pixels and writes it to the target cache.
    private func writeVariant() async -> Written {
        let options = request.options
        let serializer = request.serializer
        let image = self.image
        let timed = await BlockingWorkPool.shared.run(priority: options.downloadPriority) {
            () -> Result<(Result<Data, AlcedoError>, Duration), AlcedoError> in
            let start = ContinuousClock.now
            let result = Result { () throws(AlcedoError) in try serializer.serializedData(with: image, original: nil) }
            return .success((result, .now - start))
        }
        guard case .success(let (encoded, encoding)) = timed else { return Written() }
        guard case .success(let bytes) = encoded else { return Written(variant: nil, encoding: encoding) }
        try? await request.targetCache.storeSerialized(bytes, forKey: request.key, processorIdentifier: request.variant,
                                                   expiration: options.diskCacheExpiration, httpCacheInfo: info,
                                                   forcedExtension: options.forcedExtension)
        return Written(variant: bytes, encoding: encoding)
    }

    /// Writes the original bytes to the original cache: as the serializer keeps them when the
    /// image is the original itself, else as loaded.
    private func writeOriginal() async {
        guard let data else { return }
        let options = request.options
        let bytes: Data
        if request.processorIsDefault && !options.onlyLoadFirstFrame && options.colorManagement == .convertToSRGB
            && !options.prefersEmbeddedThumbnail {
            // The serializer decides how the original is kept (as loaded, by default).
            let serializer = request.serializer
            let image = self.image
            let encoded = await BlockingWorkPool.shared.run(priority: options.downloadPriority) { () -> Result<Data, AlcedoError> in
                Result { () throws(AlcedoError) in try serializer.serializedData(with: image, original: data) }
            }
            guard case .success(let serialized) = encoded else { return }
            bytes = serialized
        } else {
            bytes = data
        }
        try? await request.originalCache.storeSerialized(bytes, forKey: request.key, expiration: options.diskCacheExpiration,
                                                     httpCacheInfo: info, forcedExtension: options.forcedExtension)
    }
}
