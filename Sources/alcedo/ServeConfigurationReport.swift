import Alcedo
import AlcedoServer
import Logging
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What `alcedo serve --print-config` prints: every setting looked up, one per line, with its
/// effective value and where it came from (`--flag`, `ALCEDO_*`, `IMGPROXY_*` or `default`).
/// Keys, salts and trusted signatures are counted, never shown.
struct ServeConfigurationReport {
    let configuration: ImageServerConfiguration
    let environment: ServeEnvironment
    /// Values of settings kept outside the configuration (by setting name).
    var extra: [String: String] = [:]

    /// The lines, `NAME  VALUE  SOURCE`, in the order the settings were read.
    var text: String {
        let rows = environment.names.map { name in
            (name, value(of: name), environment.sources[name] ?? environment.origin(of: name) ?? "default")
        }
        let nameWidth = rows.map(\.0.count).max() ?? 0
        let valueWidth = min(48, rows.map(\.1.count).max() ?? 0)
        return rows.map { name, value, source in
            name.padded(to: nameWidth) + "  "
                + (value.count < valueWidth ? value.padded(to: valueWidth) : value)
                + "  " + source + "\n"
        }.joined()
    }

    /// The effective value of setting `name` as text.
    func value(of name: String) -> String {
        if let text = extra[name] { return text }
        if let known = values[name] { return known }
        // A setting this report does not know: its raw text, where the environment gave one.
        guard let origin = environment.origin(of: name), let raw = environment.values[origin] else { return "(unset)" }
        return raw
    }

    private var values: [String: String] {
        let c = configuration
        func list(_ items: [String]) -> String { items.isEmpty ? "(none)" : items.joined(separator: ",") }
        func yes(_ value: Bool) -> String { value ? "true" : "false" }
        func number(_ value: Double) -> String { value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value) }
        let kinds = c.allowedAddressKinds
        var formatQualities = c.formatQuality.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue)=\($0.value)" }
        if formatQualities.isEmpty { formatQualities = ["(none)"] }
        let seconds = Double(c.downloadTimeout.components.seconds) + Double(c.downloadTimeout.components.attoseconds) / 1e18
        return [
            "DIALECT": c.dialect.rawValue,
            "THUMBOR_CONFIG": environment.origin(of: "THUMBOR_CONFIG").flatMap { environment.values[$0] } ?? "(none)",
            "THUMBOR_SECURITY_KEY": c.thumbor.securityKey == nil ? "(none: signed thumbor URLs refused)" : "(set, not shown)",
            "THUMBOR_ALLOW_UNSAFE_URL": yes(c.thumbor.allowUnsafe),
            "THUMBOR_MAX_WIDTH": String(c.thumbor.maxWidth),
            "THUMBOR_MAX_HEIGHT": String(c.thumbor.maxHeight),
            "THUMBOR_FILTERS": c.thumbor.filters.map { $0.sorted().joined(separator: ",") } ?? "(every built-in filter)",
            "THUMBOR_AUTO_PNG_TO_JPG": yes(c.thumbor.autoPNGToJPG),
            "HOST": c.host,
            "PORT": String(c.port),
            "CACHE_DIR": c.cacheDirectory?.path ?? "(the platform's cache folder)",
            "KEY": c.keys.isEmpty ? "(none: unsigned URLs)" : "\(c.keys.count) (not shown)",
            "SALT": c.keys.isEmpty ? "(none)" : "\(c.keys.count) (not shown)",
            "SIGNATURE_SIZE": String(c.signatureSize),
            "TRUSTED_SIGNATURES": c.trustedSignatures.isEmpty ? "(none)" : "\(c.trustedSignatures.count) (not shown)",
            "ALLOWED_SOURCES": list(c.allowedSources),
            "ALLOW_PRIVATE_NETWORKS": yes(c.allowPrivateNetworks),
            "ALLOW_LOOPBACK_SOURCE_ADDRESSES": yes(c.allowPrivateNetworks || kinds.contains(.loopback)),
            "ALLOW_PRIVATE_SOURCE_ADDRESSES": yes(c.allowPrivateNetworks || kinds.contains(.private)),
            "ALLOW_LINK_LOCAL_SOURCE_ADDRESSES": yes(c.allowPrivateNetworks || kinds.contains(.linkLocal)),
            "TRUSTED_SOURCE_HOST": list(c.trustedSourceHosts.sorted()),
            "MAX_SRC_RESOLUTION": number(c.maxSourceResolution) + " MP",
            "MAX_SRC_BYTES": String(c.maxSourceBytes),
            "MAX_ANIMATION_FRAMES": c.defaultOptions.security.maxAnimationFrames.map(String.init) ?? "(every frame)",
            "MAX_ANIMATION_FRAME_RESOLUTION": c.defaultOptions.security.maxAnimationFrameResolution.map { number($0) + " MP" } ?? "0 (no limit)",
            "MAX_RESULT_SIDE": String(c.maxResultSide),
            "DOWNLOAD_TIMEOUT": number(seconds) + " s",
            "CONNECT_TIMEOUT": number(Double(c.connectTimeout.components.seconds) + Double(c.connectTimeout.components.attoseconds) / 1e18) + " s",
            "WRITE_RESPONSE_TIMEOUT": c.writeResponseTimeout.map { number(Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18) + " s" }
                ?? "0 (no limit)",
            "TIMEOUT": c.requestTimeout.map { number(Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18) + " s" }
                ?? "(no limit)",
            "MAX_REDIRECTS": String(c.maxRedirects),
            "USER_AGENT": c.userAgent,
            "CONCURRENCY": String(c.concurrency),
            "QUEUE": String(c.queueLength),
            "TTL": String(c.ttl),
            "FALLBACK_IMAGE_DATA": c.fallbackImage.map { "\($0.count) bytes" } ?? "(none)",
            "FALLBACK_IMAGE_PATH": c.fallbackImage.map { "\($0.count) bytes" } ?? "(none)",
            "FALLBACK_IMAGE_URL": c.fallbackImage.map { "\($0.count) bytes" } ?? "(none)",
            "FALLBACK_IMAGE_HTTP_CODE": c.fallbackImageStatus == 0 ? "0 (the error's status)" : String(c.fallbackImageStatus),
            "FALLBACK_IMAGE_TTL": c.fallbackImageTTL.map(String.init) ?? "(the TTL: \(c.ttl))",
            "AUTO_WEBP": yes(c.autoWebP),
            "AUTO_AVIF": yes(c.autoAVIF),
            "ENFORCE_WEBP": yes(c.enforceWebP),
            "ENFORCE_AVIF": yes(c.enforceAVIF),
            "ENFORCE_JXL": yes(c.enforceJXL),
            "ENABLE_CLIENT_HINTS": yes(c.clientHints),
            "ARGUMENTS_SEPARATOR": c.argumentsSeparator,
            "BASE64_URL_INCLUDES_FILENAME": yes(c.base64URLIncludesFilename),
            "SKIP_PROCESSING_FORMATS": c.defaultOptions.skipProcessing.map(\.rawValue).joined(separator: ","),
            "QUALITY": String(c.defaultQuality),
            "FORMAT_QUALITY": formatQualities.joined(separator: ","),
            "AVIF_SPEED": String(c.avifSpeed),
            "USE_ETAG": yes(c.useETag),
            "USE_LAST_MODIFIED": yes(c.useLastModified),
            "ENABLE_DEBUG_HEADERS": yes(c.debugHeaders),
            "AUTO_ROTATE": yes(c.defaultOptions.autoRotate),
            "STRIP_METADATA": yes(c.defaultOptions.stripMetadata),
            "KEEP_COPYRIGHT": yes(c.defaultOptions.keepCopyright != false),
            "ENFORCE_THUMBNAIL": yes(c.defaultOptions.enforceThumbnail == true),
            "ALWAYS_RASTERIZE_SVG": yes(c.alwaysRasterizeSVG),
            "STRIP_COLOR_PROFILE": yes(c.defaultOptions.stripColorProfile != false),
            "RETURN_ATTACHMENT": yes(c.defaultOptions.returnAttachment),
            "SET_CANONICAL_HEADER": yes(c.setCanonicalHeader),
            "LOG_LEVEL": c.logLevel.map { $0 == .warning ? "warn" : $0.rawValue } ?? "(warn from the HTTP server, info from the rest)",
            "JPEG_PROGRESSIVE": yes(c.progressiveJPEG),
            "WEBP_EFFORT": String(c.webpEffort),
            "WEBP_PRESET": "\(c.webpPreset)",
            "PNG_INTERLACED": yes(c.pngInterlaced),
            "PNG_QUANTIZE": yes(c.pngQuantize),
            "PNG_QUANTIZATION_COLORS": String(c.pngQuantizationColors),
            "ALLOWED_PROCESSING_OPTIONS": c.allowedProcessingOptions.map { $0.sorted().joined(separator: ",") } ?? "(all)",
            "PATH_PREFIX": c.pathPrefix.isEmpty ? "(none)" : c.pathPrefix,
            "BASE_URL": c.sourceURLRewriter.baseURL.isEmpty ? "(none)" : c.sourceURLRewriter.baseURL,
            "URL_REPLACEMENTS": c.sourceURLRewriter.replacements.isEmpty ? "(none)"
                : c.sourceURLRewriter.replacements.map { "\($0.pattern)=\($0.replacement)" }.joined(separator: ";"),
            "PROMETHEUS_BIND": c.metricsAddress?.description ?? "(none: /metrics on the main address)",
            "PROMETHEUS_NAMESPACE": c.prometheusNamespace.isEmpty ? "(none)" : c.prometheusNamespace,
            "IMGPROXY_METRICS": yes(c.imgproxyMetrics),
            "LOG_FORMAT": c.logFormat?.rawValue ?? "(swift-log's plain lines)",
            "SECRET": c.secret == nil ? "(none)" : "(set, not shown)",
            "ALLOW_ORIGIN": c.allowOrigin ?? "(none: no CORS headers)",
            "HEALTH_CHECK_PATH": c.healthCheckPath ?? "(none)",
            "ETAG_BUSTER": c.etagBuster.isEmpty ? "(none)" : c.etagBuster,
            "LAST_MODIFIED_BUSTER": c.lastModifiedBuster.map { HTTPDate.string(from: $0) } ?? "(none)",
            "RESULT_CACHE_BYTES": String(c.resultCacheBytes),
            "RESULT_STORAGE": c.resultStore?.store.location.description ?? "(none)",
            "SOURCE_STORAGE": c.sourceStore?.store.location.description ?? "(none)",
            "RESULT_STORAGE_TTL": String((c.resultStore ?? c.sourceStore)?.config.ttl.components.seconds
                                            ?? ObjectStoreTier.Config().ttl.components.seconds),
            "RESULT_STORAGE_TIMEOUT": String(Int(((c.resultStore ?? c.sourceStore)?.config.readTimeout
                                                  ?? ObjectStoreTier.Config().readTimeout) / .milliseconds(1))),
            "RESULT_STORAGE_QUEUE": String((c.resultStore ?? c.sourceStore)?.config.queueCapacity ?? ObjectStoreTier.Config().queueCapacity),
            "MEMORY_CACHE_BYTES": String(c.memoryCacheBytes),
            "LARGE_ALLOCATION_THRESHOLD": String(c.largeAllocationThreshold >> 10),
            "TRIM_THRESHOLD": String(c.trimThreshold >> 10),
            "PRESET": c.presets.isEmpty ? "(none)" : c.presets.keys.sorted().joined(separator: ","),
            "PRESETS_PATH": environment.origin(of: "PRESETS_PATH").flatMap { environment.values[$0] } ?? "(none)",
            "PRESETS_SEPARATOR": environment.origin(of: "PRESETS_SEPARATOR").flatMap { environment.values[$0] } ?? ",",
        ]
    }
}
