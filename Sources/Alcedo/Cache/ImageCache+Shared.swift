#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The shared tier's part of the lookups and stores of ``ImageCache``.
///
/// The shared tier holds an entry by its key and processor identifier alone: a disk file's
/// forced extension (`forcedExtension:`) names only the local file, so a shared hit is written
/// back to disk under the extension the lookup asked for.
extension ImageCache {
    /// The stored bytes and their metadata for revalidation or decoding: from disk, else from
    /// the ``sharedTier`` (a shared hit is written to disk on the way; its metadata is then the
    /// disk entry's). `nil` when neither has it.
    /// `forcedExtension` is the extension the disk entry was stored with (default `nil`: the configured one).
    /// - Throws: a disk read error, only when the shared tier has no entry either.
    public func retrieveStoredData(forKey key: String, processorIdentifier: String = "", forcedExtension: String? = nil,
                                   extendingExpiration: ExpirationExtending = .cacheTime)
        async throws(AlcedoError) -> (data: Data, metadata: DiskEntryMetadata)? {
        var diskError: AlcedoError?
        do throws(AlcedoError) {
            if let entry = try await retrieveDataInDiskCache(forKey: key, processorIdentifier: processorIdentifier,
                                                             forcedExtension: forcedExtension,
                                                             extendingExpiration: extendingExpiration) {
                return entry
            }
        } catch {
            diskError = error
        }
        let computedKey = Self.cacheKey(forKey: key, processorIdentifier: processorIdentifier)
        if let sharedTier, let entry = await sharedTier.entry(forKey: computedKey) {
            return await writeBack(entry, computedKey: computedKey, forcedExtension: forcedExtension)
        }
        if let diskError { throw diskError }
        return nil
    }

    /// The image in the ``sharedTier``, decoded, or `nil` (no tier, a miss, a failure, or bytes
    /// that do not decode). A hit is written to disk, with `forcedExtension` (default `nil`: the
    /// configured extension); it is not put in memory.
    public func retrieveImageInSharedCache(forKey key: String, processorIdentifier: String = "",
                                           forcedExtension: String? = nil, options: DecodingOptions = .default,
                                           cacheSerializer: (any CacheSerializer)? = nil) async -> AlcedoImage? {
        let computedKey = Self.cacheKey(forKey: key, processorIdentifier: processorIdentifier)
        guard let sharedTier, let entry = await sharedTier.entry(forKey: computedKey) else { return nil }
        _ = await writeBack(entry, computedKey: computedKey, forcedExtension: forcedExtension)
        let serializer = cacheSerializer ?? self.cacheSerializer
        return try? await io.run { () throws(AlcedoError) -> AlcedoImage in
            try serializer.deserializedImage(with: entry.data, options: options)
        }
    }

    /// Stores serialized bytes on disk and in the ``sharedTier``: what a download or a newly
    /// processed variant is stored with. The shared store happens even when the disk fails, and
    /// its own failure is not thrown.
    /// - Parameters:
    ///   - expiration: the entry's expiration; `nil` (default) uses the disk storage's. The
    ///     shared entry expires at the same time.
    ///   - httpCacheInfo: the HTTP validators and freshness to keep with the entry.
    ///   - forcedExtension: an extension for the disk file's name instead of the configured one
    ///     (default `nil`).
    /// - Throws: the disk's error.
    public func storeSerialized(_ data: Data, forKey key: String, processorIdentifier: String = "",
                                expiration: StorageExpiration? = nil, httpCacheInfo: HTTPCacheInfo? = nil,
                                forcedExtension: String? = nil) async throws(AlcedoError) {
        let computedKey = Self.cacheKey(forKey: key, processorIdentifier: processorIdentifier)
        var diskError: AlcedoError?
        do throws(AlcedoError) {
            try await storeToDisk(data, forKey: key, processorIdentifier: processorIdentifier, forcedExtension: forcedExtension,
                                  expiration: expiration, httpCacheInfo: httpCacheInfo)
        } catch {
            diskError = error
        }
        await storeToSharedCache(data, computedKey: computedKey, expiration: expiration, httpCacheInfo: httpCacheInfo)
        if let diskError { throw diskError }
    }

    /// After a miss in every tier: whether to do the work now or take the result another
    /// process is making (see ``SharedCacheTier/coalesce(forKey:)``). Without a shared tier,
    /// `.proceed(holdsLock: false)` at once. A found entry is written to disk on the way, with
    /// `forcedExtension` (default `nil`: the configured extension).
    public func coalesceWork(forKey key: String, processorIdentifier: String = "",
                             forcedExtension: String? = nil) async -> SharedCacheTier.Coalescing {
        guard let sharedTier else { return .proceed(holdsLock: false) }
        let computedKey = Self.cacheKey(forKey: key, processorIdentifier: processorIdentifier)
        let outcome = await sharedTier.coalesce(forKey: computedKey)
        if case .found(let entry) = outcome {
            _ = await writeBack(entry, computedKey: computedKey, forcedExtension: forcedExtension)
        }
        return outcome
    }

    /// Releases the work lock taken by ``coalesceWork(forKey:processorIdentifier:forcedExtension:)``.
    public func releaseWorkLock(forKey key: String, processorIdentifier: String = "") async {
        await sharedTier?.releaseLock(forKey: Self.cacheKey(forKey: key, processorIdentifier: processorIdentifier))
    }

    // MARK: Helpers

    /// Stores `data` in the shared tier (if any) until the disk expiration it would get.
    func storeToSharedCache(_ data: Data, computedKey: String, expiration: StorageExpiration?,
                            httpCacheInfo: HTTPCacheInfo?) async {
        guard let sharedTier else { return }
        let now = Date()
        let expires = (expiration ?? diskStorage.config.expiration).estimatedExpiration(since: now)
        guard expires > now else { return }
        let metadata = SharedCacheEntry.Metadata(key: computedKey, creationDate: now, expirationDate: expires,
                                                 httpCacheInfo: httpCacheInfo, format: ImageFormat.sniff(data))
        await sharedTier.store(SharedCacheEntry(data: data, metadata: metadata), forKey: computedKey)
    }

    /// Writes a shared-tier hit to disk (errors ignored: the disk is only a copy) and returns
    /// it with disk-style metadata; the disk file is named with `forcedExtension` when given.
    func writeBack(_ entry: SharedCacheEntry, computedKey: String,
                   forcedExtension: String?) async -> (data: Data, metadata: DiskEntryMetadata) {
        let disk = diskStorage
        let expiration: StorageExpiration = entry.metadata.expirationDate == .distantFuture
            ? .never : .date(entry.metadata.expirationDate)
        try? await io.run { () throws(AlcedoError) in
            try disk.store(value: entry.data, forKey: computedKey, expiration: expiration,
                           httpCacheInfo: entry.metadata.httpCacheInfo, forcedExtension: forcedExtension)
        }
        let now = Date()
        let metadata = DiskEntryMetadata(key: computedKey, hash: disk.hash(forKey: computedKey), dataSize: entry.data.count,
                                         fileSize: entry.data.count, creationDate: entry.metadata.creationDate,
                                         lastAccessDate: now, expirationDate: entry.metadata.expirationDate,
                                         httpCacheInfo: entry.metadata.httpCacheInfo)
        return (entry.data, metadata)
    }
}
