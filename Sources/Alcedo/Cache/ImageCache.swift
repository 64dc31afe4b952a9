#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

/// The image cache: a ``MemoryStorage`` of decoded images in front of a ``DiskStorage`` of
/// serialized bytes, and optionally a ``SharedCacheTier`` shared with other processes or machines.
///
/// Lookups go to memory first; a disk hit is decoded and put in memory. Images processed by an
/// ``ImageProcessor`` are cached under `key@identifier` (see ``cacheKey(forKey:processorIdentifier:)``),
/// originals under the bare key. Everything that touches the disk is `async` and runs on the
/// cache's own I/O queue, never on the cooperative thread pool. When the disk fails (full,
/// read-only, deleted), disk operations throw ``AlcedoError/cacheError(reason:)`` and the memory
/// cache keeps working.
///
/// With a ``sharedTier``, lookups go memory → disk → shared tier, and a hit is written back to
/// the tiers that missed; stores to disk go to the shared tier too. The shared tier never makes
/// a call fail: its failures are misses (see ``SharedCacheTier``). A shared-tier hit is reported
/// as ``CacheType/disk``: it is on disk by the time it is returned.
public final class ImageCache: Sendable {
    /// The cache used by default, named `default`, in ``DiskStorage/defaultDirectory``.
    public static let `default` = ImageCache(name: "default")

    /// The cache's name.
    public let name: String
    /// The memory storage of decoded images.
    public let memoryStorage: MemoryStorage.Backend<AlcedoImage>
    /// The disk storage of serialized images: an ``DiskStorage/EntryStore``, whose size limit
    /// holds after every store and whose files keep each entry's HTTP validators (Kingfisher's
    /// is a `DiskStorage.Backend<Data>`; the members Kingfisher's code uses are the same).
    public let diskStorage: DiskStorage.EntryStore
    /// The codecs disk hits are decoded with (by the default serializer).
    public let codecs: ImageCodecRegistry
    /// The serializer used when a call names none. Default: a ``DefaultCacheSerializer`` on ``codecs``.
    public let cacheSerializer: any CacheSerializer
    /// The tier shared with other processes or machines, consulted after the disk; `nil`
    /// (default) for none.
    public let sharedTier: SharedCacheTier?

    /// Where the cache reports disk failures that callers such as ``ImageManager`` do not see
    /// (a store that fails while the image is delivered anyway): the first as a warning, the
    /// later ones at debug level. Default: `Logger(label: "alcedo.cache")`.
    public let logger: Logger

    let io: CacheIOQueue
    private let diskFailures = DiskFailureLog()

    /// Creates the cache `name` with default memory settings and its disk folder
    /// `directory/name` (default ``DiskStorage/defaultDirectory``).
    /// - Parameters:
    ///   - name: the cache's name; characters other than letters, digits, `.`, `-` and `_`
    ///     become `_` in the folder name.
    ///   - cacheDirectoryURL: the folder that holds the cache's folder.
    ///   - codecs: the codecs used for disk hits. Default ``ImageCodecRegistry/shared``.
    ///   - sharedTier: a tier shared with other processes, after the disk; `nil` (default) for none.
    public convenience init(name: String, cacheDirectoryURL: URL? = nil, codecs: ImageCodecRegistry = .shared,
                            sharedTier: SharedCacheTier? = nil) {
        self.init(memoryStorage: MemoryStorage.Backend(config: MemoryStorage.Config()),
                  diskStorage: DiskStorage.EntryStore(config: DiskStorage.EntryStore.Config(name: name, directory: cacheDirectoryURL)),
                  codecs: codecs, sharedTier: sharedTier)
    }

    /// Creates a cache from storages you configured.
    /// - Parameters:
    ///   - memoryStorage: the storage of decoded images.
    ///   - diskStorage: the storage of serialized images; its name becomes the cache's name.
    ///   - codecs: the codecs disk hits are decoded with (default ``ImageCodecRegistry/shared``).
    ///   - cacheSerializer: the default serializer; `nil` (default) uses a
    ///     ``DefaultCacheSerializer`` on `codecs`.
    ///   - logger: where the disk tier's failures and recovery are reported, one line per change (default `Logger(label: "alcedo.cache")`).
    ///   - sharedTier: a tier shared with other processes, after the disk; `nil` (default) for none.
    public init(memoryStorage: MemoryStorage.Backend<AlcedoImage>, diskStorage: DiskStorage.EntryStore,
                codecs: ImageCodecRegistry = .shared, cacheSerializer: (any CacheSerializer)? = nil,
                logger: Logger = Logger(label: "alcedo.cache"), sharedTier: SharedCacheTier? = nil) {
        self.logger = logger
        self.sharedTier = sharedTier
        self.name = diskStorage.config.name
        self.memoryStorage = memoryStorage
        self.diskStorage = diskStorage
        self.codecs = codecs
        self.cacheSerializer = cacheSerializer ?? DefaultCacheSerializer(codecs: codecs)
        self.io = CacheIOQueue(label: "alcedo.cache.io.\(diskStorage.config.name)")
    }

    // MARK: Keys

    /// The key a variant is cached under: `key` for an empty identifier, else `key@identifier`.
    public static func cacheKey(forKey key: String, processorIdentifier identifier: String) -> String {
        identifier.isEmpty ? key : key + "@" + identifier
    }

    /// The path of the disk file for `key` (whether or not it exists).
    /// - Parameters:
    ///   - key: the source's cache key.
    ///   - identifier: the identifier of the processor that made the variant (default `""`: the original).
    ///   - forcedExtension: the extension the entry is stored with instead of the disk storage's
    ///     ``DiskStorage/EntryStore/Config/pathExtension`` (default `nil`: the configured one).
    public func cachePath(forKey key: String, processorIdentifier identifier: String = "",
                          forcedExtension: String? = nil) -> String {
        diskStorage.cacheFileURL(forKey: Self.cacheKey(forKey: key, processorIdentifier: identifier),
                                 forcedExtension: forcedExtension).path
    }

    /// The URL of the disk file for `key` when an unexpired entry is stored there, else `nil`
    /// (Kingfisher's `cacheFileURLIfOnDisk`). Answered as ``imageCachedType(forKey:processorIdentifier:forcedExtension:)``
    /// answers for the disk: from the disk index, with one `stat` on a hit. Not an access.
    /// - Parameters:
    ///   - key: the source's cache key.
    ///   - identifier: the identifier of the processor that made the variant (default `""`: the original).
    ///   - forcedExtension: the extension the entry was stored with (default `nil`: the configured one).
    public func cacheFileURLIfOnDisk(forKey key: String, processorIdentifier identifier: String = "",
                                     forcedExtension: String? = nil) -> URL? {
        let computedKey = Self.cacheKey(forKey: key, processorIdentifier: identifier)
        guard diskStorage.isIndexed(forKey: computedKey, forcedExtension: forcedExtension) else { return nil }
        return diskStorage.cacheFileURL(forKey: computedKey, forcedExtension: forcedExtension)
    }

    /// The SHA-256 hex of the cache key: the disk file's name without extension.
    public func hash(forKey key: String, processorIdentifier identifier: String = "") -> String {
        diskStorage.hash(forKey: Self.cacheKey(forKey: key, processorIdentifier: identifier))
    }

    // MARK: Store

    /// Stores `image` in memory and, with `toDisk`, its serialized bytes on disk.
    ///
    /// The memory store happens first and always; a disk failure is thrown after it.
    /// - Parameters:
    ///   - image: the image to store.
    ///   - original: the bytes `image` was decoded from. The default serializer stores them
    ///     as they are. They are passed to the serializer only for the original
    ///     (empty `processorIdentifier`): a processed variant is always serialized from its pixels.
    ///   - key: the source's cache key.
    ///   - processorIdentifier: the identifier of the processor that made `image` (default `""`: the original).
    ///   - forcedExtension: an extension for the disk file's name instead of the disk storage's
    ///     ``DiskStorage/EntryStore/Config/pathExtension`` (default `nil`: the configured one).
    ///     The disk entry is then found only by lookups given the same extension; the memory
    ///     entry is the same whatever the extension, as in Kingfisher.
    ///   - cacheSerializer: the serializer for this call; `nil` (default) uses ``cacheSerializer``.
    ///   - httpCacheInfo: the HTTP validators and freshness to keep with the disk entry.
    ///   - memoryExpiration: this entry's memory expiration; `nil` (default) uses the memory storage's.
    ///   - diskExpiration: this entry's disk expiration; `nil` (default) uses the disk storage's.
    ///   - toDisk: also store on disk, and in the ``sharedTier`` if any (default `true`). A
    ///     shared-tier failure is not thrown (see ``SharedCacheTier``); the shared write happens
    ///     even when the disk write fails.
    public func store(
        _ image: AlcedoImage, original: Data? = nil, forKey key: String, processorIdentifier: String = "",
        forcedExtension: String? = nil, cacheSerializer: (any CacheSerializer)? = nil, httpCacheInfo: HTTPCacheInfo? = nil,
        memoryExpiration: StorageExpiration? = nil, diskExpiration: StorageExpiration? = nil, toDisk: Bool = true
    ) async throws(AlcedoError) {
        let computedKey = Self.cacheKey(forKey: key, processorIdentifier: processorIdentifier)
        memoryStorage.store(value: image, forKey: computedKey, expiration: memoryExpiration)
        guard toDisk else { return }
        let serializer = cacheSerializer ?? self.cacheSerializer
        let original = processorIdentifier.isEmpty ? original : nil
        let disk = diskStorage
        let written = try await io.run { [self] () throws(AlcedoError) -> (data: Data, error: AlcedoError?) in
            let data = try serializer.serializedData(with: image, original: original)
            do throws(AlcedoError) {
                try disk.store(value: data, forKey: computedKey, expiration: diskExpiration, httpCacheInfo: httpCacheInfo,
                               forcedExtension: forcedExtension)
                diskFailures.recordSuccess(folder: disk.directoryURL.path, logger: logger)
                return (data, nil)
            } catch {
                diskFailures.record(error, operation: "store", folder: disk.directoryURL.path, logger: logger)
                return (data, error)
            }
        }
        await storeToSharedCache(written.data, computedKey: computedKey, expiration: diskExpiration, httpCacheInfo: httpCacheInfo)
        if let error = written.error { throw error }
    }

    /// Stores `image` in memory only.
    public func storeToMemory(_ image: AlcedoImage, forKey key: String, processorIdentifier: String = "",
                              expiration: StorageExpiration? = nil) {
        memoryStorage.store(value: image, forKey: Self.cacheKey(forKey: key, processorIdentifier: processorIdentifier),
                            expiration: expiration)
    }

    /// Stores already serialized bytes on disk only (for example a download kept as served).
    /// - Parameters:
    ///   - data: the bytes, stored as they are.
    ///   - key: the source's cache key.
    ///   - processorIdentifier: the identifier of the processor that made them (default `""`: the original).
    ///   - forcedExtension: an extension for the file's name instead of the configured one
    ///     (default `nil`); see ``store(_:original:forKey:processorIdentifier:forcedExtension:cacheSerializer:httpCacheInfo:memoryExpiration:diskExpiration:toDisk:)``.
    ///   - expiration: the entry's expiration; `nil` (default) uses the disk storage's.
    ///   - httpCacheInfo: the HTTP validators and freshness to keep with the entry (default `nil`).
    public func storeToDisk(_ data: Data, forKey key: String, processorIdentifier: String = "", forcedExtension: String? = nil,
                            expiration: StorageExpiration? = nil, httpCacheInfo: HTTPCacheInfo? = nil) async throws(AlcedoError) {
        let computedKey = Self.cacheKey(forKey: key, processorIdentifier: processorIdentifier)
        let disk = diskStorage
        try await io.run { [self] () throws(AlcedoError) in
            do throws(AlcedoError) {
                try disk.store(value: data, forKey: computedKey, expiration: expiration, httpCacheInfo: httpCacheInfo,
                               forcedExtension: forcedExtension)
                diskFailures.recordSuccess(folder: disk.directoryURL.path, logger: logger)
            } catch {
                diskFailures.record(error, operation: "store", folder: disk.directoryURL.path, logger: logger)
                throw error
            }
        }
    }

    // MARK: Retrieve

    /// Looks for the image in memory, then on disk, then in the ``sharedTier``; a disk hit is
    /// decoded and stored in memory, a shared-tier hit is stored on disk and in memory too.
    /// - Parameters:
    ///   - key: the source's cache key.
    ///   - processorIdentifier: the identifier of the processor that made the variant (default `""`: the original).
    ///   - forcedExtension: the extension the disk entry was stored with (default `nil`: the configured one).
    ///   - options: how a disk hit is decoded (default `.default`).
    ///   - cacheSerializer: the serializer for this call; `nil` (default) uses ``cacheSerializer``.
    ///   - extendingExpiration: what the access does to the entry's expiration (default `.cacheTime`).
    /// - Returns: the image and where it was found, or `.none`.
    /// - Throws: a disk read error, or the decoding error of a disk entry that does not decode
    ///   (the entry is left in place: the codec for it may simply be missing).
    public func retrieveImage(
        forKey key: String, processorIdentifier: String = "", forcedExtension: String? = nil, options: DecodingOptions = .default,
        cacheSerializer: (any CacheSerializer)? = nil, extendingExpiration: ExpirationExtending = .cacheTime
    ) async throws(AlcedoError) -> ImageCacheResult {
        if let image = retrieveImageInMemoryCache(forKey: key, processorIdentifier: processorIdentifier,
                                                  extendingExpiration: extendingExpiration) {
            return .memory(image)
        }
        let onDisk = try await retrieveImageInDiskCache(
            forKey: key, processorIdentifier: processorIdentifier, forcedExtension: forcedExtension, options: options,
            cacheSerializer: cacheSerializer, extendingExpiration: extendingExpiration)
        var found = onDisk
        if found == nil {
            found = await retrieveImageInSharedCache(forKey: key, processorIdentifier: processorIdentifier,
                                                     forcedExtension: forcedExtension, options: options,
                                                     cacheSerializer: cacheSerializer)
        }
        guard let image = found else { return .none }
        memoryStorage.store(value: image, forKey: Self.cacheKey(forKey: key, processorIdentifier: processorIdentifier))
        return .disk(image)
    }

    /// ``retrieveImage(forKey:processorIdentifier:forcedExtension:options:cacheSerializer:extendingExpiration:)`` for a
    /// request that `isCurrent` may call off: it is asked before the disk read, before decoding and
    /// before the image goes to memory, and its first `false` ends the retrieval with `.none`.
    func retrieveImage(
        forKey key: String, processorIdentifier: String, forcedExtension: String?, options: DecodingOptions,
        cacheSerializer: (any CacheSerializer)?, extendingExpiration: ExpirationExtending,
        isCurrent: @escaping @Sendable () -> Bool
    ) async throws(AlcedoError) -> ImageCacheResult {
        if let image = retrieveImageInMemoryCache(forKey: key, processorIdentifier: processorIdentifier,
                                                  extendingExpiration: extendingExpiration) {
            return .memory(image)
        }
        let computedKey = Self.cacheKey(forKey: key, processorIdentifier: processorIdentifier)
        let serializer = cacheSerializer ?? self.cacheSerializer
        let disk = diskStorage
        let lookup = try await io.run { () throws(AlcedoError) -> CheckedDiskLookup in
            guard isCurrent() else { return .stale }
            guard let data = try disk.value(forKey: computedKey, extendingExpiration: extendingExpiration,
                                            forcedExtension: forcedExtension) else { return .notFound }
            guard isCurrent() else { return .stale }
            let image = try serializer.deserializedImage(with: data, options: options)
            guard isCurrent() else { return .stale }
            return .found(image)
        }
        switch lookup {
        case .stale:
            return .none
        case .found(let image):
            memoryStorage.store(value: image, forKey: computedKey)
            return .disk(image)
        case .notFound:
            guard let image = await retrieveImageInSharedCache(forKey: key, processorIdentifier: processorIdentifier,
                                                               forcedExtension: forcedExtension, options: options,
                                                               cacheSerializer: cacheSerializer),
                  isCurrent() else { return .none }
            memoryStorage.store(value: image, forKey: computedKey)
            return .disk(image)
        }
    }

    /// What a disk lookup that may be called off found.
    private enum CheckedDiskLookup: Sendable {
        case found(AlcedoImage)
        case notFound
        case stale
    }

    /// The image in memory, or `nil`. Never touches the disk.
    public func retrieveImageInMemoryCache(forKey key: String, processorIdentifier: String = "",
                                           extendingExpiration: ExpirationExtending = .cacheTime) -> AlcedoImage? {
        memoryStorage.value(forKey: Self.cacheKey(forKey: key, processorIdentifier: processorIdentifier),
                            extendingExpiration: extendingExpiration)
    }

    /// The image on disk, decoded, or `nil`. Does not put it in memory. `forcedExtension` is the
    /// extension the entry was stored with (default `nil`: the configured one); the other
    /// parameters are those of ``retrieveImage(forKey:processorIdentifier:forcedExtension:options:cacheSerializer:extendingExpiration:)``.
    public func retrieveImageInDiskCache(
        forKey key: String, processorIdentifier: String = "", forcedExtension: String? = nil, options: DecodingOptions = .default,
        cacheSerializer: (any CacheSerializer)? = nil, extendingExpiration: ExpirationExtending = .cacheTime
    ) async throws(AlcedoError) -> AlcedoImage? {
        let computedKey = Self.cacheKey(forKey: key, processorIdentifier: processorIdentifier)
        let serializer = cacheSerializer ?? self.cacheSerializer
        let disk = diskStorage
        return try await io.run { () throws(AlcedoError) -> AlcedoImage? in
            guard let data = try disk.value(forKey: computedKey, extendingExpiration: extendingExpiration,
                                            forcedExtension: forcedExtension) else { return nil }
            return try serializer.deserializedImage(with: data, options: options)
        }
    }

    /// The stored bytes and their metadata (HTTP validators and freshness included), for
    /// revalidating a downloaded entry; `nil` when not on disk. Counts as an access, which
    /// changes the entry's expiration as `extendingExpiration` says (default `.cacheTime`).
    /// `forcedExtension` is the extension the entry was stored with (default `nil`: the configured one).
    public func retrieveDataInDiskCache(forKey key: String, processorIdentifier: String = "", forcedExtension: String? = nil,
                                        extendingExpiration: ExpirationExtending = .cacheTime)
        async throws(AlcedoError) -> (data: Data, metadata: DiskEntryMetadata)? {
        let computedKey = Self.cacheKey(forKey: key, processorIdentifier: processorIdentifier)
        let disk = diskStorage
        return try await io.run { () throws(AlcedoError) -> (data: Data, metadata: DiskEntryMetadata)? in
            try disk.entry(forKey: computedKey, extendingExpiration: extendingExpiration, forcedExtension: forcedExtension)
        }
    }

    /// The metadata of the disk entry, or `nil`. Does not count as an access. `forcedExtension`
    /// is the extension the entry was stored with (default `nil`: the configured one).
    public func diskMetadata(forKey key: String, processorIdentifier: String = "",
                             forcedExtension: String? = nil) async throws(AlcedoError) -> DiskEntryMetadata? {
        let computedKey = Self.cacheKey(forKey: key, processorIdentifier: processorIdentifier)
        let disk = diskStorage
        return try await io.run { () throws(AlcedoError) -> DiskEntryMetadata? in
            try disk.metadata(forKey: computedKey, forcedExtension: forcedExtension)
        }
    }

    /// Replaces the HTTP metadata of the disk entry without rewriting its bytes (after a
    /// `304 Not Modified`); see ``DiskStorage/EntryStore/updateMetadata(forKey:httpCacheInfo:expiration:forcedExtension:)``.
    /// `forcedExtension` is the extension the entry was stored with (default `nil`: the configured one).
    /// - Returns: `false` when the entry is not on disk.
    @discardableResult
    public func updateDiskMetadata(forKey key: String, processorIdentifier: String = "", forcedExtension: String? = nil,
                                   httpCacheInfo: HTTPCacheInfo?,
                                   expiration: StorageExpiration? = nil) async throws(AlcedoError) -> Bool {
        let computedKey = Self.cacheKey(forKey: key, processorIdentifier: processorIdentifier)
        let disk = diskStorage
        return try await io.run { () throws(AlcedoError) -> Bool in
            try disk.updateMetadata(forKey: computedKey, httpCacheInfo: httpCacheInfo, expiration: expiration,
                                    forcedExtension: forcedExtension)
        }
    }

    // MARK: State

    /// Where the image is cached, after loading the disk index if needed (the public,
    /// synchronous ``imageCachedType(forKey:processorIdentifier:forcedExtension:)`` never loads it). Not an access.
    func loadedImageCachedType(forKey key: String, processorIdentifier: String = "", forcedExtension: String? = nil) async -> CacheType {
        let computedKey = Self.cacheKey(forKey: key, processorIdentifier: processorIdentifier)
        if memoryStorage.isCached(forKey: computedKey) { return .memory }
        let disk = diskStorage
        let onDisk = (try? await io.run { disk.isCached(forKey: computedKey, forcedExtension: forcedExtension) }) ?? false
        return onDisk ? .disk : .none
    }

    /// Removes the image from memory and/or disk (default both), and from the ``sharedTier``
    /// with `fromSharedTier` (default `true`; a shared-tier failure is not thrown). On disk, the
    /// entry removed is the one stored with `forcedExtension` (default `nil`: the configured extension).
    public func removeImage(forKey key: String, processorIdentifier: String = "", forcedExtension: String? = nil,
                            fromMemory: Bool = true, fromDisk: Bool = true, fromSharedTier: Bool = true) async throws(AlcedoError) {
        let computedKey = Self.cacheKey(forKey: key, processorIdentifier: processorIdentifier)
        if fromMemory { memoryStorage.remove(forKey: computedKey) }
        if fromSharedTier, let sharedTier { await sharedTier.removeEntry(forKey: computedKey) }
        guard fromDisk else { return }
        let disk = diskStorage
        try await io.run { () throws(AlcedoError) in try disk.remove(forKey: computedKey, forcedExtension: forcedExtension) }
    }

    /// Removes every image from memory.
    public func clearMemoryCache() { memoryStorage.removeAll() }

    /// Removes every entry from disk. Does not throw, as in Kingfisher: a failure (a file
    /// that cannot be removed) is logged once per kind; ``removeAllDiskEntries()`` throws it.
    public func clearDiskCache() async {
        do throws(AlcedoError) {
            try await removeAllDiskEntries()
        } catch {
            diskFailures.record(error, operation: "clear", folder: diskStorage.directoryURL.path, logger: logger)
        }
    }

    /// Removes every entry from disk, and throws the first failure.
    public func removeAllDiskEntries() async throws(AlcedoError) {
        let disk = diskStorage
        try await io.run { () throws(AlcedoError) in try disk.removeAll() }
    }

    /// Removes every image from memory and disk; throws the disk's failure.
    public func clearCache() async throws(AlcedoError) {
        clearMemoryCache()
        try await removeAllDiskEntries()
    }

    /// Removes the expired images from memory.
    public func cleanExpiredMemoryCache() { memoryStorage.removeExpired() }

    /// Removes expired entries, then least recently used ones while the folder is over its
    /// size limit, and reports what went.
    @discardableResult
    public func cleanExpiredDiskCache() async throws(AlcedoError) -> DiskStorage.CleanUpReport {
        let disk = diskStorage
        return try await io.run { () throws(AlcedoError) -> DiskStorage.CleanUpReport in try disk.cleanUp() }
    }

    /// ``cleanExpiredMemoryCache()`` and ``cleanExpiredDiskCache()``.
    @discardableResult
    public func cleanExpiredCache() async throws(AlcedoError) -> DiskStorage.CleanUpReport {
        cleanExpiredMemoryCache()
        return try await cleanExpiredDiskCache()
    }

    /// The bytes the disk entries take, headers included (a `UInt`, as in Kingfisher),
    /// counted by a scan of the folder, as Kingfisher counts them: entries written by other
    /// processes are counted, and a folder deleted underneath counts 0.
    public var diskStorageSize: UInt {
        get async throws(AlcedoError) {
            let disk = diskStorage
            return try await io.run { () throws(AlcedoError) -> UInt in UInt(max(0, try disk.statistics().totalSize)) }
        }
    }
}
