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
    func traced(_ request: Request, route: String, _ body: () async -> Response) async -> Response {
        guard configuration.tracesRequests else { return await body() }
        var context = ServiceContext.topLevel
        if configuration.propagatesExternalTraceContext {
            InstrumentationSystem.instrument.extract(request.headers, into: &context, using: HTTPFieldsExtractor())
        }
        let method = request.method.rawValue
        let span = InstrumentationSystem.tracer.startSpan("\(method) \(route)", context: context, ofKind: .server)
        span.attributes["http.request.method"] = method
        span.attributes["http.route"] = route
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
