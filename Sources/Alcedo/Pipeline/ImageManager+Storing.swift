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
    /// The disk part is awaited under ``AlcedoOptionsInfoItem/waitForCache`` and runs after
    /// delivery otherwise. Disk failures are not reported: the memory cache keeps working.
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
        if options.waitForCache {
            let written = await writes.perform()
            metrics.encoding += written.encoding
            return written.variant
        } else {
            Task { await writes.perform() }
            return nil
        }
    }
}

/// The disk (and shared-tier) writes of one store, ready to run now or after delivery.
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

    /// Writes, then releases the work lock; returns the variant's encoded bytes, if it wrote
    /// them, and the time encoding them took.
    @discardableResult
    func perform() async -> (variant: Data?, encoding: Duration) {
        let written = await write()
        if let workLock { await workLock.cache.releaseWorkLock(forKey: request.key, processorIdentifier: workLock.identifier) }
        return written
    }

    private func write() async -> (variant: Data?, encoding: Duration) {
        let options = request.options
        var variant: Data?
        var encoding = Duration.zero
        if writesVariant {
            let serializer = request.serializer
            let image = self.image
            let timed = await BlockingWorkPool.shared.run(priority: options.downloadPriority) {
                () -> Result<(Result<Data, AlcedoError>, Duration), AlcedoError> in
                let start = ContinuousClock.now
                let result = Result { () throws(AlcedoError) in try serializer.serializedData(with: image, original: nil) }
                return .success((result, .now - start))
            }
            let encoded: Result<Data, AlcedoError>
            switch timed {
            case .success(let (result, duration)):
                encoded = result
                encoding = duration
            case .failure(let error):
                encoded = .failure(error)
            }
            if case .success(let bytes) = encoded {
                variant = bytes
                try? await request.targetCache.storeSerialized(bytes, forKey: request.key, processorIdentifier: request.variant,
                                                           expiration: options.diskCacheExpiration, httpCacheInfo: info,
                                                           forcedExtension: options.forcedExtension)
            }
        }
        if writesOriginal, let data {
            let bytes: Data
            if request.processorIsDefault && !options.onlyLoadFirstFrame && options.colorManagement == .convertToSRGB
                && !options.prefersEmbeddedThumbnail {
                // The serializer decides how the original is kept (as loaded, by default).
                let serializer = request.serializer
                let image = self.image
                let encoded = await BlockingWorkPool.shared.run(priority: options.downloadPriority) { () -> Result<Data, AlcedoError> in
                    Result { () throws(AlcedoError) in try serializer.serializedData(with: image, original: data) }
                }
                guard case .success(let serialized) = encoded else { return (variant, encoding) }
                bytes = serialized
            } else {
                bytes = data
            }
            try? await request.originalCache.storeSerialized(bytes, forKey: request.key, expiration: options.diskCacheExpiration,
                                                         httpCacheInfo: info, forcedExtension: options.forcedExtension)
        }
        return (variant, encoding)
    }
}
