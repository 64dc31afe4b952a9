#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The name of one stage of an image request, such as ``queue`` or ``download``.
///
/// Stages are the parts of a request worth timing apart: waiting for a slot, waiting for
/// memory, each cache tier's lookup, the source fetch, decoding, each processor and encoding.
/// ``processor(_:)`` names a processor's stage after the processor (`process:resize`).
public struct StageName: Hashable, Sendable, CustomStringConvertible {
    /// The name as it appears in metrics labels, log fields and span names.
    public let rawValue: String

    /// A stage named `rawValue`.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// Waiting for a processing slot.
    public static let queue = StageName("queue")
    /// Waiting for the memory budget to grant a request's working set.
    public static let memoryBudget = StageName("memory_budget")
    /// Looking for the encoded result in the result cache (in memory, and the result store when
    /// there is one).
    public static let cacheResult = StageName("cache_result")
    /// Looking in the decoded-image memory cache.
    public static let cacheMemory = StageName("cache_memory")
    /// Looking in the disk cache (the shared tiers behind it are timed apart, as
    /// ``cacheRedis``, ``cacheResultStore`` and ``cacheSourceStore``).
    public static let cacheDisk = StageName("cache_disk")
    /// Looking in the shared tier (Redis).
    public static let cacheRedis = StageName("cache_redis")
    /// Looking in the result store only.
    public static let cacheResultStore = StageName("cache_result_store")
    /// Looking in the source store only.
    public static let cacheSourceStore = StageName("cache_source_store")
    /// Fetching the source (attributes `origin_status`, `bytes`, `host`).
    public static let download = StageName("download")
    /// Decoding the source.
    public static let decode = StageName("decode")
    /// Running the processors (all of them, when they are not timed one by one).
    public static let process = StageName("process")
    /// Writing the decoded image to the caches.
    public static let store = StageName("store")
    /// Encoding the result.
    public static let encode = StageName("encode")
    /// Streaming a `raw` source through.
    public static let stream = StageName("stream")

    /// The stage of one processor, `process:NAME`.
    public static func processor(_ name: String) -> StageName { StageName("process:" + name) }

    public var description: String { rawValue }
}

/// One finished stage.
public struct StageRecord: Sendable {
    /// Which stage.
    public var name: StageName
    /// When it started.
    public var start: ContinuousClock.Instant
    /// When it ended.
    public var end: ContinuousClock.Instant
    /// What was learned in it (`origin_status`, `bytes`, `tier`…), in the order given.
    public var attributes: [(String, String)]
    /// Why it failed, `nil` when it did not.
    public var error: String?

    /// How long it took.
    public var duration: Duration { end - start }
}

/// Told of each stage of each request, as it starts and ends: the place to attach a tracing
/// backend (a span per stage, as children of the request's span).
///
/// Both calls run on the request's task, inside the request: keep them short.
public protocol RequestStageObserver: Sendable {
    /// A stage of `request` started at `start`.
    func stageStarted(_ name: StageName, at start: ContinuousClock.Instant, request: RequestStages)
    /// A stage of `request` ended.
    func stageEnded(_ record: StageRecord, request: RequestStages)
}

/// The stages of one request: created when the request arrives, carried through its handling,
/// read by the access log line and the metrics when it is answered.
///
/// Every stage is entered through ``stage(_:attributes:_:)`` (or reported after the fact
/// with ``record(_:start:end:attributes:error:)`` when a lower layer timed it), so that one
/// place sees them all: the records kept here and the optional ``observer``. Without an
/// observer the cost of a stage is two clock reads and one array append.
public final class RequestStages: Sendable {
    /// The stages of the request whose work is running, for the layers below the library
    /// (the shared tiers) that record their own stages; `nil` outside a request.
    @TaskLocal public static var current: RequestStages?

    /// The request's id: the client's `X-Request-ID` when it is a valid one, else a new one
    /// (see ``RequestID``). Sent back in `X-Request-ID`.
    public let requestID: String
    /// When the request arrived.
    public let start: ContinuousClock.Instant
    /// Told of every stage as it starts and ends (`nil`: nobody).
    public let observer: (any RequestStageObserver)?
    private let state: Mutex<State>

    private struct State {
        var records: [StageRecord] = []
        var tier: String?
        var sourceHost: String?
        var clientIP: String?
        var errorType: String?
        var error: String?
    }

    /// Creates the recorder of one request.
    /// - Parameters:
    ///   - requestID: the request's id.
    ///   - start: when the request arrived (default now).
    ///   - observer: told of every stage (default `nil`).
    public init(requestID: String, start: ContinuousClock.Instant = .now, observer: (any RequestStageObserver)? = nil) {
        self.requestID = requestID
        self.start = start
        self.observer = observer
        var state = State()
        state.records.reserveCapacity(8)
        self.state = Mutex(state)
    }

    /// Runs `body` as the stage `name` and records how long it took (and its error when it throws).
    /// - Parameters:
    ///   - name: the stage.
    ///   - attributes: what is known of it before it runs (default none).
    ///   - body: the stage's work.
    public func stage<T>(_ name: StageName, attributes: [(String, String)] = [],
                         _ body: () async throws -> T) async rethrows -> T {
        let begin = ContinuousClock.now
        observer?.stageStarted(name, at: begin, request: self)
        do {
            let value = try await body()
            finish(StageRecord(name: name, start: begin, end: .now, attributes: attributes, error: nil))
            return value
        } catch {
            finish(StageRecord(name: name, start: begin, end: .now, attributes: attributes, error: String(describing: error)))
            throw error
        }
    }

    /// Records a stage timed elsewhere (the observer is told of its start and end now).
    public func record(_ name: StageName, start: ContinuousClock.Instant, end: ContinuousClock.Instant,
                       attributes: [(String, String)] = [], error: String? = nil) {
        observer?.stageStarted(name, at: start, request: self)
        finish(StageRecord(name: name, start: start, end: end, attributes: attributes, error: error))
    }

    private func finish(_ record: StageRecord) {
        state.withLock { $0.records.append(record) }
        observer?.stageEnded(record, request: self)
    }

    /// The stages finished so far, in the order they ended.
    public var records: [StageRecord] { state.withLock { $0.records } }

    /// The client's address, as the access log's `client_ip` (`nil` when the request context
    /// does not know it).
    public var clientIP: String? {
        get { state.withLock { $0.clientIP } }
        set { state.withLock { $0.clientIP = newValue } }
    }

    /// Which tier answered: `result` (an encoded result in memory or the result store),
    /// `memory`, `disk` (which includes the shared tier), `source` (fetched), `not-modified`
    /// (a 304 from validators); `nil` before one did, or when the request failed first.
    public var tier: String? {
        get { state.withLock { $0.tier } }
        set { state.withLock { $0.tier = newValue } }
    }

    /// The source URL's host, once the URL is parsed.
    public var sourceHost: String? {
        get { state.withLock { $0.sourceHost } }
        set { state.withLock { $0.sourceHost = newValue } }
    }

    /// The request's error as imgproxy types it in `errors_total{type}` (`path_parsing`,
    /// `security`, `download`, `processing`, `queue`, `timeout`, `image_data_size`, `IO`), and
    /// its readable reason; `nil` while it has none.
    public var failure: (type: String, reason: String)? {
        state.withLock { state in state.errorType.map { ($0, state.error ?? "") } }
    }

    func fail(type: String, reason: String) {
        state.withLock {
            $0.errorType = type
            $0.error = reason
        }
    }
}

/// Request ids as imgproxy makes and accepts them.
public enum RequestID {
    /// The header that carries it both ways.
    public static let header = "X-Request-ID"

    /// `value` when it is a valid id (1 to 128 of `A-Z a-z 0-9 _ -`, imgproxy's pattern with a
    /// length cap), else a new one.
    public static func accept(_ value: String?) -> String {
        if let value, isValid(value) { return value }
        return make()
    }

    /// Whether `value` is an id imgproxy would keep.
    public static func isValid(_ value: String) -> Bool {
        let bytes = value.utf8
        guard !bytes.isEmpty, bytes.count <= 128 else { return false }
        return bytes.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
    }

    /// A new 21-character id from nanoid's alphabet, as imgproxy's.
    public static func make() -> String {
        let alphabet = Array("useandom-26T198340PX75pxJACKVERYMINDBUSHWOLF_GQZbfghjklqvwyzrict".utf8)
        var generator = SystemRandomNumberGenerator()
        return String(unsafeUninitializedCapacity: 21) { out in
            for index in 0..<21 { out[index] = alphabet[Int(generator.next() & 63)] }
            return 21
        }
    }
}
