#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// MARK: - Kingfisher's initializer, store with parsed options, notifications

extension ImageCache {
    /// Kingfisher's closure that names a cache's folder: given the folder that holds caches and
    /// the cache's folder name (`com.onevcat.Kingfisher.ImageCache.<name>`), returns the
    /// cache's folder.
    public typealias DiskCachePathClosure = @Sendable (_ directory: URL, _ cacheName: String) -> URL

    /// Kingfisher's initializer: the cache `name` in the folder Kingfisher would use, created
    /// now (Kingfisher's `init(name:cacheDirectoryURL:diskCachePathClosure:)`).
    ///
    /// The folder is `diskCachePathClosure(directory, "com.onevcat.Kingfisher.ImageCache.<name>")`,
    /// where `directory` is `cacheDirectoryURL` or, when `nil`, the user's caches folder
    /// (`FileManager`'s `.cachesDirectory`: `$XDG_CACHE_HOME` or `~/.cache` on Linux); the
    /// default closure (`nil`) appends the name to `directory`. Memory and disk settings are
    /// the defaults of ``init(name:cacheDirectoryURL:codecs:sharedTier:)``, which is the form
    /// chosen when no `diskCachePathClosure` is written (it names the folder `name` and creates
    /// it on first write).
    /// - Throws: `.cacheError(.cannotCreateDirectory)` when the folder cannot be created,
    ///   `.cacheError(.readOnly)` when it exists but cannot be written.
    @_disfavoredOverload
    public convenience init(name: String, cacheDirectoryURL: URL?,
                            diskCachePathClosure: DiskCachePathClosure? = nil) throws(AlcedoError) {
        let directory = cacheDirectoryURL
            ?? FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
            ?? DiskStorage.defaultDirectory.deletingLastPathComponent()
        let cacheName = "com.onevcat.Kingfisher.ImageCache.\(name)"
        let folderURL = diskCachePathClosure?(directory, cacheName)
            ?? directory.appendingPathComponent(cacheName, isDirectory: true)
        let diskStorage = DiskStorage.EntryStore(config: DiskStorage.EntryStore.Config(folderURL: folderURL, name: name))
        try diskStorage.prepareFolder()
        self.init(memoryStorage: MemoryStorage.Backend(config: MemoryStorage.Config()), diskStorage: diskStorage)
    }

    /// Looks for the image in memory, then on disk, as a request with `options` would
    /// (Kingfisher's `async` `retrieveImage(forKey:options:)`): the variant of `options`'
    /// processor, decoded with its serializer and limits. See the callback form,
    /// ``retrieveImage(forKey:options:callbackQueue:completionHandler:)``.
    public func retrieveImage(forKey key: String, options: AlcedoOptionsInfo?) async throws(AlcedoError) -> ImageCacheResult {
        let parsed = AlcedoParsedOptionsInfo(options)
        return try await retrieveImage(forKey: key, processorIdentifier: parsed.processor.identifier,
                                       forcedExtension: parsed.forcedExtension,
                                       options: parsed.decodingOptions, cacheSerializer: parsed.cacheSerializer,
                                       extendingExpiration: parsed.memoryCacheAccessExtendingExpiration)
    }

    /// The cost of the images in memory, in bytes (Kingfisher's `memoryStorageCacheCost`).
    public var memoryStorageCacheCost: Int { memoryStorage.totalCost }

    /// Stores `image` as a request with `options` would (Kingfisher's
    /// `store(_:original:forKey:options:toDisk:completionHandler:)`): the variant of
    /// `options.processor`, serialized by `options.cacheSerializer`, with the options' memory and
    /// disk expirations; `completionHandler` (default `nil`) runs on `options.callbackQueue`.
    public func store(_ image: AlcedoImage, original: Data? = nil, forKey key: String,
                      options: AlcedoParsedOptionsInfo, toDisk: Bool = true,
                      completionHandler: (@Sendable (CacheStoreResult) -> Void)? = nil) {
        let identifier = options.processor.identifier
        let computedKey = Self.cacheKey(forKey: key, processorIdentifier: identifier)
        memoryStorage.store(value: image, forKey: computedKey, expiration: options.memoryCacheExpiration)
        let callbackQueue = options.callbackQueue
        guard toDisk else {
            if let completionHandler {
                callbackQueue.execute { completionHandler(CacheStoreResult(memoryCacheResult: .success(()), diskCacheResult: .success(()))) }
            }
            return
        }
        // The memory store is done: only the disk store runs later, so that an image removed
        // from memory before the disk write ends is not put back.
        let serializer = options.cacheSerializer ?? cacheSerializer
        let bytes = identifier.isEmpty ? original : nil
        let diskExpiration = options.diskCacheExpiration
        let forcedExtension = options.forcedExtension
        Task {
            let disk: Result<Void, AlcedoError>
            do throws(AlcedoError) {
                let data = try serializer.serializedData(with: image, original: bytes)
                try await storeToDisk(data, forKey: key, processorIdentifier: identifier, forcedExtension: forcedExtension,
                                      expiration: diskExpiration)
                disk = .success(())
            } catch {
                disk = .failure(error)
            }
            if let completionHandler {
                callbackQueue.execute { completionHandler(CacheStoreResult(memoryCacheResult: .success(()), diskCacheResult: disk)) }
            }
        }
    }

    /// The `async` form of ``store(_:original:forKey:options:toDisk:completionHandler:)``;
    /// throws the disk failure.
    public func store(_ image: AlcedoImage, original: Data? = nil, forKey key: String,
                      options: AlcedoParsedOptionsInfo, toDisk: Bool = true) async throws(AlcedoError) {
        try await store(image, original: original, forKey: key, processorIdentifier: options.processor.identifier,
                        forcedExtension: options.forcedExtension, cacheSerializer: options.cacheSerializer, memoryExpiration: options.memoryCacheExpiration,
                        diskExpiration: options.diskCacheExpiration, toDisk: toDisk)
    }
}

extension String {
    /// The key of this key's variant made by the processor `identifier` (Kingfisher's
    /// `computedKey(with:)`): the key itself for an empty identifier, else `key@identifier`.
    func computedKey(with identifier: String) -> String {
        ImageCache.cacheKey(forKey: self, processorIdentifier: identifier)
    }
}
