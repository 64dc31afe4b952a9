import Alcedo
import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Synchronization

/// An ``ObjectStore`` as a cache tier of the server (the result store, the source store): every
/// read waits at most ``Config/readTimeout``, repeated failures open a ``CircuitBreaker`` that
/// skips the store until a probe succeeds, writes go through a queue of fixed size drained by a
/// few writers (a full queue drops the write and counts it), and an entry past its TTL reads as
/// a miss. Nothing here throws to a request: a slow, failing or absent store is a miss.
///
/// A write that fails, or finds the breaker open, is held back (up to ``Config/heldBackBytes``)
/// and queued again once the store answers, or after the breaker's open duration when nothing
/// else asks the store: variants made while the store was cut off reach it after the partition heals.
///
/// Entries are named by the SHA-256 of their cache key, under ``kind`` and the hash of the
/// source URL the key starts with (`results/SOURCEHASH/KEYHASH`), so that every variant of one
/// source can be listed or purged by a name prefix (``namePrefix(forSource:)``).
public final class ObjectStoreTier: Sendable {
    /// What a tier holds.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// Processed variants, as served.
        case results
        /// Originals, as downloaded.
        case sources
    }

    /// The settings of a tier; every property has the default stated on it.
    public struct Config: Sendable {
        /// How long a read may take before it counts as a miss. Default 1 s.
        public var readTimeout: Duration
        /// How long a write may take before it counts as failed. Default 10 s.
        public var writeTimeout: Duration
        /// How long an entry is served after it was stored; older entries read as misses.
        /// Default 30 days. It replaces the entry's own expiry (the disk cache's, 7 days by
        /// default, a local policy): only an entry already expired is not stored.
        public var ttl: Duration
        /// Writes waiting at most; a write that finds the queue full is dropped. Default 256.
        public var queueCapacity: Int
        /// Bytes of writes waiting at most, whatever their count: a write that would pass it is
        /// dropped (counted), so a slow store holds no more than this in memory. Default 64 MiB.
        public var queueBytes: Int
        /// Writes running at once. Default 4.
        public var writers: Int
        /// Entries larger than this many bytes are not stored. Default 32 MiB.
        public var maximumEntryBytes: Int
        /// Bytes of failed writes kept to be written again once the store answers; more are
        /// dropped and counted. Default 64 MiB.
        public var heldBackBytes: Int
        /// When the store is skipped after failures. Default: 5 failures in a row, 10 s.
        public var breaker: CircuitBreaker.Config
        /// Where state changes (breaker opened, closed) are logged. Default label `alcedo.store`.
        public var logger: Logger

        /// Creates settings; every parameter has the default stated on its property.
        public init(readTimeout: Duration = .seconds(1), writeTimeout: Duration = .seconds(10), ttl: Duration = .seconds(30 * 86_400),
                    queueCapacity: Int = 256, queueBytes: Int = 64 << 20, writers: Int = 4, maximumEntryBytes: Int = 32 << 20,
                    heldBackBytes: Int = 64 << 20,
                    breaker: CircuitBreaker.Config = .init(failureThreshold: 5, openDuration: .seconds(10)),
                    logger: Logger = Logger(label: "alcedo.store")) {
            self.readTimeout = readTimeout
            self.writeTimeout = writeTimeout
            self.ttl = ttl
            self.queueCapacity = queueCapacity
            self.queueBytes = queueBytes
            self.writers = writers
            self.maximumEntryBytes = maximumEntryBytes
            self.heldBackBytes = heldBackBytes
            self.breaker = breaker
            self.logger = logger
        }
    }

    /// What the tier counted since it was made.
    public struct Statistics: Sendable, Hashable {
        /// Reads that found a live entry.
        public var hits = 0
        /// Reads that found nothing, an expired entry, or failed (failures are in ``errors`` too).
        public var misses = 0
        /// Entries found past their TTL (counted as misses too).
        public var expired = 0
        /// Reads and writes that failed or timed out.
        public var errors = 0
        /// Operations not tried because the breaker was open.
        public var skipped = 0
        /// Entries written.
        public var writes = 0
        /// Writes dropped: the queue was full, or a failed write found no room to be held back.
        public var droppedWrites = 0
        /// Failed writes queued again once the store answered.
        public var retriedWrites = 0
        /// Bytes read by hits.
        public var bytesRead = 0
        /// Bytes written.
        public var bytesWritten = 0

        /// All zero.
        public init() {}
    }

    private struct State {
        var statistics = Statistics()
        var breaker: CircuitBreaker
        var queue: [(name: String, entry: SharedCacheEntry)] = []
        var head = 0
        /// The bytes of the writes in ``queue`` from ``head`` on.
        var queuedBytes = 0
        var writing = 0
        /// Failed writes waiting for the store to answer again, and their bytes.
        var heldBack: [(name: String, entry: SharedCacheEntry)] = []
        var heldBackBytes = 0
        /// How many times each held-back write was queued again (at most ``ObjectStoreTier/retryLimit``).
        var retries: [String: Int] = [:]
        /// Whether a retry of the held-back writes is scheduled.
        var retryScheduled = false
    }

    /// The store behind the tier.
    public let store: any ObjectStore
    /// What the tier holds.
    public let kind: Kind
    /// The settings.
    public let config: Config
    private let state: Mutex<State>

    /// Creates a tier holding `kind` on `store`.
    public init(store: any ObjectStore, kind: Kind, config: Config = Config()) {
        self.store = store
        self.kind = kind
        self.config = config
        state = Mutex(State(breaker: CircuitBreaker(config: config.breaker)))
    }

    /// The counters so far.
    public var statistics: Statistics { state.withLock { $0.statistics } }
    /// The breaker's state now.
    public var breakerState: CircuitBreaker.State { state.withLock { $0.breaker.state } }
    /// Writes waiting in the queue now.
    public var queuedWrites: Int { state.withLock { $0.queue.count - $0.head } }
    /// Failed writes held back now, to be written once the store answers.
    public var heldBackWrites: Int { state.withLock { $0.heldBack.count } }

    // MARK: Names

    /// The name of the entry of `key`: `KIND/SOURCEHASH/KEYHASH`, where SOURCEHASH is the
    /// hash of the source URL the key starts with (its part before `@` and a processor
    /// identifier, see ``sourceURL(ofKey:)``) and KEYHASH that of the whole key.
    public func name(forKey key: String) -> String {
        Self.namePrefix(kind, forSource: Self.sourceURL(ofKey: key)) + Self.hash(key)
    }

    /// The name prefix of every entry of `source` (a source URL as the cache keys name it).
    public static func namePrefix(_ kind: Kind, forSource source: String) -> String {
        kind.rawValue + "/" + String(hash(source).prefix(16)) + "/"
    }

    /// The source URL a cache key starts with: the key before `@com.alcedo.` (the processor
    /// identifiers of the server's variants), else the whole key.
    public static func sourceURL(ofKey key: String) -> String {
        guard let marker = key.range(ofLiteral: "@com.alcedo.") else { return key }
        return String(key[..<marker.lowerBound])
    }

    static func hash(_ text: String) -> String {
        lowercaseHex(SHA256.hash(data: Data(text.utf8)))
    }

    // MARK: Reading

    /// The live entry of `key`, or `nil` (a miss, an expired entry, a failure, a timeout, or
    /// the breaker open).
    public func entry(forKey key: String) async -> SharedCacheEntry? {
        guard admit() else { return nil }
        let name = self.name(forKey: key)
        let store = self.store
        let found: SharedCacheEntry?
        do {
            found = try await Self.within(config.readTimeout, operation: "read") { try await store.read(name) }
        } catch {
            failed(error, operation: "read") { $0.misses += 1 }
            return nil
        }
        let now = Date()
        guard var entry = found else {
            succeeded { $0.misses += 1 }
            return nil
        }
        if entry.metadata.isExpired(at: now) {
            succeeded {
                $0.misses += 1
                $0.expired += 1
            }
            return nil
        }
        entry.metadata.key = key
        succeeded {
            $0.hits += 1
            $0.bytesRead += entry.data.count
        }
        return entry
    }

    // MARK: Writing

    /// Queues the write of `entry` under `key`, to expire ``Config/ttl`` from now.
    /// - Returns: `false` when the write was not queued (the queue full, the entry too large
    ///   or already expired, or the breaker open).
    @discardableResult
    public func enqueue(_ entry: SharedCacheEntry, forKey key: String) -> Bool {
        let now = Date()
        guard entry.data.count <= config.maximumEntryBytes else { return false }
        var stored = entry
        let ttl = Double(config.ttl.components.seconds) + Double(config.ttl.components.attoseconds) / 1e18
        guard entry.metadata.expirationDate > now else { return false }
        stored.metadata.expirationDate = now.addingTimeInterval(ttl)
        stored.metadata.key = key
        let name = self.name(forKey: key)
        let startWriter: Bool? = state.withLock { state in
            // An open breaker holds the write back at once: queued, it would only wait for the probe.
            if case .open(let until) = state.breaker.state, ContinuousClock.now < until {
                state.statistics.skipped += 1
                hold(name, stored, in: &state)
                return nil
            }
            guard state.queue.count - state.head < config.queueCapacity,
                  state.queuedBytes + stored.data.count <= config.queueBytes else {
                state.statistics.droppedWrites += 1
                return nil
            }
            state.queue.append((name, stored))
            state.queuedBytes += stored.data.count
            guard state.writing < max(1, config.writers) else { return false }
            state.writing += 1
            return true
        }
        guard let startWriter else { return false }
        if startWriter { Task { await drain() } }
        return true
    }

    /// Writes queued entries until the queue is empty.
    private func drain() async {
        while let (name, entry) = next() {
            guard admit() else {
                state.withLock { hold(name, entry, in: &$0) }
                continue
            }
            let store = self.store
            do {
                try await Self.within(config.writeTimeout, operation: "write") { try await store.write(entry, as: name) }
                succeeded {
                    $0.writes += 1
                    $0.bytesWritten += entry.data.count
                }
                _ = state.withLock { $0.retries.removeValue(forKey: name) }
            } catch {
                failed(error, operation: "write") { _ in }
                state.withLock { hold(name, entry, in: &$0) }
            }
        }
    }

    /// How many times a failed write is queued again before it is dropped.
    static let retryLimit = 3

    /// Keeps a failed write to be queued again once the store answers, or drops it (counted)
    /// when the held-back writes would pass ``Config/heldBackBytes`` or it was retried
    /// ``retryLimit`` times.
    private func hold(_ name: String, _ entry: SharedCacheEntry, in state: inout State) {
        guard state.heldBackBytes + entry.data.count <= config.heldBackBytes, state.retries[name, default: 0] < Self.retryLimit else {
            state.statistics.droppedWrites += 1
            state.retries[name] = nil
            return
        }
        state.heldBack.append((name, entry))
        state.heldBackBytes += entry.data.count
        guard !state.retryScheduled else { return }
        state.retryScheduled = true
        let delay = config.breaker.openDuration
        Task { [weak self] in
            try? await Task.sleep(for: delay)
            guard let self else { return }
            let start = self.state.withLock { state -> Bool in
                state.retryScheduled = false
                return self.requeueHeldBack(in: &state)
            }
            if start { await self.drain() }
        }
    }

    /// Queues the held-back writes again (as many as the queue takes) after the store answered.
    /// - Returns: whether a writer should start.
    private func requeueHeldBack(in state: inout State) -> Bool {
        var moved = 0
        while moved < state.heldBack.count, state.queue.count - state.head < config.queueCapacity,
              state.queuedBytes + state.heldBack[moved].entry.data.count <= config.queueBytes {
            state.queue.append(state.heldBack[moved])
            state.queuedBytes += state.heldBack[moved].entry.data.count
            state.heldBackBytes -= state.heldBack[moved].entry.data.count
            state.retries[state.heldBack[moved].name, default: 0] += 1
            moved += 1
        }
        state.heldBack.removeFirst(moved)
        state.statistics.retriedWrites += moved
        guard moved > 0, state.writing < max(1, config.writers) else { return false }
        state.writing += 1
        return true
    }

    /// The next queued write, or `nil` (and this writer stops) when there is none.
    private func next() -> (String, SharedCacheEntry)? {
        state.withLock { state in
            guard state.head < state.queue.count else {
                state.queue.removeAll(keepingCapacity: true)
                state.head = 0
                state.queuedBytes = 0
                state.writing -= 1
                return nil
            }
            let item = state.queue[state.head]
            state.head += 1
            state.queuedBytes -= item.entry.data.count
            if state.head > 64, state.head * 2 > state.queue.count {
                state.queue.removeFirst(state.head)
                state.head = 0
            }
            return (item.name, item.entry)
        }
    }

    /// Waits until the queue is empty and no write runs (for tests and shutdown), at most `limit`.
    public func flush(limit: Duration = .seconds(30)) async {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline, state.withLock({ $0.writing > 0 || $0.head < $0.queue.count }) {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    // MARK: Purging

    /// Deletes every entry whose name starts with `prefix` (``kind``'s folder when `nil`).
    /// - Returns: how many were deleted.
    public func purge(prefix: String? = nil) async throws -> Int {
        let listed = try await store.list(prefix: prefix ?? kind.rawValue + "/", limit: nil)
        return try await store.delete(listed.map(\.name))
    }

    // MARK: Bounds and the breaker

    /// Whether the breaker lets an operation through now (counts it as skipped when not).
    private func admit() -> Bool {
        state.withLock { state in
            if state.breaker.allowsRequest(at: .now) { return true }
            state.statistics.skipped += 1
            return false
        }
    }

    private func succeeded(_ update: (inout Statistics) -> Void) {
        let (recovered, startWriter) = state.withLock { state -> (Bool, Bool) in
            update(&state.statistics)
            let wasClosed = state.breaker.isClosed
            state.breaker.recordSuccess()
            // The store answers: writes held back since it failed go to the queue again.
            let start = state.heldBack.isEmpty ? false : requeueHeldBack(in: &state)
            return (!wasClosed, start)
        }
        if recovered { config.logger.notice("the \(kind.rawValue) store at \(store.location) answers again") }
        if startWriter { Task { await drain() } }
    }

    private func failed(_ error: any Error, operation: String, _ update: (inout Statistics) -> Void) {
        let opened = state.withLock { state -> Bool in
            update(&state.statistics)
            state.statistics.errors += 1
            return state.breaker.recordFailure(at: .now)
        }
        if opened {
            let message = "the \(kind.rawValue) store at \(store.location) is skipped for \(config.breaker.openDuration) "
                + "after \(config.breaker.failureThreshold) failures: \(operation) failed: \(error)"
            config.logger.error("\(message)")
        }
    }

    /// The value of `body`, or ``ObjectStoreError/timedOut(operation:limit:)`` once `limit` has
    /// passed (the body is cancelled then).
    static func within<T: Sendable>(_ limit: Duration, operation: String,
                                    _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw ObjectStoreError.timedOut(operation: operation, limit: limit)
            }
            return value
        }
    }
}
