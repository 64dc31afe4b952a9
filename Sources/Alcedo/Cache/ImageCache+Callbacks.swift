#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a callback-form ``ImageCache/store(_:original:forKey:processorIdentifier:forcedExtension:cacheSerializer:toDisk:callbackQueue:completionHandler:)``
/// did (Kingfisher's `CacheStoreResult`).
public struct CacheStoreResult: Sendable {
    /// The memory store, which cannot fail.
    public let memoryCacheResult: Result<Void, Never>
    /// The disk store: `.success` also when the call did not write to disk (`toDisk: false`).
    public let diskCacheResult: Result<Void, AlcedoError>
}

/// Kingfisher's synchronous and callback forms of the cache, next to the `async` ones. Each
/// callback runs once, on the `callbackQueue` given (default ``CallbackQueue/untouch``: the
/// thread that finished the work); the work itself runs on the cache's I/O queue.
extension ImageCache {
    // MARK: State, without waiting

    /// Where the image is cached (`.memory`, `.disk` or `.none`), answered at once: the memory
    /// cache, then the disk cache's in-memory index (an unexpired entry, whose file is checked
    /// with one `stat` on a hit). Before the disk index is loaded (the first disk operation of
    /// the cache loads it) only the entry's file is looked for, as Kingfisher does. Not an
    /// access. Synchronous, as in Kingfisher: call it from `async` code without `await`.
    /// - Parameters:
    ///   - key: the source's cache key.
    ///   - processorIdentifier: the processor's identifier (default `""`: the original image).
    ///   - forcedExtension: the extension the disk entry was stored with (default `nil`: the
    ///     configured one). The memory cache is asked whatever the extension.
    public func imageCachedType(forKey key: String, processorIdentifier: String = "",
                                forcedExtension: String? = nil) -> CacheType {
        let computedKey = Self.cacheKey(forKey: key, processorIdentifier: processorIdentifier)
        if memoryStorage.isCached(forKey: computedKey) { return .memory }
        return diskStorage.isIndexed(forKey: computedKey, forcedExtension: forcedExtension) ? .disk : .none
    }

    /// `true` when the image is in memory or on disk, answered at once as
    /// ``imageCachedType(forKey:processorIdentifier:forcedExtension:)`` answers (with the same
    /// parameters and defaults). Not an access.
    public func isCached(forKey key: String, processorIdentifier: String = "", forcedExtension: String? = nil) -> Bool {
        imageCachedType(forKey: key, processorIdentifier: processorIdentifier, forcedExtension: forcedExtension).cached
    }

    // MARK: Callbacks

    /// Looks for the image in memory, then on disk, and calls `completionHandler` once with
    /// what was found (a memory hit at once, before this returns, when `callbackQueue` is
    /// ``CallbackQueue/untouch``) (``ImageCacheResult/none`` for a miss) or the disk or decoding error.
    /// - Parameters:
    ///   - key: the source's cache key.
    ///   - options: the request options that matter here: the processor (its identifier names
    ///     the variant, after ``AlcedoOptionsInfoItem/scaleFactor(_:)``), the cache serializer,
    ///     the decoding limits, ``AlcedoOptionsInfoItem/onlyLoadFirstFrame`` and the memory
    ///     access extension (default `nil`: none of them).
    ///   - callbackQueue: where `completionHandler` runs (default ``CallbackQueue/untouch``).
    ///   - completionHandler: called once.
    public func retrieveImage(forKey key: String, options: AlcedoOptionsInfo? = nil, callbackQueue: CallbackQueue = .untouch,
                              completionHandler: (@Sendable (Result<ImageCacheResult, AlcedoError>) -> Void)?) {
        retrieveImage(forKey: key, options: AlcedoParsedOptionsInfo(options), callbackQueue: callbackQueue,
                      completionHandler: completionHandler)
    }

    /// The form of ``retrieveImage(forKey:options:callbackQueue:completionHandler:)`` that takes
    /// options already read (Kingfisher's `KingfisherParsedOptionsInfo`). With a
    /// ``AlcedoParsedOptionsInfo/sourceTaskIdentifierChecker``, a disk hit is checked before the
    /// read, before decoding and before it goes to memory: once the checker answers `false`, the
    /// retrieval stops there and the answer is ``ImageCacheResult/none``.
    public func retrieveImage(forKey key: String, options: AlcedoParsedOptionsInfo, callbackQueue: CallbackQueue = .untouch,
                              completionHandler: (@Sendable (Result<ImageCacheResult, AlcedoError>) -> Void)?) {
        let parsed = options
        // A memory hit is answered at once, on `callbackQueue`, as in Kingfisher.
        if let image = retrieveImageInMemoryCache(forKey: key, processorIdentifier: parsed.processor.identifier,
                                                  extendingExpiration: parsed.memoryCacheAccessExtendingExpiration) {
            if let completionHandler { callbackQueue.execute { completionHandler(.success(.memory(image))) } }
            return
        }
        Task {
            let result: Result<ImageCacheResult, AlcedoError>
            do throws(AlcedoError) {
                if let checker = parsed.sourceTaskIdentifierChecker {
                    result = .success(try await retrieveImage(
                        forKey: key, processorIdentifier: parsed.processor.identifier, forcedExtension: parsed.forcedExtension,
                        options: parsed.decodingOptions, cacheSerializer: parsed.cacheSerializer,
                        extendingExpiration: parsed.memoryCacheAccessExtendingExpiration, isCurrent: checker))
                } else {
                    result = .success(try await retrieveImage(
                        forKey: key, processorIdentifier: parsed.processor.identifier, forcedExtension: parsed.forcedExtension,
                        options: parsed.decodingOptions, cacheSerializer: parsed.cacheSerializer,
                        extendingExpiration: parsed.memoryCacheAccessExtendingExpiration))
                }
            } catch {
                result = .failure(error)
            }
            if let completionHandler { callbackQueue.execute { completionHandler(result) } }
        }
    }

    /// The image in memory for the processor of `options` (Kingfisher's form), or `nil`.
    public func retrieveImageInMemoryCache(forKey key: String, options: AlcedoParsedOptionsInfo) -> AlcedoImage? {
        retrieveImageInMemoryCache(forKey: key, processorIdentifier: options.processor.identifier,
                                   extendingExpiration: options.memoryCacheAccessExtendingExpiration)
    }

    /// Stores `image` in memory at once and, with `toDisk`, on disk in the background, then
    /// calls `completionHandler` (default `nil`) once with both outcomes. See the `async`
    /// ``store(_:original:forKey:processorIdentifier:forcedExtension:cacheSerializer:httpCacheInfo:memoryExpiration:diskExpiration:toDisk:)``
    /// for the parameters.
    public func store(_ image: AlcedoImage, original: Data? = nil, forKey key: String, processorIdentifier: String = "",
                      forcedExtension: String? = nil, cacheSerializer: (any CacheSerializer)? = nil, toDisk: Bool = true,
                      callbackQueue: CallbackQueue = .untouch,
                      completionHandler: (@Sendable (CacheStoreResult) -> Void)? = nil) {
        storeToMemory(image, forKey: key, processorIdentifier: processorIdentifier)
        guard toDisk else {
            if let completionHandler {
                callbackQueue.execute { completionHandler(CacheStoreResult(memoryCacheResult: .success(()), diskCacheResult: .success(()))) }
            }
            return
        }
        let serializer = cacheSerializer ?? self.cacheSerializer
        let bytes = processorIdentifier.isEmpty ? original : nil
        Task {
            let disk: Result<Void, AlcedoError>
            do throws(AlcedoError) {
                let data = try serializer.serializedData(with: image, original: bytes)
                try await storeToDisk(data, forKey: key, processorIdentifier: processorIdentifier, forcedExtension: forcedExtension)
                disk = .success(())
            } catch {
                disk = .failure(error)
            }
            if let completionHandler {
                callbackQueue.execute { completionHandler(CacheStoreResult(memoryCacheResult: .success(()), diskCacheResult: disk)) }
            }
        }
    }

    /// Removes the image from memory at once and from disk in the background (default both),
    /// then calls `completionHandler` (default `nil`). A disk error is not reported, as in Kingfisher.
    /// On disk, the entry removed is the one stored with `forcedExtension` (default `nil`: the configured extension).
    public func removeImage(forKey key: String, processorIdentifier: String = "", forcedExtension: String? = nil,
                            fromMemory: Bool = true, fromDisk: Bool = true,
                            callbackQueue: CallbackQueue = .untouch, completionHandler: (@Sendable () -> Void)? = nil) {
        if fromMemory { memoryStorage.remove(forKey: Self.cacheKey(forKey: key, processorIdentifier: processorIdentifier)) }
        Task {
            if fromDisk {
                try? await removeImage(forKey: key, processorIdentifier: processorIdentifier, forcedExtension: forcedExtension,
                                       fromMemory: false, fromDisk: true)
            }
            if let completionHandler { callbackQueue.execute(completionHandler) }
        }
    }

    /// Removes every image from memory, then calls `handler` (Kingfisher's form).
    public func clearMemoryCache(completion handler: (@Sendable () -> Void)?) {
        clearMemoryCache()
        handler?()
    }

    /// Removes every entry from disk in the background, then calls `handler` (default `nil`).
    /// A disk error is not reported, as in Kingfisher; use the `async` form to see it.
    public func clearDiskCache(completion handler: (@Sendable () -> Void)? = nil) {
        Task {
            await clearDiskCache()
            handler?()
        }
    }

    /// Removes every image from memory at once and from disk in the background, then calls
    /// `handler` (default `nil`).
    public func clearCache(completion handler: (@Sendable () -> Void)? = nil) {
        clearMemoryCache()
        clearDiskCache(completion: handler)
    }

    /// Removes expired entries (then least recently used ones over the size limit) from disk
    /// in the background, then calls `handler` (default `nil`).
    public func cleanExpiredDiskCache(completion handler: (@Sendable () -> Void)? = nil) {
        Task {
            _ = try? await cleanExpiredDiskCache()
            handler?()
        }
    }

    /// Calls `handler` once with the bytes the disk entries take, headers included, or the
    /// error reading them (Kingfisher's `Result<UInt, …>`).
    public func calculateDiskStorageSize(completion handler: @escaping @Sendable (Result<UInt, AlcedoError>) -> Void) {
        Task {
            do throws(AlcedoError) {
                handler(.success(UInt(try await diskStorageSize)))
            } catch {
                handler(.failure(error))
            }
        }
    }
}

extension DiskStorage.EntryStore {
    /// `true` when the disk index lists an unexpired entry for `key` whose file exists (one
    /// `stat`, on a hit only); before the index is loaded, `true` when the entry's file exists.
    /// Never loads the index. `forcedExtension` is the one the entry was stored with, if any.
    func isIndexed(forKey key: String, forcedExtension: String? = nil) -> Bool {
        let id = name(forKey: key, forcedExtension: forcedExtension)
        guard index.isLoaded else { return POSIXFile.exists(path(for: id)) }
        guard let entry = index.entry(id), entry.expiration > DiskTime.milliseconds(config.now()) else { return false }
        return POSIXFile.exists(path(for: id))
    }
}
