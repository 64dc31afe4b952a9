import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Prometheus
import Synchronization

/// The server's metrics in a Prometheus registry of its own, served at `/metrics`:
/// requests by status, processing time, cache hits by tier, in-flight and queued requests,
/// source bytes, connections closed by the write timeout (`alcedo_write_timeouts_total`), how many variants were produced and how many of them were processed here,
/// how many had to be encoded apart from the cached variant's bytes (`alcedo_response_encodings_total`),
/// and with a shared cache tier its hits, misses, errors, bytes and lock waits
/// (`alcedo_shared_cache_*`; with a result or source store, these count the shared tier as a
/// whole, Redis and stores), per permanent store its hits, misses, errors, writes, dropped
/// writes, queue and breaker state (`alcedo_store_*{store="results"|"sources"}`); the process's resident size, the memory budget (reserved, held,
/// free, requests waiting for memory) and the bytes each cache tier holds (`alcedo_memory_*`,
/// `alcedo_cache_bytes`).
public final class ServerMetrics: Sendable {
    /// Where the memory figures are read at each scrape.
    struct MemorySources: Sendable {
        let budget: MemoryBudget
        let results: ResultStore
        let cache: ImageCache
    }

    /// The registry (one per server; pass it to a `PrometheusMetricsFactory` to add your own).
    public let registry = PrometheusCollectorRegistry()
    private let statusCounters = Mutex<[Int: Counter]>([:])
    private let tierCounters = Mutex<[String: Counter]>([:])
    let processingTime: DurationHistogram
    let inFlight: Gauge
    let queued: Gauge
    let sourceBytes: Counter
    let variantsProduced: Counter
    let processingRuns: Counter
    /// Connections closed because a response was not written within the write timeout.
    let writeTimeouts: Counter
    private let encodings: Counter
    private let sharedTier: SharedCacheTier?
    private let stores: [ObjectStoreTier]
    private let produced = Atomic<Int>(0)
    private let processed = Atomic<Int>(0)
    private let encoded = Atomic<Int>(0)
    private let waiting = Atomic<Int>(0)
    private let memory: MemorySources?
    /// imgproxy's metric names (`nil`: not exported).
    let imgproxy: ImgproxyMetrics?
    private let stageHistograms = Mutex<[StageName: DurationHistogram]>([:])

    init(sharedTier: SharedCacheTier? = nil, stores: [ObjectStoreTier] = [], memory: MemorySources? = nil,
         imgproxyNamespace: String? = nil, workerCount: Int = 0) {
        self.sharedTier = sharedTier
        self.stores = stores
        self.memory = memory
        if let imgproxyNamespace {
            imgproxy = ImgproxyMetrics(registry: registry, namespace: imgproxyNamespace, workerCount: workerCount)
        } else {
            imgproxy = nil
        }
        processingTime = registry.makeDurationHistogram(
            descriptor: Self.name("processing_duration", "seconds",
                                  "Time to produce a result that was not in the result cache (load, decode, process, encode)"),
            buckets: [.milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
                      .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10)])
        inFlight = registry.makeGauge(descriptor: Self.name("requests_in_flight", "", "Image requests being processed"))
        queued = registry.makeGauge(descriptor: Self.name("requests_queued", "", "Image requests waiting for a processing slot"))
        sourceBytes = registry.makeCounter(descriptor: Self.name("source_bytes", "total", "Bytes of sources downloaded"))
        variantsProduced = registry.makeCounter(
            descriptor: Self.name("variants_produced", "total", "Results produced (retrieved through the pipeline and encoded)"))
        processingRuns = registry.makeCounter(
            descriptor: Self.name("processing_runs", "total",
                                  "Results whose processing ran on this server (not found processed in a cache tier)"))
        writeTimeouts = registry.makeCounter(
            descriptor: Self.name("write_timeouts", "total",
                                  "Connections closed because a response was not written within --write-response-timeout"))
        encodings = registry.makeCounter(
            descriptor: Self.name("response_encodings", "total",
                                  "Results encoded for the response apart from the cached variant's bytes (after a memory hit)"))
    }

    private static func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "alcedo", metricName: metric, unitName: unit, helpText: help)
    }

    /// The time of each stage of the requests, by stage (`alcedo_request_stage_duration_seconds{stage}`).
    func recordStages(_ stages: RequestStages) {
        for record in stages.records {
            let histogram = stageHistograms.withLock { histograms in
                if let histogram = histograms[record.name] { return histogram }
                let histogram = registry.makeDurationHistogram(
                    descriptor: Self.name("request_stage_duration", "seconds",
                                          "Time spent in each stage of the image requests (queue, memory_budget, cache_memory, cache_disk, download, decode, process, store, encode)"),
                    labels: [("stage", record.name.rawValue)],
                    buckets: [.microseconds(100), .microseconds(500), .milliseconds(1), .milliseconds(5), .milliseconds(10),
                              .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
                              .seconds(1), .seconds(2.5), .seconds(5), .seconds(10)])
                histograms[record.name] = histogram
                return histogram
            }
            histogram.record(record.duration)
        }
    }

    /// Counts a response by status code.
    func recordResponse(status: Int) {
        let counter = statusCounters.withLock { counters in
            if let counter = counters[status] { return counter }
            let counter = registry.makeCounter(descriptor: Self.name("requests", "total", "HTTP responses by status code"),
                                               labels: [("status", String(status))])
            counters[status] = counter
            return counter
        }
        counter.increment()
    }

    /// Counts where a result came from: `result` (encoded result in memory), `memory`,
    /// `disk` (Alcedo's caches) or `source` (downloaded).
    func recordHit(tier: String) {
        let counter = tierCounters.withLock { counters in
            if let counter = counters[tier] { return counter }
            let counter = registry.makeCounter(
                descriptor: Self.name("cache_hits", "total", "Results by the cache tier that answered (source: none did)"),
                labels: [("tier", tier)])
            counters[tier] = counter
            return counter
        }
        counter.increment()
    }

    func enterQueue() {
        queued.increment()
        waiting.add(1, ordering: .relaxed)
    }

    func leaveQueue() {
        queued.decrement()
        waiting.subtract(1, ordering: .relaxed)
    }

    /// Requests waiting for a processing slot (or for the memory to start) now.
    public var queuedCount: Int { memory?.budget.snapshot.waiting ?? waiting.load(ordering: .relaxed) }

    /// Counts a produced result; `processedHere`: its processor ran on this server.
    func recordProduced(processedHere: Bool = false) {
        variantsProduced.increment()
        produced.add(1, ordering: .relaxed)
        if processedHere {
            processingRuns.increment()
            processed.add(1, ordering: .relaxed)
        }
    }

    /// Counts a result encoded for its response apart from the cached variant's bytes.
    func recordEncoding() {
        encodings.increment()
        encoded.add(1, ordering: .relaxed)
    }

    /// How many results were encoded apart from the cached variant's bytes since start.
    public var responseEncodingCount: Int { encoded.load(ordering: .relaxed) }

    /// How many produced results were processed on this server since start.
    public var processingRunCount: Int { processed.load(ordering: .relaxed) }

    /// How many results were produced through the pipeline since start (each distinct
    /// variant once while it stays in the result cache).
    public var producedCount: Int { produced.load(ordering: .relaxed) }

    /// The metrics in Prometheus' text format.
    public func text() -> String {
        if let memory {
            let snapshot = memory.budget.snapshot
            inFlight.record(Int64(snapshot.running))
            queued.record(Int64(snapshot.waiting))
            imgproxy?.updateGauges(images: snapshot.running)
        }
        return registry.emitToString() + sharedTierText() + storesText() + memoryText()
    }

    /// The memory figures, read at each scrape.
    private func memoryText() -> String {
        guard let memory else { return "" }
        let budget = memory.budget.snapshot
        var text = ""
        func row(_ name: String, _ type: String, _ help: String, _ values: [(String, Int)]) {
            text += "# HELP alcedo_\(name) \(help)\n# TYPE alcedo_\(name) \(type)\n"
            for (labels, value) in values { text += "alcedo_\(name)\(labels) \(value)\n" }
        }
        if let rss = ProcessMemory.residentBytes() {
            row("memory_resident_bytes", "gauge", "Resident set size of the process", [("", rss)])
        }
        if let free = ProcessMemory.freeHeapBytes() {
            row("memory_heap_free_bytes", "gauge", "Bytes the allocator keeps free in its heaps (what a trim may return)", [("", free)])
        }
        row("memory_budget_bytes", "gauge", "The memory budget (--max-memory)", [("", budget.capacity)])
        row("memory_budget_reserved_bytes", "gauge", "Bytes reserved by requests at work", [("", budget.reserved)])
        row("memory_budget_held_bytes", "gauge", "Bytes held by the caches and set aside for the process",
            budget.held.sorted { $0.key < $1.key }.map { ("{holder=\"\($0.key)\"}", $0.value) })
        row("memory_budget_free_bytes", "gauge", "Bytes of the budget neither reserved nor held", [("", budget.free)])
        row("memory_budget_waiting", "gauge", "Requests waiting for memory", [("", budget.waitingForMemory)])
        row("memory_budget_waited_total", "counter", "Requests that had to wait for memory", [("", budget.waitedForMemoryTotal)])
        row("memory_budget_refused_total", "counter", "Requests refused by the budget (never fits, or its queue full)",
            [("", budget.refusedTotal)])
        var tiers: [(String, Int)] = [("{cache=\"result\"}", memory.results.bytes),
                                      ("{cache=\"memory\"}", memory.cache.memoryStorage.totalCost)]
        if let disk = try? memory.cache.diskStorage.totalSize() { tiers.append(("{cache=\"disk\"}", disk)) }
        row("cache_bytes", "gauge", "Bytes each cache holds (result: encoded results in RAM, memory: decoded images in RAM, disk)", tiers)
        return text
    }

    /// The permanent stores' counters, read from ``ObjectStoreTier/statistics`` at each scrape.
    private func storesText() -> String {
        guard !stores.isEmpty else { return "" }
        let rows: [(String, String, String, (ObjectStoreTier) -> Int)] = [
            ("hits_total", "counter", "Store reads that found a live entry", { $0.statistics.hits }),
            ("misses_total", "counter", "Store reads that found nothing, an expired entry, or failed", { $0.statistics.misses }),
            ("expired_total", "counter", "Store entries found past their TTL (read as misses)", { $0.statistics.expired }),
            ("errors_total", "counter", "Store reads and writes that failed or timed out", { $0.statistics.errors }),
            ("skipped_total", "counter", "Store operations not tried because the circuit breaker was open", { $0.statistics.skipped }),
            ("writes_total", "counter", "Entries written to the store", { $0.statistics.writes }),
            ("dropped_writes_total", "counter", "Store writes dropped because the write queue was full", { $0.statistics.droppedWrites }),
            ("read_bytes_total", "counter", "Bytes read from the store by hits", { $0.statistics.bytesRead }),
            ("written_bytes_total", "counter", "Bytes written to the store", { $0.statistics.bytesWritten }),
            ("retried_writes_total", "counter", "Failed store writes queued again once the store answered", { $0.statistics.retriedWrites }),
            ("queued_writes", "gauge", "Store writes waiting in the queue", { $0.queuedWrites }),
            ("held_back_writes", "gauge", "Failed store writes held back until the store answers", { $0.heldBackWrites }),
            ("breaker_state", "gauge", "The store's circuit breaker: 0 closed, 1 open, 2 half-open", { tier in
                switch tier.breakerState {
                case .closed: return 0
                case .open: return 1
                case .halfOpen: return 2
                }
            }),
        ]
        var text = ""
        for (name, type, help, value) in rows {
            text += "# HELP alcedo_store_\(name) \(help)\n# TYPE alcedo_store_\(name) \(type)\n"
            for store in stores { text += "alcedo_store_\(name){store=\"\(store.kind.rawValue)\"} \(value(store))\n" }
        }
        return text
    }

    /// The shared tier's counters, read from ``SharedCacheTier/statistics`` at each scrape.
    private func sharedTierText() -> String {
        guard let sharedTier else { return "" }
        let s = sharedTier.statistics
        let rows: [(String, String, Int)] = [
            ("hits", "Shared-tier lookups that found the entry (waits included)", s.hits),
            ("misses", "Shared-tier lookups that found nothing (failures included)", s.misses),
            ("errors", "Shared-tier operations that failed and were treated as misses", s.errors),
            ("read_bytes", "Bytes read from the shared tier", s.bytesRead),
            ("written_bytes", "Bytes stored in the shared tier", s.bytesWritten),
            ("stores", "Entries stored in the shared tier", s.stores),
            ("lock_acquired", "Work locks taken: this server did the work", s.locksAcquired),
            ("lock_waits", "Misses that waited for another server's work", s.lockWaits),
            ("lock_wait_hits", "Waits that ended with the other server's result", s.lockWaitHits),
            ("lock_wait_timeouts", "Waits that ran out and did the work here", s.lockWaitTimeouts),
        ]
        var text = ""
        for (name, help, value) in rows {
            text += "# HELP alcedo_shared_cache_\(name)_total \(help)\n# TYPE alcedo_shared_cache_\(name)_total counter\n"
            text += "alcedo_shared_cache_\(name)_total \(value)\n"
        }
        text += "# HELP alcedo_shared_cache_failing 1 while the shared tier is failing\n# TYPE alcedo_shared_cache_failing gauge\n"
        text += "alcedo_shared_cache_failing \(sharedTier.isFailing ? 1 : 0)\n"
        return text
    }
}
