import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore
import Synchronization

/// An encoded result, ready to send.
struct EncodedResult: Sendable {
    /// The response body, kept as the buffer every response shares (no copy per response).
    let body: ByteBuffer
    let format: ImageFormat
    let etag: String
    let lastModified: String?
    /// The tier that answered when it was produced (`memory`, `disk` or `source`).
    let tier: String
    /// When the entry stops being served from memory.
    let expires: ContinuousClock.Instant
    /// imgproxy's debug headers, when ``ImageServerConfiguration/debugHeaders`` is on.
    var debug: DebugFacts? = nil
    /// The status of a fallback answer (``ImageServerConfiguration/fallbackImage``); `nil` for
    /// the source's own result. Fallback answers are not kept.
    var fallbackStatus: Int? = nil
}

/// Encoded results by variant, in memory up to a byte budget (least recently used out
/// first), and the production of each variant shared by every request waiting for it: 100
/// concurrent requests for one new variant make one production.
///
/// An entry counts the memory its buffer holds (a `ByteBuffer`'s capacity, rounded up to a
/// power of two), not only its readable bytes: counted by readable bytes, a full cache held
/// up to twice its capacity.
final class ResultStore: Sendable {
    private struct State {
        var entries: [String: (result: EncodedResult, tick: UInt64)] = [:]
        var bytes = 0
        var tick: UInt64 = 0
        var inFlight: [String: Task<EncodedResult, any Error>] = [:]
    }

    private let state = Mutex(State())
    let capacity: Int
    /// Told the bytes held after every change (the server's memory budget counts them).
    private let onChange: @Sendable (Int) -> Void

    init(capacity: Int, onChange: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.capacity = max(0, capacity)
        self.onChange = onChange
    }

    /// The bytes the entries hold now.
    var bytes: Int { state.withLock { $0.bytes } }

    /// The memory an entry holds.
    static func cost(_ result: EncodedResult) -> Int { result.body.capacity }

    /// The stored result of `key` if it has not expired.
    func cached(_ key: String) -> EncodedResult? {
        var removed: Int?
        let result = state.withLock { state -> EncodedResult? in
            guard let entry = state.entries[key] else { return nil }
            if entry.result.expires <= .now {
                state.entries[key] = nil
                state.bytes -= Self.cost(entry.result)
                removed = state.bytes
                return nil
            }
            state.tick += 1
            state.entries[key]?.tick = state.tick
            return entry.result
        }
        if let removed { onChange(removed) }
        return result
    }

    /// The result of `key`: stored, in production, or produced now by `produce`. The
    /// production runs in a task of its own, so a caller that goes away does not stop it
    /// for the others. `joined` tells whether the caller shared another's production.
    func value(for key: String, produce: @escaping @Sendable () async throws -> EncodedResult) async throws -> (EncodedResult, joined: Bool) {
        if let hit = cached(key) { return (hit, true) }
        let (task, joined) = state.withLock { state -> (Task<EncodedResult, any Error>, Bool) in
            if let running = state.inFlight[key] { return (running, true) }
            let task = Task<EncodedResult, any Error> {
                defer { _ = self.state.withLock { $0.inFlight.removeValue(forKey: key) } }
                let result = try await produce()
                self.store(result, for: key)
                return result
            }
            state.inFlight[key] = task
            return (task, false)
        }
        return (try await task.value, joined)
    }

    private func store(_ result: EncodedResult, for key: String) {
        let cost = Self.cost(result)
        guard cost <= capacity / 4, result.fallbackStatus == nil else { return }
        let bytes = state.withLock { state -> Int in
            if let old = state.entries[key] { state.bytes -= Self.cost(old.result) }
            state.tick += 1
            state.entries[key] = (result, state.tick)
            state.bytes += cost
            while state.bytes > capacity, let oldest = state.entries.min(by: { $0.value.tick < $1.value.tick }) {
                state.entries[oldest.key] = nil
                state.bytes -= Self.cost(oldest.value.result)
            }
            return state.bytes
        }
        onChange(bytes)
    }
}

/// What the server knows of a source without loading it: its validator (for ETags) and
/// format (for negotiation), learned when it was last loaded.
struct SourceInfo: Sendable {
    /// The source's ETag or Last-Modified, else a hash of its bytes.
    let validator: String
    let lastModified: String?
    let format: ImageFormat
    /// Whether the source has more than one frame (default `nil`: not known yet).
    var animated: Bool? = nil
}

/// Source facts by URL, bounded (cleared when full; they are learned again on the next load).
final class SourceInfoTable: Sendable {
    private let table = Mutex<[String: SourceInfo]>([:])
    private static let limit = 50_000

    subscript(url: String) -> SourceInfo? {
        get { table.withLock { $0[url] } }
        set {
            table.withLock { table in
                if table.count >= Self.limit { table.removeAll() }
                table[url] = newValue
            }
        }
    }
}

/// Lets the first request for a source not yet loaded run alone, so that its original is
/// in the cache before the other variants of that source start: one download per source,
/// even when its variants are asked for at the same time.
final class SourceGate: Sendable {
    private struct State {
        var loaded: Set<String> = []
        var loading: [String: [CheckedContinuation<Void, Never>]] = [:]
    }

    private let state = Mutex(State())

    /// What a caller does next: run (loaded), run as the first, or wait for the first.
    private enum Turn { case loaded, first, wait }

    /// Runs `body`; for a source not yet loaded, one caller at a time until one succeeds.
    func run<T: Sendable>(_ url: String, _ body: () async throws -> T) async throws -> T {
        while true {
            let turn: Turn = state.withLock { state in
                if state.loaded.contains(url) { return .loaded }
                if state.loading[url] != nil { return .wait }
                state.loading[url] = []
                return .first
            }
            switch turn {
            case .loaded:
                return try await body()
            case .first:
                do {
                    let value = try await body()
                    finish(url, loaded: true)
                    return value
                } catch {
                    finish(url, loaded: false)
                    throw error
                }
            case .wait:
                await withCheckedContinuation { continuation in
                    let resumeNow: Bool = state.withLock { state in
                        guard state.loading[url] != nil else { return true }
                        state.loading[url]!.append(continuation)
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            }
        }
    }

    private func finish(_ url: String, loaded: Bool) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if loaded {
                if state.loaded.count > 100_000 { state.loaded.removeAll() }
                state.loaded.insert(url)
            }
            return state.loading.removeValue(forKey: url) ?? []
        }
        for waiter in waiters { waiter.resume() }
    }
}
