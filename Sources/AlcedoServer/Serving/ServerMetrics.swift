import Alcedo
import Foundation
import Prometheus
import Synchronization

/// The server's metrics in a Prometheus registry of its own, served at `/metrics`:
/// requests by status, processing time, cache hits by tier, in-flight and queued requests,
/// source bytes, and how many sources were loaded and variants produced.
public final class ServerMetrics: Sendable {
    /// The registry (one per server; pass it to a `PrometheusMetricsFactory` to add your own).
    public let registry = PrometheusCollectorRegistry()
    private let statusCounters = Mutex<[Int: Counter]>([:])
    private let tierCounters = Mutex<[String: Counter]>([:])
    let processingTime: DurationHistogram
    let inFlight: Gauge
    let queued: Gauge
    let sourceBytes: Counter
    let variantsProduced: Counter
    private let produced = Atomic<Int>(0)
    private let waiting = Atomic<Int>(0)

    init() {
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
    }

    private static func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "alcedo", metricName: metric, unitName: unit, helpText: help)
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

    /// Requests waiting for a processing slot now.
    public var queuedCount: Int { waiting.load(ordering: .relaxed) }

    func recordProduced() {
        variantsProduced.increment()
        produced.add(1, ordering: .relaxed)
    }

    /// How many results were produced through the pipeline since start (each distinct
    /// variant once while it stays in the result cache).
    public var producedCount: Int { produced.load(ordering: .relaxed) }

    /// The metrics in Prometheus' text format.
    public func text() -> String { registry.emitToString() }
}
