import Instrumentation
import ServiceContextModule

/// Sends the current trace context on with origin requests: when a request runs inside a span
/// (`ServiceContext.current` is set, as `alcedo serve` sets it with tracing on), the instrument
/// bootstrapped in `InstrumentationSystem` writes its headers (W3C `traceparent` and
/// `tracestate` with OpenTelemetry's) into the request. Outside a span nothing is added and
/// nothing is paid beyond one task-local read.
enum TraceContextPropagation {
    /// `headers` with the current trace context's headers added (replacing any of the same name).
    static func adding(to headers: HTTPHeaderFields) -> HTTPHeaderFields {
        guard let context = ServiceContext.current else { return headers }
        var carrier = headers
        InstrumentationSystem.instrument.inject(context, into: &carrier, using: HeaderFieldsInjector())
        return carrier
    }

    private struct HeaderFieldsInjector: Injector {
        func inject(_ value: String, forKey key: String, into carrier: inout HTTPHeaderFields) {
            carrier[key] = value
        }
    }
}
