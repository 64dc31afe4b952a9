import HTTPTypes
import Hummingbird
import Tracing

/// Request spans (``ImageServerConfiguration/tracesRequests``): one server span per image or
/// info request on the tracer `InstrumentationSystem` holds, named by method and route as
/// OpenTelemetry's HTTP conventions name them, with the status and the outcome. The span's
/// context is the task's `ServiceContext` while the request runs, so stage spans and the
/// origin request's `traceparent` descend from it.
extension ImageService {
    /// Runs `body` inside the request's span when tracing is on; otherwise runs it as it is.
    /// The span carries `requestID` (the `X-Request-ID` answered) as `alcedo.request_id`.
    func traced(_ request: Request, route: String, requestID: String, _ body: () async -> Response) async -> Response {
        guard configuration.tracesRequests else { return await body() }
        var context = ServiceContext.topLevel
        if configuration.propagatesExternalTraceContext {
            InstrumentationSystem.instrument.extract(request.headers, into: &context, using: HTTPFieldsExtractor())
        }
        let method = request.method.rawValue
        let span = InstrumentationSystem.tracer.startSpan("\(method) \(route)", context: context, ofKind: .server)
        span.attributes["http.request.method"] = method
        span.attributes["http.route"] = route
        span.attributes["alcedo.request_id"] = requestID
        span.attributes["server.address"] = request.head.authority
        if let agent = request.headers[.userAgent] { span.attributes["user_agent.original"] = agent }
        let response = await ServiceContext.$current.withValue(span.context) { await body() }
        let status = Int(response.status.code)
        span.attributes["http.response.status_code"] = status
        if status >= 500 {
            span.attributes["error.type"] = String(status)
            span.setStatus(SpanStatus(code: .error))
        }
        span.end()
        return response
    }
}

/// Reads trace context headers (`traceparent`, `tracestate`, `baggage`…) from a request.
struct HTTPFieldsExtractor: Extractor {
    func extract(key: String, from carrier: HTTPFields) -> String? {
        guard let name = HTTPField.Name(key) else { return nil }
        return carrier[name]
    }
}

/// Turns a request's stages into child spans of its server span
/// (``ImageServerConfiguration/tracesRequests``): `queue`, `memory_budget`, the cache tiers,
/// `download` (with the origin's status and bytes), `decode`, `process`, `encode`…, each
/// with its own start and end, its attributes and its error. Used when tracing is on and no
/// other ``ImageServerConfiguration/stageObserver`` is set; a stage outside a traced request
/// (no current `ServiceContext`) makes no span.
public struct TracingStageObserver: RequestStageObserver {
    /// An observer that sends stage spans to the tracer `InstrumentationSystem` holds.
    public init() {}

    public func stageStarted(_ name: StageName, at start: ContinuousClock.Instant, request: RequestStages) {}

    public func stageEnded(_ record: StageRecord, request: RequestStages) {
        guard let parent = ServiceContext.current else { return }
        // Stages are timed on the continuous clock; spans carry wall-clock times.
        let wallNow = DefaultTracerClock.now.nanosecondsSinceEpoch
        let now = ContinuousClock.now
        func wall(_ instant: ContinuousClock.Instant) -> WallInstant {
            let (seconds, attoseconds) = (now - instant).components
            let ago = max(0, seconds) * 1_000_000_000 + attoseconds / 1_000_000_000
            return WallInstant(nanosecondsSinceEpoch: wallNow &- min(wallNow, UInt64(max(0, ago))))
        }
        let span = InstrumentationSystem.tracer.startSpan(record.name.rawValue, context: parent, ofKind: .internal,
                                                          at: wall(record.start))
        span.attributes["alcedo.request_id"] = request.requestID
        for (key, value) in record.attributes { span.attributes["alcedo." + key] = value }
        if let error = record.error {
            span.attributes["error.type"] = error
            span.setStatus(SpanStatus(code: .error, message: error))
        }
        span.end(at: wall(record.end))
    }
}

/// A wall-clock instant for a span's start or end.
struct WallInstant: TracerInstant {
    let nanosecondsSinceEpoch: UInt64
    static func < (lhs: WallInstant, rhs: WallInstant) -> Bool { lhs.nanosecondsSinceEpoch < rhs.nanosecondsSinceEpoch }
}
