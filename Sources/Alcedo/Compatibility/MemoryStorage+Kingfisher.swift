#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

// The inner shapes of Kingfisher's `MemoryStorage.Backend` that code and tests written for
// Kingfisher read: its `NSCache` (`storage`), the set of `keys`, `totalCacheCost()` and
// `StorageObject`. Alcedo's backend is one LRU table behind a lock, so `storage` is a view of
// that table: `object(forKey:)` sees an entry whether or not it has expired (as `NSCache`
// keeps expired objects until the next clean-up), and `removeObject(forKey:)` drops it as
// `NSCache` evicts on its own.

extension MemoryStorage {
    /// A stored value with its expiration (Kingfisher's `StorageObject`).
    public final class StorageObject<T: Sendable>: Sendable {
        private let expiresAt: Mutex<Date>

        /// The stored value.
        public let value: T
        /// The expiration the value was stored with.
        public let expiration: StorageExpiration
        /// The key the value is stored under (empty for an object made on its own).
        public let key: String

        /// Wraps `value` stored now with `expiration`, under `key` (default empty).
        public init(_ value: T, expiration: StorageExpiration, key: String = "") {
            self.value = value
            self.expiration = expiration
            self.key = key
            self.expiresAt = Mutex(expiration.estimatedExpirationSinceNow)
        }

        init(_ value: T, expiration: StorageExpiration, key: String, expiresAt: Date) {
            self.value = value
            self.expiration = expiration
            self.key = key
            self.expiresAt = Mutex(expiresAt)
        }

        /// When the value expires.
        public var estimatedExpiration: Date { expiresAt.withLock { $0 } }

        /// `true` once ``estimatedExpiration`` is past.
        public var isExpired: Bool { estimatedExpiration.isPast }

        /// Moves the expiration as an access does (default `.cacheTime`: the stored duration
        /// again from now).
        public func extendExpiration(_ extendingExpiration: ExpirationExtending = .cacheTime) {
            expiresAt.withLock { expiresAt in
                switch extendingExpiration {
                case .none: return
                case .cacheTime: expiresAt = expiration.estimatedExpirationSinceNow
                case .expirationTime(let other): expiresAt = other.estimatedExpirationSinceNow
                }
            }
        }
    }

    /// Kingfisher's view of a backend's underlying cache (its `NSCache`): the limits and the
    /// entries, expired or not.
    public struct CacheView<T: CacheCostCalculable & Sendable>: Sendable {
        let backend: Backend<T>

        /// ``Config/totalCostLimit``.
        public var totalCostLimit: Int { backend.config.totalCostLimit }
        /// ``Config/countLimit``.
        public var countLimit: Int { backend.config.countLimit }

        /// The entry under `key`, expired or not, without counting as an access; `nil` when none.
        public func object(forKey key: String) -> StorageObject<T>? {
            backend.state.withLock { state in
                guard let slot = state.table.slot(forKey: key) else { return nil }
                let node = state.table.nodes[slot]
                guard let value = node.value else { return nil }
                return StorageObject(value, expiration: node.expiration, key: key, expiresAt: node.expiresAt)
            }
        }

        /// Drops the entry under `key`, as `NSCache` evicts an object on its own.
        public func removeObject(forKey key: String) {
            backend.remove(forKey: key)
        }
    }
}

extension MemoryStorage.Backend {
    /// Kingfisher's `storage`: the underlying cache, expired entries included.
    public var storage: MemoryStorage.CacheView<T> { MemoryStorage.CacheView(backend: self) }

    /// The keys of every entry, expired or not (Kingfisher's `keys`).
    public var keys: Set<String> { Set(keysByRecency) }

    /// The cost of every entry, expired or not (Kingfisher's `totalCacheCost()`): ``totalCost``.
    public func totalCacheCost() -> Int { totalCost }
}
