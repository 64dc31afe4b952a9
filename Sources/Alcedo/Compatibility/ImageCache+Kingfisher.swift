#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Kingfisher's cache calls whose shape differs from Alcedo's own forms.
extension ImageCache {
    /// Where the image is cached, loading the disk cache's index first when it is not loaded
    /// yet, without blocking the caller (Kingfisher 8.7's `imageCachedTypeAsync(forKey:)`).
    /// Not an access.
    /// - Parameters:
    ///   - key: the source's cache key.
    ///   - processorIdentifier: the processor's identifier (default `""`: the original image).
    ///   - forcedExtension: the extension the disk entry was stored with (default `nil`: the configured one).
    public func imageCachedTypeAsync(forKey key: String, processorIdentifier: String = "",
                                     forcedExtension: String? = nil) async -> CacheType {
        await loadedImageCachedType(forKey: key, processorIdentifier: processorIdentifier, forcedExtension: forcedExtension)
    }

    /// The callback form of ``imageCachedTypeAsync(forKey:processorIdentifier:forcedExtension:)``: calls
    /// `completionHandler` once, on `callbackQueue` (default ``CallbackQueue/untouch``); a
    /// memory hit at once, before this returns, with ``CallbackQueue/untouch``.
    public func imageCachedTypeAsync(forKey key: String, processorIdentifier: String = "", forcedExtension: String? = nil,
                                     callbackQueue: CallbackQueue = .untouch,
                                     completionHandler: @escaping @Sendable (CacheType) -> Void) {
        // A memory hit is answered at once, as in Kingfisher.
        if memoryStorage.isCached(forKey: Self.cacheKey(forKey: key, processorIdentifier: processorIdentifier)) {
            callbackQueue.execute { completionHandler(.memory) }
            return
        }
        Task {
            let type = await imageCachedTypeAsync(forKey: key, processorIdentifier: processorIdentifier,
                                                  forcedExtension: forcedExtension)
            callbackQueue.execute { completionHandler(type) }
        }
    }

    /// The image on disk, decoded (or `nil` when not there), given to `completionHandler` once
    /// on `callbackQueue` (default ``CallbackQueue/untouch``); Kingfisher's callback form of
    /// ``retrieveImageInDiskCache(forKey:processorIdentifier:forcedExtension:options:cacheSerializer:extendingExpiration:)``.
    /// `options` are read as a request's (processor identifier, forced file extension, serializer, decoding limits);
    /// the image is not put in memory. With ``AlcedoOptionsInfoItem/loadDiskFileSynchronously``
    /// the file is read and decoded on the calling thread, and a `callbackQueue` of
    /// ``CallbackQueue/untouch`` calls back before this returns, as in Kingfisher: do not call
    /// it so from the cooperative thread pool.
    public func retrieveImageInDiskCache(forKey key: String, options: AlcedoOptionsInfo? = nil,
                                         callbackQueue: CallbackQueue = .untouch,
                                         completionHandler: @escaping @Sendable (Result<AlcedoImage?, AlcedoError>) -> Void) {
        let parsed = AlcedoParsedOptionsInfo(options)
        if parsed.loadDiskFileSynchronously {
            // Kingfisher's "read on the calling thread": the read and the decoding block the caller.
            let result: Result<AlcedoImage?, AlcedoError>
            do throws(AlcedoError) {
                let computedKey = Self.cacheKey(forKey: key, processorIdentifier: parsed.processor.identifier)
                let serializer = parsed.cacheSerializer ?? cacheSerializer
                if let data = try diskStorage.value(forKey: computedKey, extendingExpiration: parsed.diskCacheAccessExtendingExpiration,
                                                    forcedExtension: parsed.forcedExtension) {
                    result = .success(try serializer.deserializedImage(with: data, options: parsed.decodingOptions))
                } else {
                    result = .success(nil)
                }
            } catch {
                result = .failure(error)
            }
            callbackQueue.execute { completionHandler(result) }
            return
        }
        Task {
            let result: Result<AlcedoImage?, AlcedoError>
            do throws(AlcedoError) {
                result = .success(try await retrieveImageInDiskCache(
                    forKey: key, processorIdentifier: parsed.processor.identifier, forcedExtension: parsed.forcedExtension,
                    options: parsed.decodingOptions, cacheSerializer: parsed.cacheSerializer,
                    extendingExpiration: parsed.diskCacheAccessExtendingExpiration))
            } catch {
                result = .failure(error)
            }
            callbackQueue.execute { completionHandler(result) }
        }
    }
}

extension StorageExpiration {
    /// The expiration as seconds from now, as Kingfisher's (internal) `timeInterval` that its
    /// tests read: `.never` is `.infinity`, `.expired` is `-.infinity`, `.date` counts from now.
    public var timeInterval: TimeInterval {
        switch self {
        case .never: return .infinity
        case .seconds(let seconds): return seconds
        case .days(let days): return TimeInterval(days) * 86_400
        case .date(let date): return date.timeIntervalSinceNow
        case .expired: return -.infinity
        }
    }
}

extension StorageExpiration {
    /// When a value stored now with this expiration expires (Kingfisher's
    /// `estimatedExpirationSinceNow`).
    public var estimatedExpirationSinceNow: Date { estimatedExpiration(since: Date()) }

    /// `true` when a value stored now would already be expired (only ``expired`` and a past ``date(_:)``).
    public var isExpired: Bool { timeInterval <= 0 }
}

extension Date {
    /// `true` once the date is before now (Kingfisher's `isPast`).
    var isPast: Bool { isPast(referenceDate: Date()) }

    /// `true` when the date is before `referenceDate` (Kingfisher's `isPast(referenceDate:)`).
    func isPast(referenceDate: Date) -> Bool { timeIntervalSince(referenceDate) <= 0 }
}

/// Kingfisher's time constants.
enum TimeConstants {
    /// Seconds in a day: 86,400.
    static let secondsInOneDay = 86_400
}

extension DiskStorage.EntryStore {
    /// Removes every entry (Kingfisher's `removeAll(skipCreatingDirectory:)`). Alcedo keeps the
    /// cache folder either way: the next write creates it again when it is gone.
    public func removeAll(skipCreatingDirectory: Bool) throws(AlcedoError) {
        try removeAll()
    }
}
