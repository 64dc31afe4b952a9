import Alcedo
import AlcedoServer
import Logging
import ServiceLifecycle
#if OpenTelemetry
import OTel
#endif

/// imgproxy's OpenTelemetry settings, as `alcedo serve` reads them: `IMGPROXY_OPEN_TELEMETRY_ENABLE`
/// turns request traces on (default off), `_PROPAGATE_EXTERNAL` joins a trace the client's
/// `traceparent` names (default off: every request starts its own trace), and the standard
/// `OTEL_*` variables say where and how spans go (`OTEL_EXPORTER_OTLP_ENDPOINT`,
/// `OTEL_EXPORTER_OTLP_PROTOCOL`, default `grpc` as imgproxy's, `OTEL_SERVICE_NAME`, default
/// `alcedo`, `OTEL_PROPAGATORS`, `OTEL_TRACES_SAMPLER`…). imgproxy 3's deprecated
/// `_ENDPOINT`, `_PROTOCOL`, `_SERVICE_NAME` and `_PROPAGATORS` fill in the standard ones
/// when those are unset. Metrics and logs stay with Prometheus and the log format:
/// `_ENABLE_METRICS` and `_ENABLE_LOGS` are named in a warning.
///
/// The exporter is swift-otel, built only with the package trait `OpenTelemetry`
/// (`make release OTEL=1`); without it, traces asked for are named in a warning and not sent.
struct OpenTelemetrySettings {
    /// Whether request traces are exported.
    var tracesEnabled = false
    /// Whether a client's trace context is joined.
    var propagatesExternal = false
    /// Settings that are read but not acted on, each with its reason, for one warning.
    var warnings: [String] = []
    /// The environment the exporter reads: the process's, with imgproxy 3's names mapped.
    var exporterEnvironment: [String: String]

    /// Whether this build can export traces.
    static var exporterBuiltIn: Bool {
        #if OpenTelemetry
        true
        #else
        false
        #endif
    }

    init(_ environment: ServeEnvironment, process: [String: String]) throws(ServerConfigurationError) {
        tracesEnabled = try environment.bool("OPEN_TELEMETRY_ENABLE") ?? false
        propagatesExternal = try environment.bool("OPEN_TELEMETRY_PROPAGATE_EXTERNAL") ?? false
        exporterEnvironment = process
        if try environment.bool("OPEN_TELEMETRY_ENABLE_METRICS") == true {
            warnings.append("OPEN_TELEMETRY_ENABLE_METRICS: metrics are served for Prometheus at /metrics, not sent over OTLP")
        }
        if try environment.bool("OPEN_TELEMETRY_ENABLE_LOGS") == true {
            warnings.append("OPEN_TELEMETRY_ENABLE_LOGS: logs go to standard error (IMGPROXY_LOG_FORMAT), not over OTLP")
        }
        if let generator = environment.string("OPEN_TELEMETRY_TRACE_ID_GENERATOR"), generator.lowercased() != "random" {
            warnings.append("OPEN_TELEMETRY_TRACE_ID_GENERATOR=\(generator): trace IDs are random (W3C), never X-Ray's")
        }
        // imgproxy 3's names, deprecated there since 3.23 in favour of the standard ones.
        if let endpoint = environment.string("OPEN_TELEMETRY_ENDPOINT"), process["OTEL_EXPORTER_OTLP_ENDPOINT"] == nil {
            // A host:port; the scheme follows the legacy protocol setting.
            let secure = environment.string("OPEN_TELEMETRY_PROTOCOL")?.lowercased() == "https"
            exporterEnvironment["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint.contains(literal: "://") ? endpoint
                : (secure ? "https://" : "http://") + endpoint
        }
        if let legacy = environment.string("OPEN_TELEMETRY_PROTOCOL"), process["OTEL_EXPORTER_OTLP_PROTOCOL"] == nil {
            exporterEnvironment["OTEL_EXPORTER_OTLP_PROTOCOL"] = legacy.lowercased() == "grpc" ? "grpc" : "http/protobuf"
        }
        if let name = environment.string("OPEN_TELEMETRY_SERVICE_NAME"), process["OTEL_SERVICE_NAME"] == nil {
            exporterEnvironment["OTEL_SERVICE_NAME"] = name
        }
        if let propagators = environment.string("OPEN_TELEMETRY_PROPAGATORS"), process["OTEL_PROPAGATORS"] == nil {
            exporterEnvironment["OTEL_PROPAGATORS"] = propagators
        }
        // imgproxy's own aliases of the standard protocol names.
        for name in ["OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] {
            if let value = exporterEnvironment[name]?.lowercased(), value == "http" || value == "https" {
                exporterEnvironment[name] = "http/protobuf"
            }
        }
        if tracesEnabled && !Self.exporterBuiltIn {
            warnings.append("OPEN_TELEMETRY_ENABLE: this alcedo was built without the OpenTelemetry trait, so no traces are sent "
                + "(build it with `make release OTEL=1`)")
        }
    }

    /// Starts the exporter when traces are on and built in, and returns the service that sends
    /// the spans (run it beside the server; it flushes on shutdown).
    func bootstrap(logger: Logger) throws -> (any Service)? {
        #if OpenTelemetry
        guard tracesEnabled else { return nil }
        var configuration = OTel.Configuration.default
        configuration.serviceName = "alcedo"
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        configuration.traces.enabled = true
        configuration.diagnosticLogger = .custom(logger)
        if exporterEnvironment["OTEL_EXPORTER_OTLP_PROTOCOL"] == nil && exporterEnvironment["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] == nil {
            configuration.traces.otlpExporter.protocol = .grpc   // imgproxy's default
        }
        return try OTel.bootstrap(configuration: configuration, environment: exporterEnvironment)
        #else
        return nil
        #endif
    }
}
