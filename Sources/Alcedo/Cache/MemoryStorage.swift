import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The memory cache: decoded values kept in a least-recently-used table with a cost limit, a
/// count limit and an expiration per entry. ``Backend`` is the storage, ``Config`` its settings.
///
/// Unlike `NSCache` on Linux, which evicts the newest entry, the backend always evicts the
/// least recently used one, and every limit holds when ``Backend/store(value:forKey:expiration:)``
/// returns.
public enum MemoryStorage {
    /// The default cost limit: a quarter of the memory this process may use (the physical
    /// memory, or the container's cgroup memory limit on Linux when it is lower).
    public static var defaultTotalCostLimit: Int {
        Int(clamping: SystemMemory.available / 4)
    }

    /// The settings of a ``Backend``.
    public struct Config: Sendable {
        /// The most the stored values may cost together, in bytes (for images, their decoded
        /// pixels). Default ``MemoryStorage/defaultTotalCostLimit``. A value that costs more than
        /// this by itself is not stored.
        public var totalCostLimit: Int
        /// The most entries the storage holds. Default `Int.max` (no count limit).
        public var countLimit: Int
        /// The expiration of an entry stored without its own. Default `.seconds(300)`.
        public var expiration: StorageExpiration
        /// How often expired entries are removed, in seconds. Default 120. The clean-up is
        /// scheduled only while the storage holds entries, so an idle, empty storage never wakes up.
        public var cleanInterval: TimeInterval
        /// The clock used for expiration. Default `Date()`; tests inject their own.
        public var now: @Sendable () -> Date

        /// Creates a configuration; every parameter has the default stated on its property.
        public init(
            totalCostLimit: Int = MemoryStorage.defaultTotalCostLimit,
            countLimit: Int = .max,
            expiration: StorageExpiration = .seconds(300),
            cleanInterval: TimeInterval = 120,
            now: @escaping @Sendable () -> Date = { Date() }
        ) {
            self.totalCostLimit = totalCostLimit
            self.countLimit = countLimit
            self.expiration = expiration
            self.cleanInterval = cleanInterval
            self.now = now
        }
    }

    /// A thread-safe, cost-limited LRU store of values in memory.
    ///
    /// Get, set and eviction are O(1). All state sits behind one mutex held only for the table
    /// update: values that leave the table (replaced or evicted) are released after the lock is
    /// dropped, so freeing a large image never stalls other callers.
    public final class Backend<T: CacheCostCalculable & Sendable>: Sendable {
        struct State {
            var table = LRUTable<T>()
            var config: Config
            var cleanScheduled = false
        }

        let state: Mutex<State>

        /// Creates an empty storage with `config`.
        public init(config: Config) {
            state = Mutex(State(config: config))
        }

        /// The settings. Setting a lower limit evicts least recently used entries at once.
        public var config: Config {
            get { state.withLock { $0.config } }
            set {
                let evicted = state.withLock { state -> Evicted in
                    state.config = newValue
                    return Self.evictOverLimits(&state)
                }
                _ = evicted
            }
        }

        /// The number of entries (expired ones not yet removed included).
        public var count: Int { state.withLock { $0.table.count } }

        /// The cost of all entries, in bytes.
        public var totalCost: Int { state.withLock { $0.table.totalCost } }

        /// Stores `value` under `key` as the most recently used entry, replacing any value
        /// there, then evicts least recently used entries until both limits hold.
        ///
        /// Nothing is stored (and a value already under `key` is removed) when `value` costs
        /// more than ``Config/totalCostLimit`` by itself, when the count limit is below one, or
        /// when the expiration is already past.
        /// - Parameters:
        ///   - value: the value to store; its ``CacheCostCalculable/cacheCost`` counts against the cost limit.
        ///   - key: the entry's key.
        ///   - expiration: this entry's expiration; `nil` (default) uses ``Config/expiration``.
        @_specialize(where T == AlcedoImage)
        public func store(value: T, forKey key: String, expiration: StorageExpiration? = nil) {
            let cost = max(0, value.cacheCost)
            let released: (T?, Evicted) = state.withLock { state in
                let expiration = expiration ?? state.config.expiration
                let now = state.config.now()
                let expiresAt = expiration.estimatedExpiration(since: now)
                let existing = state.table.slot(forKey: key)
                guard cost <= state.config.totalCostLimit, state.config.countLimit > 0, expiresAt > now else {
                    return (existing.flatMap { state.table.remove($0) }, Evicted())
                }
                let old: T?
                if let existing {
                    old = state.table.replace(existing, value: value, cost: cost, expiration: expiration, expiresAt: expiresAt)
                } else {
                    old = nil
                    state.table.insert(key: key, value: value, cost: cost, expiration: expiration, expiresAt: expiresAt)
                }
                let evicted = Self.evictOverLimits(&state)
                if !state.cleanScheduled {
                    state.cleanScheduled = true
                    scheduleClean(after: state.config.cleanInterval)
                }
                return (old, evicted)
            }
            _ = released
        }

        /// The value under `key`, or `nil` when there is none or it has expired (an expired
        /// entry is removed). A hit becomes the most recently used entry.
        /// - Parameters:
        ///   - key: the entry's key.
        ///   - extendingExpiration: what the access does to the expiration (default `.cacheTime`).
        @_specialize(where T == AlcedoImage)
        public func value(forKey key: String, extendingExpiration: ExpirationExtending = .cacheTime) -> T? {
            let result: (hit: T?, expired: T?) = state.withLock { state in
                guard let slot = state.table.slot(forKey: key) else { return (nil, nil) }
                let now = state.config.now()
                let node = state.table.nodes[slot]
                if node.expiresAt <= now {
                    return (nil, state.table.remove(slot))
                }
                switch extendingExpiration {
                case .none:
                    break
                case .cacheTime:
                    if let duration = node.expiration.extensibleDuration {
                        state.table.setExpiresAt(now.addingTimeInterval(duration), of: slot)
                    }
                case .expirationTime(let expiration):
                    state.table.setExpiresAt(expiration.estimatedExpiration(since: now), of: slot)
                }
                state.table.touch(slot)
                return (node.value, nil)
            }
            return result.hit
        }

        /// `true` when an unexpired value is stored under `key`. Does not count as an access.
        @_specialize(where T == AlcedoImage)
        public func isCached(forKey key: String) -> Bool {
            state.withLock { state in
                guard let slot = state.table.slot(forKey: key) else { return false }
                return state.table.nodes[slot].expiresAt > state.config.now()
            }
        }

        /// Removes the value under `key`, if any.
        @_specialize(where T == AlcedoImage)
        public func remove(forKey key: String) {
            let removed: T? = state.withLock { state in
                state.table.slot(forKey: key).flatMap { state.table.remove($0) }
            }
            _ = removed
        }

        /// Removes every value.
        public func removeAll() {
            let removed = state.withLock { $0.table.removeAll() }
            _ = removed
        }

        /// Removes every expired value. The table is walked in chunks, with the lock dropped
        /// between them, so other callers wait at most for one chunk.
        public func removeExpired() {
            var start = 0
            while true {
                let (removed, next): ([T], Int?) = state.withLock { state in
                    let now = state.config.now()
                    let end = min(start + 1024, state.table.nodes.count)
                    var removed: [T] = []
                    var slot = start
                    while slot < end {
                        let node = state.table.nodes[slot]
                        if node.value != nil, node.expiresAt <= now, let value = state.table.remove(slot) {
                            removed.append(value)
                        }
                        slot += 1
                    }
                    return (removed, end < state.table.nodes.count ? end : nil)
                }
                _ = removed
                guard let next else { return }
                start = next
            }
        }

        /// The keys from the most to the least recently used (for tests and diagnostics).
        public var keysByRecency: [String] { state.withLock { $0.table.keysNewestFirst } }

        /// Values evicted under the lock, to be released after it: the first one inline, so
        /// that the usual single eviction allocates nothing.
        private struct Evicted {
            var first: T?
            var rest: [T] = []
        }

        /// Evicts the least recently used entries until the cost and count limits hold.
        private static func evictOverLimits(_ state: inout State) -> Evicted {
            var evicted = Evicted()
            let costLimit = max(0, state.config.totalCostLimit)
            let countLimit = max(0, state.config.countLimit)
            while state.table.totalCost > costLimit || state.table.count > countLimit,
                  let oldest = state.table.oldestSlot {
                guard let value = state.table.remove(oldest) else { continue }
                if evicted.first == nil { evicted.first = value } else { evicted.rest.append(value) }
            }
            return evicted
        }

        private func scheduleClean(after interval: TimeInterval) {
            let delay = interval.isFinite && interval > 0 ? interval : 120
            DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + delay) { [weak self] in
                self?.periodicClean()
            }
        }

        /// Removes expired entries, then schedules the next run only if entries are left.
        private func periodicClean() {
            removeExpired()
            state.withLock { state in
                if state.table.count > 0 {
                    scheduleClean(after: state.config.cleanInterval)
                } else {
                    state.cleanScheduled = false
                }
            }
        }
    }
}
