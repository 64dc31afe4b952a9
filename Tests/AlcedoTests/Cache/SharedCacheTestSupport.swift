import Foundation
import Synchronization
@testable import Alcedo

/// A shared tier in this process: a dictionary behind a lock, with locks of its own, that can
/// be told to fail every operation (as a store that is down would).
final class InProcessSharedStorage: SharedCacheStorage {
    private struct State {
        var entries: [String: SharedCacheEntry] = [:]
        var locks: Set<String> = []
        var failing = false
        var operations = 0
    }

    private let state = Mutex(State())

    var failing: Bool {
        get { state.withLock { $0.failing } }
        set { state.withLock { $0.failing = newValue } }
    }

    var keys: Set<String> { state.withLock { Set($0.entries.keys) } }
    var operations: Int { state.withLock { $0.operations } }

    func stored(_ key: String) -> SharedCacheEntry? { state.withLock { $0.entries[key] } }

    private func begin() throws(AlcedoError) {
        let failing = state.withLock { state in
            state.operations += 1
            return state.failing
        }
        if failing {
            throw .cacheError(reason: .sharedStorageError(reason: .connectionFailed(node: "in-process", description: "down for the test")))
        }
    }

    func entry(forKey key: String) async throws(AlcedoError) -> SharedCacheEntry? {
        try begin()
        return state.withLock { $0.entries[key] }
    }

    func store(_ entry: SharedCacheEntry, forKey key: String) async throws(AlcedoError) -> Bool {
        try begin()
        state.withLock { $0.entries[key] = entry }
        return true
    }

    func removeEntry(forKey key: String) async throws(AlcedoError) {
        try begin()
        _ = state.withLock { $0.entries.removeValue(forKey: key) }
    }

    func acquireLock(forKey key: String, duration: Duration) async throws(AlcedoError) -> Bool {
        try begin()
        return state.withLock { $0.locks.insert(key).inserted }
    }

    func releaseLock(forKey key: String) async throws(AlcedoError) {
        try begin()
        _ = state.withLock { $0.locks.remove(key) }
    }
}
