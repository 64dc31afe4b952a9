import Prometheus
import Synchronization

/// imgproxy's Prometheus metrics, under imgproxy's names, labels, help texts and buckets, beside
/// Alcedo's own `alcedo_*` ones, so that dashboards and alerts made for imgproxy keep working.
///
/// imgproxy 4's `requests_total`, `status_codes_total{status}`, `errors_total{type}`,
/// `request_duration_seconds`, `request_span_duration_seconds{span}`, `workers`,
/// `requests_in_progress`, `images_in_progress` and `workers_utilization`; imgproxy 3's
/// `download_duration_seconds`, `processing_duration_seconds` and `buffer_size_bytes{type="download"}`.
/// Each is prefixed with ``ImageServerConfiguration/prometheusNamespace`` and `_` when that is
/// set, as imgproxy's `IMGPROXY_PROMETHEUS_NAMESPACE`.
///
/// Spans (`request_span_duration_seconds{span}`) carry imgproxy 4's names: `queue` (waiting
/// for a processing slot and for memory), `downloading_source_image` (the source fetch),
/// `processing_image` (decoding, processing and encoding) and `streaming_image` (`raw`).
/// Alcedo's finer stages are in `alcedo_request_stage_duration_seconds{stage}`.
final class ImgproxyMetrics: Sendable {
    /// Prometheus' default buckets, which imgproxy's histograms use.
    static let defaultBuckets: [Duration] = [.milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
                                             .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
                                             .seconds(2.5), .seconds(5), .seconds(10)]
    /// imgproxy 4's span names, by the stage each is made of.
    static let spanNames = ["queue", "downloading_source_image", "processing_image", "streaming_image"]

    let requests: Counter
    private let registry: PrometheusCollectorRegistry
    private let namespace: String
    private let statusCounters = Mutex<[Int: Counter]>([:])
    private let errorCounters = Mutex<[String: Counter]>([:])
    let requestDuration: DurationHistogram
    private let spans: [String: DurationHistogram]
    let downloadDuration: DurationHistogram
    let processingDuration: DurationHistogram
    let downloadBufferSize: ValueHistogram
    private let workers: Gauge
    private let requestsInProgress: Gauge
    private let imagesInProgress: Gauge
    private let workersUtilization: Gauge
    private let workerCount: Int
    private let inProgress = Atomic<Int>(0)

    /// Registers the metrics in `registry`, named with `namespace` (empty: none), for `workerCount`
    /// processing slots.
    init(registry: PrometheusCollectorRegistry, namespace: String, workerCount: Int) {
        self.registry = registry
        self.namespace = namespace
        self.workerCount = workerCount
        func name(_ metric: String, _ help: String) -> MetricNameDescriptor {
            MetricNameDescriptor(namespace: namespace, metricName: metric, unitName: "", helpText: help)
        }
        let buckets = Self.defaultBuckets
        requests = registry.makeCounter(descriptor: name("requests_total", "A counter of the total number of HTTP requests imgproxy processed."))
        requestDuration = registry.makeDurationHistogram(descriptor: name("request_duration_seconds", "A histogram of the response latency."),
                                                         buckets: buckets)
        var spans: [String: DurationHistogram] = [:]
        for span in Self.spanNames {
            spans[span] = registry.makeDurationHistogram(
                descriptor: name("request_span_duration_seconds", "A histogram of the request spans duration separated by span name."),
                labels: [("span", span)], buckets: buckets)
        }
        self.spans = spans
        downloadDuration = registry.makeDurationHistogram(
            descriptor: name("download_duration_seconds", "A histogram of the source image downloading latency."), buckets: buckets)
        processingDuration = registry.makeDurationHistogram(
            descriptor: name("processing_duration_seconds", "A histogram of the image processing latency."), buckets: buckets)
        // prometheus.ExponentialBuckets(1024, 2, 14): 1 KiB to 8 MiB.
        downloadBufferSize = registry.makeValueHistogram(descriptor: name("buffer_size_bytes", "A histogram of the buffer size in bytes."),
                                                         labels: [("type", "download")], buckets: (0..<14).map { 1024 * Double(1 << $0) })
        workers = registry.makeGauge(descriptor: name("workers", "A gauge of the number of running workers."))
        requestsInProgress = registry.makeGauge(
            descriptor: name("requests_in_progress", "A gauge of the number of requests currently being in progress."))
        imagesInProgress = registry.makeGauge(
            descriptor: name("images_in_progress", "A gauge of the number of images currently being in progress."))
        workersUtilization = registry.makeGauge(descriptor: name("workers_utilization", "A gauge of the workers utilization in percents."))
        workers.record(Int64(workerCount))
    }

    /// The name of metric `metric` in the namespace.
    private func descriptor(_ metric: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: namespace, metricName: metric, unitName: "", helpText: help)
    }

    /// A request arrived.
    func requestStarted() {
        requests.increment()
        inProgress.add(1, ordering: .relaxed)
    }

    /// A request was answered with `status` after `duration`, with the stages in `stages`.
    func requestFinished(status: Int, duration: Duration, stages: RequestStages?) {
        inProgress.subtract(1, ordering: .relaxed)
        let counter = statusCounters.withLock { counters in
            if let counter = counters[status] { return counter }
            let counter = registry.makeCounter(descriptor: descriptor("status_codes_total", "A counter of the response status codes."),
                                               labels: [("status", String(status))])
            counters[status] = counter
            return counter
        }
        counter.increment()
        requestDuration.record(duration)
        guard let stages else { return }
        if let failure = stages.failure { recordError(type: failure.type) }
        var processing = Duration.zero, processed = false
        for record in stages.records {
            switch record.name {
            case .queue, .memoryBudget:
                spans["queue"]?.record(record.duration)
            case .download:
                spans["downloading_source_image"]?.record(record.duration)
                downloadDuration.record(record.duration)
            case .decode, .process, .encode:
                processing += record.duration
                processed = true
            case .stream:
                spans["streaming_image"]?.record(record.duration)
            default:
                if record.name.rawValue.hasPrefix("process:") {
                    processing += record.duration
                    processed = true
                }
            }
        }
        if processed {
            spans["processing_image"]?.record(processing)
            processingDuration.record(processing)
        }
    }

    /// Counts an error of imgproxy's `type`.
    func recordError(type: String) {
        let counter = errorCounters.withLock { counters in
            if let counter = counters[type] { return counter }
            let counter = registry.makeCounter(descriptor: descriptor("errors_total", "A counter of the occurred errors separated by type."),
                                               labels: [("type", type)])
            counters[type] = counter
            return counter
        }
        counter.increment()
    }

    /// Sets the gauges read at a scrape: `images` productions running now.
    func updateGauges(images: Int) {
        let requests = inProgress.load(ordering: .relaxed)
        requestsInProgress.record(Int64(requests))
        imagesInProgress.record(Int64(images))
        workersUtilization.record(workerCount == 0 ? 0 : Double(requests) / Double(workerCount) * 100)
    }
}
