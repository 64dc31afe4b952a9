#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A cache tier shared by several processes or machines (a key-value store such as Redis),
/// consulted by ``ImageCache`` after its memory and disk storages and before the source.
///
/// A conforming type stores bytes with their ``SharedCacheEntry/Metadata`` under a cache key
/// (the `key@processorIdentifier` of ``ImageCache/cacheKey(forKey:processorIdentifier:)``). It
/// reports failures by throwing ``AlcedoError/cacheError(reason:)`` with a
/// ``CacheErrorReason/sharedStorageError(reason:)``; ``ImageCache`` turns every such failure into
/// a miss, counts it and logs it once per change of state (see ``SharedCacheTier``): callers of
/// the cache never see it.
///
/// The lock methods let several machines that miss the same key at once do the work once; the
/// default implementations take no lock (every caller works, as without a shared tier).
public protocol SharedCacheStorage: Sendable {
    /// The entry stored under `key`, or `nil`. An entry that is unreadable (corrupt, wrong key)
    /// is a miss, and the storage removes it.
    func entry(forKey key: String) async throws(AlcedoError) -> SharedCacheEntry?

    /// Stores `entry` under `key` until `entry.metadata.expirationDate`. A storage may decline
    /// an entry (too large, already expired) without an error.
    /// - Returns: `true` when the entry was stored, `false` when declined.
    @discardableResult
    func store(_ entry: SharedCacheEntry, forKey key: String) async throws(AlcedoError) -> Bool

    /// Removes the entry under `key`; removing a missing entry is not an error.
    func removeEntry(forKey key: String) async throws(AlcedoError)

    /// Takes the work lock of `key` for `duration` unless another process holds it.
    /// - Returns: `true` when this caller now holds the lock (it should do the work and store
    ///   the result), `false` when someone else holds it (the result should appear under `key`).
    func acquireLock(forKey key: String, duration: Duration) async throws(AlcedoError) -> Bool

    /// Releases the work lock of `key` taken by ``acquireLock(forKey:duration:)``.
    func releaseLock(forKey key: String) async throws(AlcedoError)
}

extension SharedCacheStorage {
    /// Default: always acquired, so there is no coalescing across processes.
    public func acquireLock(forKey key: String, duration: Duration) async throws(AlcedoError) -> Bool { true }
    /// Default: nothing to release.
    public func releaseLock(forKey key: String) async throws(AlcedoError) {}
}

/// The bytes of one shared-tier entry and what Alcedo keeps with them.
public struct SharedCacheEntry: Sendable, Hashable {
    /// What a shared-tier entry carries besides its bytes: the same facts the disk cache keeps
    /// in its header (see ``DiskEntryMetadata``), plus the format of the bytes.
    public struct Metadata: Sendable, Hashable, Codable {
        /// The cache key the entry was stored under (checked on read: another key is a miss).
        public var key: String
        /// When the entry was first stored in any tier.
        public var creationDate: Date
        /// When the entry expires; the storage drops it then (`Date.distantFuture`: never).
        public var expirationDate: Date
        /// The HTTP validators and freshness of a downloaded entry, or `nil`.
        public var httpCacheInfo: HTTPCacheInfo?
        /// The format of the bytes, sniffed when stored (`.unknown` when not an image format).
        public var format: ImageFormat

        /// Creates metadata from its parts.
        /// - Parameters:
        ///   - key: the cache key.
        ///   - creationDate: default now.
        ///   - expirationDate: default `Date.distantFuture` (never).
        ///   - httpCacheInfo: default `nil`.
        ///   - format: default `.unknown`.
        public init(key: String, creationDate: Date = Date(), expirationDate: Date = .distantFuture,
                    httpCacheInfo: HTTPCacheInfo? = nil, format: ImageFormat = .unknown) {
            self.key = key
            self.creationDate = creationDate
            self.expirationDate = expirationDate
            self.httpCacheInfo = httpCacheInfo
            self.format = format
        }

        /// `true` when the entry has expired at `date`.
        public func isExpired(at date: Date) -> Bool { expirationDate <= date }
    }

    /// The stored bytes: what the disk cache would store for the key.
    public var data: Data
    /// The entry's metadata.
    public var metadata: Metadata

    /// Creates an entry.
    public init(data: Data, metadata: Metadata) {
        self.data = data
        self.metadata = metadata
    }
}

extension ImageFormat: Codable {}
