#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Synchronization

/// A ``SharedCacheStorage`` as ``ImageCache`` uses it: every failure becomes a miss, is counted
/// in ``statistics`` and logged once per change of state (the first failure while healthy; the
/// first success once no failure came for ``Config/recoveryQuietPeriod``), and never reaches a
/// caller of the cache. The quiet period keeps a partly failing storage (one node of three
/// down) from logging at every request.
///
/// It also coalesces work across processes: the first process to miss a key takes the
/// storage's work lock; the others poll the storage for the entry with a growing interval,
/// for at most ``Config/lockWaitLimit``, then do the work themselves.
public final class SharedCacheTier: Sendable {
    /// The settings of a shared tier.
    public struct Config: Sendable {
        /// Take the work lock on a miss and let other processes wait for the result. Default `true`.
        public var coalescesWork: Bool
        /// How long a work lock lives when its holder never releases it (the holder crashed).
        /// Default 10 s.
        public var lockDuration: Duration
        /// How long a process that found the lock taken waits for the entry before it does the
        /// work itself. Default 2 s.
        public var lockWaitLimit: Duration
        /// The first interval between two polls while waiting; it doubles up to
        /// ``maximumPollInterval``. Default 5 ms.
        public var initialPollInterval: Duration
        /// The longest interval between two polls. Default 100 ms.
        public var maximumPollInterval: Duration
        /// How long the tier must go without a failure before a success counts as recovered
        /// (and is logged). Default 5 s.
        public var recoveryQuietPeriod: Duration
        /// Where state changes of the tier are logged. Default label `alcedo.cache.shared`.
        public var logger: Logger

        /// Creates settings; every parameter has the default stated on its property.
        public init(coalescesWork: Bool = true, lockDuration: Duration = .seconds(10), lockWaitLimit: Duration = .seconds(2),
                    initialPollInterval: Duration = .milliseconds(5), maximumPollInterval: Duration = .milliseconds(100),
                    recoveryQuietPeriod: Duration = .seconds(5), logger: Logger = Logger(label: "alcedo.cache.shared")) {
            self.recoveryQuietPeriod = recoveryQuietPeriod
            self.coalescesWork = coalescesWork
            self.lockDuration = lockDuration
            self.lockWaitLimit = lockWaitLimit
            self.initialPollInterval = initialPollInterval
            self.maximumPollInterval = maximumPollInterval
            self.logger = logger
        }
    }

    /// What the tier counted since it was created.
    public struct Statistics: Sendable, Hashable {
        /// Lookups that found an entry.
        public var hits = 0
        /// Lookups that found nothing (failed lookups are counted in ``errors`` too).
        public var misses = 0
        /// Operations that failed (lookups, stores, removals, locks): each was treated as a miss
        /// or skipped.
        public var errors = 0
        /// Bytes of entry data read by hits.
        public var bytesRead = 0
        /// Bytes of entry data stored.
        public var bytesWritten = 0
        /// Entries stored.
        public var stores = 0
        /// Entries the storage declined (too large, already expired).
        public var declinedStores = 0
        /// Work locks this process took (it did the work).
        public var locksAcquired = 0
        /// Misses that waited for another process's work.
        public var lockWaits = 0
        /// Waits that ended with the entry found.
        public var lockWaitHits = 0
        /// Waits that ran out (or failed) and did the work here.
        public var lockWaitTimeouts = 0

        /// All zero.
        public init() {}

        /// Counts one lookup's outcome (a poll while waiting counts only when it finds the entry).
        mutating func count(_ found: SharedCacheEntry?, waited: Bool) {
            if let found {
                hits += 1
                bytesRead += found.data.count
                if waited { lockWaitHits += 1 }
            } else if !waited {
                misses += 1
            }
        }
    }

    /// What a caller that missed every tier should do next.
    public enum Coalescing: Sendable {
        /// Do the work. `holdsLock`: this process took the work lock and should release it with
        /// ``releaseLock(forKey:)`` once the result is stored (or the work failed).
        case proceed(holdsLock: Bool)
        /// Another process did the work meanwhile: here is its entry.
        case found(SharedCacheEntry)
    }

    private struct State {
        var statistics = Statistics()
        var failing = false
        var failuresWhileFailing = 0
        var lastFailure: ContinuousClock.Instant?
    }

    /// The storage behind the tier.
    public let storage: any SharedCacheStorage
    /// The tier's settings.
    public let config: Config
    private let state = Mutex(State())

    /// Creates a tier on `storage`.
    public init(storage: any SharedCacheStorage, config: Config = Config()) {
        self.storage = storage
        self.config = config
    }

    /// The counters so far.
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// `true` from a failure until a success after ``Config/recoveryQuietPeriod`` without failures.
    public var isFailing: Bool { state.withLock { $0.failing } }

    // MARK: Operations (never throw)

    /// The entry under `key`, or `nil` on a miss or a failure.
    public func entry(forKey key: String) async -> SharedCacheEntry? {
        do throws(AlcedoError) {
            let found = try await storage.entry(forKey: key)
            record(success: true) { stats in stats.count(found, waited: false) }
            return found
        } catch {
            record(error, operation: "lookup") { $0.misses += 1 }
            return nil
        }
    }

    /// Stores `entry` under `key`; a failure is counted and logged, not thrown.
    /// - Returns: `true` when stored.
    @discardableResult
    public func store(_ entry: SharedCacheEntry, forKey key: String) async -> Bool {
        do throws(AlcedoError) {
            let stored = try await storage.store(entry, forKey: key)
            record(success: true) { stats in
                if stored {
                    stats.stores += 1
                    stats.bytesWritten += entry.data.count
                } else {
                    stats.declinedStores += 1
                }
            }
            return stored
        } catch {
            record(error, operation: "store") { _ in }
            return false
        }
    }

    /// Removes the entry under `key`; a failure is counted and logged, not thrown.
    public func removeEntry(forKey key: String) async {
        do throws(AlcedoError) {
            try await storage.removeEntry(forKey: key)
            record(success: true) { _ in }
        } catch {
            record(error, operation: "removal") { _ in }
        }
    }

    /// After a miss in every tier: takes the work lock of `key`, or waits for the process that
    /// holds it to store the entry (polling, at most ``Config/lockWaitLimit``).
    public func coalesce(forKey key: String) async -> Coalescing {
        guard config.coalescesWork else { return .proceed(holdsLock: false) }
        let acquired: Bool
        do throws(AlcedoError) {
            acquired = try await storage.acquireLock(forKey: key, duration: config.lockDuration)
            record(success: true) { stats in if acquired { stats.locksAcquired += 1 } }
        } catch {
            record(error, operation: "lock") { _ in }
            return .proceed(holdsLock: false)
        }
        if acquired {
            // Another process may have stored the entry and let its lock go between this
            // process's miss and its lock: look once more before doing the work again.
            do throws(AlcedoError) {
                if let found = try await storage.entry(forKey: key) {
                    record(success: true) { stats in stats.count(found, waited: false) }
                    await releaseLock(forKey: key)
                    return .found(found)
                }
            } catch {
                record(error, operation: "lookup") { _ in }
            }
            return .proceed(holdsLock: true)
        }

        state.withLock { $0.statistics.lockWaits += 1 }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: config.lockWaitLimit)
        var interval = config.initialPollInterval
        while clock.now < deadline {
            let sleep = min(interval, deadline - clock.now)
            do { try await Task.sleep(for: sleep) } catch { break }  // cancelled: stop waiting
            interval = min(interval * 2, config.maximumPollInterval)
            do throws(AlcedoError) {
                let found = try await storage.entry(forKey: key)
                record(success: true) { stats in stats.count(found, waited: true) }
                if let found { return .found(found) }
            } catch {
                record(error, operation: "lookup") { _ in }
                // A skipped node will not answer before the bound: work now. Other failures
                // may pass (a slow reply): keep polling.
                if case .cacheError(let reason) = error, case .nodeUnavailable? = reason.sharedStorageReason {
                    state.withLock { $0.statistics.lockWaitTimeouts += 1 }
                    return .proceed(holdsLock: false)
                }
            }
        }
        state.withLock { $0.statistics.lockWaitTimeouts += 1 }
        return .proceed(holdsLock: false)
    }

    /// Releases the work lock taken by ``coalesce(forKey:)``; a failure is counted and logged.
    public func releaseLock(forKey key: String) async {
        do throws(AlcedoError) {
            try await storage.releaseLock(forKey: key)
            record(success: true) { _ in }
        } catch {
            record(error, operation: "unlock") { _ in }
        }
    }

    // MARK: Accounting

    private func record(success: Bool, _ update: (inout Statistics) -> Void) {
        let now = ContinuousClock.now
        let quiet = config.recoveryQuietPeriod
        let recovered: Int? = state.withLock { state in
            update(&state.statistics)
            guard state.failing, state.lastFailure.map({ now - $0 >= quiet }) ?? true else { return nil }
            state.failing = false
            defer { state.failuresWhileFailing = 0 }
            return state.failuresWhileFailing
        }
        if let recovered {
            config.logger.notice("shared cache tier recovered after \(recovered) failed operations")
        }
    }

    private func record(_ error: AlcedoError, operation: String, _ update: (inout Statistics) -> Void) {
        let first = state.withLock { state in
            update(&state.statistics)
            state.statistics.errors += 1
            state.failuresWhileFailing += 1
            state.lastFailure = .now
            defer { state.failing = true }
            return !state.failing
        }
        if first {
            config.logger.error("shared cache tier failing, its lookups count as misses: \(operation) failed: \(error)")
        }
    }
}
