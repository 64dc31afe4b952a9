import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The server's shared tier with permanent stores behind it: a ``SharedCacheStorage`` that
/// looks in the `front` storage (Redis, when configured) first, then in the result store (for
/// a variant's key) or the source store (for an original's key); a store hit is written back to
/// the front. A store goes to the front at once and to the store through its tier's bounded
/// queue (``ObjectStoreTier/enqueue(_:forKey:)``), so no request waits for the store's write.
/// Work locks are the front's (without one, every process does its own work).
///
/// A failing front is a miss there and the store is still asked; its error is thrown (and so
/// counted by ``SharedCacheTier``) only when the store has no entry either. A key the store
/// missed a moment ago (``missMemory``) is not asked again for a while: the look-again after a
/// work lock and the polls of a process waiting for another's result go to the front only.
public final class TieredSharedStorage: SharedCacheStorage {
    /// Redis (or another shared storage) in front of the stores; `nil`: none.
    public let front: (any SharedCacheStorage)?
    /// The store of processed variants; `nil`: none.
    public let results: ObjectStoreTier?
    /// The store of originals; `nil`: none.
    public let sources: ObjectStoreTier?
    /// How long a store miss is remembered (default 10 s).
    public let missMemory: Duration
    private let misses = Mutex<[String: ContinuousClock.Instant]>([:])
    private static let missLimit = 10_000

    /// Creates the storage.
    /// - Parameters:
    ///   - front: the storage asked first (default `nil`: none).
    ///   - results: the store of variants (default `nil`).
    ///   - sources: the store of originals (default `nil`).
    ///   - missMemory: how long a store miss is remembered (default 10 s).
    public init(front: (any SharedCacheStorage)? = nil, results: ObjectStoreTier? = nil, sources: ObjectStoreTier? = nil,
                missMemory: Duration = .seconds(10)) {
        self.front = front
        self.results = results
        self.sources = sources
        self.missMemory = missMemory
    }

    /// The store that keeps `key`: the result store for a variant's key (a source URL, `@` and
    /// one of the server's processor identifiers), the source store for any other.
    public func store(forKey key: String) -> ObjectStoreTier? {
        key.contains(literal: "@com.alcedo.") ? results : sources
    }

    /// Each lookup is recorded as a stage of the request it serves (``StageName/cacheRedis``,
    /// ``StageName/cacheResultStore``, ``StageName/cacheSourceStore``, with `hit`), when the
    /// lookup runs inside one (``RequestStages/current``).
    public func entry(forKey key: String) async throws(AlcedoError) -> SharedCacheEntry? {
        var frontError: AlcedoError?
        let stages = RequestStages.current
        if let front {
            let begin = ContinuousClock.now
            do throws(AlcedoError) {
                let found = try await front.entry(forKey: key)
                stages?.record(.cacheRedis, start: begin, end: .now, attributes: [("hit", found == nil ? "false" : "true")])
                if let found { return found }
            } catch {
                stages?.record(.cacheRedis, start: begin, end: .now, error: error.description)
                frontError = error
            }
        }
        if let store = store(forKey: key), !recentlyMissed(key) {
            let begin = ContinuousClock.now
            let found = await store.entry(forKey: key)
            stages?.record(store === results ? .cacheResultStore : .cacheSourceStore, start: begin, end: .now,
                           attributes: [("hit", found == nil ? "false" : "true")])
            if let found {
                if let front, frontError == nil {
                    Task { _ = try? await front.store(found, forKey: key) }
                }
                return found
            }
            rememberMiss(key)
        }
        if let frontError { throw frontError }
        return nil
    }

    @discardableResult
    public func store(_ entry: SharedCacheEntry, forKey key: String) async throws(AlcedoError) -> Bool {
        var queued = false
        if let store = store(forKey: key) {
            queued = store.enqueue(entry, forKey: key)
            _ = misses.withLock { $0.removeValue(forKey: key) }
        }
        guard let front else { return queued }
        return try await front.store(entry, forKey: key) || queued
    }

    public func removeEntry(forKey key: String) async throws(AlcedoError) {
        try await front?.removeEntry(forKey: key)
    }

    public func acquireLock(forKey key: String, duration: Duration) async throws(AlcedoError) -> Bool {
        guard let front else { return true }
        return try await front.acquireLock(forKey: key, duration: duration)
    }

    public func releaseLock(forKey key: String) async throws(AlcedoError) {
        try await front?.releaseLock(forKey: key)
    }

    // MARK: Misses

    private func recentlyMissed(_ key: String) -> Bool {
        let now = ContinuousClock.now
        return misses.withLock { misses in
            guard let until = misses[key] else { return false }
            if until > now { return true }
            misses[key] = nil
            return false
        }
    }

    private func rememberMiss(_ key: String) {
        let until = ContinuousClock.now + missMemory
        misses.withLock { misses in
            if misses.count >= Self.missLimit { misses.removeAll(keepingCapacity: true) }
            misses[key] = until
        }
    }
}
