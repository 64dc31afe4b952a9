import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

/// Everything `alcedo serve` can be told; every property has the default stated on it.
public struct ImageServerConfiguration: Sendable {
    /// The address to listen on (default `127.0.0.1`).
    public var host: String = "127.0.0.1"
    /// The port (default 8080; 0 picks a free one).
    public var port: Int = 8080
    /// Listen with `SO_REUSEPORT`, so that other processes can listen on the same port and the
    /// kernel spreads connections over all of them (`alcedo serve --processes`). Default `false`.
    public var sharesPort = false
    /// The folder of the disk cache (default `nil`: the platform's cache folder, as ``ImageCache`` picks).
    public var cacheDirectory: URL?
    /// Key/salt pairs accepted for signatures, several for rotation (default none: unsigned
    /// URLs with `insecure` or `_`).
    public var keys: [SigningKey] = []
    /// URL prefixes sources must start with (default empty: any http(s) source).
    public var allowedSources: [String] = []
    /// Host names exempt from the address check, such as an internal origin (default none).
    public var trustedSourceHosts: Set<String> = []
    /// Allow sources on loopback, private, link-local, CGNAT, multicast and unspecified
    /// addresses (default `false`: refused with 403).
    public var allowPrivateNetworks = false
    /// The most source pixels, in megapixels, summed over all frames (default 50).
    public var maxSourceResolution: Double = 50
    /// The largest source body in bytes (default 32 MiB).
    public var maxSourceBytes: Int = 32 << 20
    /// The largest side of a result in pixels (default 8192).
    public var maxResultSide: Int = 8192
    /// How long a source download may take (default 15 s).
    public var downloadTimeout: Duration = .seconds(15)
    /// How long connecting to a source's host may take, within ``downloadTimeout`` (default
    /// 10 s; thumbor's `HTTP_LOADER_CONNECT_TIMEOUT`).
    public var connectTimeout: Duration = .seconds(10)
    /// How long writing one response may take, from its head to its last byte handed to the
    /// system (default 10 s, as imgproxy's `IMGPROXY_WRITE_RESPONSE_TIMEOUT`); a client that
    /// reads slower has its connection closed. `nil` or zero: no limit.
    public var writeResponseTimeout: Duration? = .seconds(10)
    /// How long an image request may take, from its arrival to its answer, before it is answered
    /// 503 (default `nil`: no limit; the download is bounded by ``downloadTimeout``), as imgproxy's
    /// `IMGPROXY_TIMEOUT`. The production goes on for the other requests of the same variant.
    public var requestTimeout: Duration?
    /// Requests processed at the same time (default: the number of cores).
    public var concurrency: Int = ProcessInfo.processInfo.activeProcessorCount
    /// Requests waiting for a processing slot beyond ``concurrency`` (default 256); more get 429.
    public var queueLength: Int = 256
    /// `Cache-Control: max-age` of image responses, in seconds (default one year, 31,536,000).
    public var ttl: Int = 31_536_000
    /// Named option lists for `preset:NAME` (default none), as `--preset NAME=OPTIONS` gives them.
    /// A preset named `default` applies to every URL before its own options; presets may use
    /// presets (a loop is cut with a warning).
    public var presets: [String: [String]] = [:]
    /// URLs name presets instead of options, `/SIGNATURE/PRESET[:PRESET…]/SOURCE` (default
    /// `false`; imgproxy's `IMGPROXY_ONLY_PRESETS`, `--only-presets`).
    public var onlyPresets = false
    /// Accept the security options `max_src_resolution`, `max_src_file_size`,
    /// `max_animation_frames`, `max_animation_frame_resolution` and `max_result_dimension` in
    /// URLs (default `false`: 403; imgproxy's `IMGPROXY_ALLOW_SECURITY_OPTIONS`, `--allow-security-options`).
    public var allowSecurityOptions = false
    /// The longest side of a result, padding and extension included: a larger result is
    /// scaled down to fit, as imgproxy's `IMGPROXY_MAX_RESULT_DIMENSION` (default 0: no limit).
    /// ``maxResultSide`` still refuses what is larger than it.
    public var maxResultDimension = 0
    /// The formats a result gets when the URL names none and no negotiation picks one, in
    /// order (default JPEG, PNG, GIF, as imgproxy's `IMGPROXY_PREFERRED_FORMATS`,
    /// `--preferred-formats`): a source in one of them keeps its format; any other source
    /// (WebP, AVIF, HEIC, TIFF…) gets the first that can hold the result: no alpha for JPEG,
    /// animation only for GIF and WebP.
    public var preferredFormats: [ImageFormat] = [.jpeg, .png, .gif]
    /// The image `watermark`/`wm` places (default `nil`: the option changes nothing), made from
    /// `--watermark-path`, `--watermark-url` or `--watermark-data` and `--watermark-opacity`.
    public var watermark: WatermarkImage?
    /// Serve WebP to clients that accept it when the URL names no format (default `true`).
    public var autoWebP = true
    /// Serve AVIF to clients that accept it when the URL names no format, preferred over WebP
    /// (default `false`, as imgproxy's `IMGPROXY_AUTO_AVIF`: the AV1 encode is the costliest step
    /// of a request, and its cost grows fast as ``avifSpeed`` goes down). See ``FormatNegotiation``
    /// for which sources and results it applies to.
    public var autoAVIF = false
    /// Serve JPEG XL to clients that accept it (`image/jxl`) when the URL names no format,
    /// preferred over AVIF and WebP, for still results (default `false`, as imgproxy's
    /// `IMGPROXY_AUTO_JXL`).
    public var autoJXL = false
    /// Remove scripts and event attributes from an SVG source served as SVG (default `true`, as
    /// imgproxy's `IMGPROXY_SANITIZE_SVG`); see ``SVGSanitizer``.
    public var sanitizeSVG = true
    /// Rasterise an SVG source even when the URL names no format, answering it in the
    /// negotiated or preferred format (default `false`: passed through as SVG, sanitized; as
    /// imgproxy's `IMGPROXY_ALWAYS_RASTERIZE_SVG`).
    public var alwaysRasterizeSVG = false
    /// The quality used when the URL sets none and ``formatQuality`` has no entry for the
    /// output format (default 80, as imgproxy's `IMGPROXY_QUALITY`).
    public var defaultQuality = 80
    /// The quality of a format when the URL sets none (default WebP 79, AVIF 63 and JPEG XL 77,
    /// as imgproxy's `IMGPROXY_FORMAT_QUALITY`); formats not listed (HEIC among them) use ``defaultQuality``.
    public var formatQuality: [ImageFormat: Int] = [.webp: 79, .avif: 63, .jxl: 77]
    /// The AV1 encoder's speed for AVIF results, 0 (slowest, smallest) to 10 (fastest)
    /// (default 8, as imgproxy's `IMGPROXY_AVIF_SPEED`).
    public var avifSpeed = 8
    /// Write JPEG results progressive (default `false`: baseline), as imgproxy's `IMGPROXY_JPEG_PROGRESSIVE`.
    public var progressiveJPEG = false
    /// libwebp's effort (its `method`) for WebP results, 1 (fastest) to 6 (smallest files)
    /// (default ``defaultWebPEffort``, 2; imgproxy's `IMGPROXY_WEBP_EFFORT` defaults to 4).
    /// A value set explicitly, 4 included, is used as given.
    public var webpEffort = Self.defaultWebPEffort
    /// The WebP effort used when none is set: 2. Measured with libwebp 1.2 on served-size
    /// photographs at quality 79 (`Benchmarks/Codecs/webp-knobs.py`), method 2 encodes in 0.37x
    /// the time of method 4 for about 5% more bytes and an SSIM within 0.002; method 1 saves little
    /// more time for 15-30% more bytes. In the serve benchmark (`Benchmarks/Serve/run-formats.sh`)
    /// WebP results at 2 come out 0.98x thumbor's bytes and 1.03x those of libvips at effort 4.
    public static let defaultWebPEffort = 2
    /// libwebp's content preset for WebP results (default `.default`, as imgproxy's `IMGPROXY_WEBP_PRESET`).
    public var webpPreset = WebPEncoder.Preset.default
    /// Set in each worker of `alcedo serve --processes N` (default `nil`): where every worker's own
    /// metrics are, so that a scrape of `/metrics` answers all of them (``WorkerMetrics``).
    public var workerMetrics: WorkerMetrics?
    /// Write PNG results Adam7-interlaced (default `false`, as imgproxy's `IMGPROXY_PNG_INTERLACED`).
    public var pngInterlaced = false
    /// Write PNG results as palette images of at most ``pngQuantizationColors`` colours
    /// (default `false`, as imgproxy's `IMGPROXY_PNG_QUANTIZE`); see ``PNGEncoder/quantizes``.
    public var pngQuantize = false
    /// The palette size of quantized PNG results, 2 to 256 (default 256, as imgproxy's
    /// `IMGPROXY_PNG_QUANTIZATION_COLORS`).
    public var pngQuantizationColors = 256
    /// Encoded results kept in memory for repeated requests, in bytes (default 64 MiB).
    public var resultCacheBytes = 64 << 20
    /// Decoded images kept in Alcedo's memory cache, in bytes (default 0: none). Repeats are
    /// served from the encoded results in memory (``resultCacheBytes``) and from the disk
    /// cache, which keeps each variant as the response's bytes; a decoded image in memory would
    /// have to be encoded again to be sent, and under load it cost about 150 MB of resident
    /// memory at 64 MiB for no gain in throughput.
    public var memoryCacheBytes = 0
    /// A cache tier shared with other servers, after memory and disk (default `nil`: none). With
    /// it, servers behind one load balancer download each source and make each variant once
    /// (`AlcedoRedis` provides one on Redis; `alcedo serve --redis` sets it). The server runs
    /// its own tier on this tier's storage and settings (so that each lookup is timed as a stage
    /// of its request): its counters are in `/metrics`, not in this tier's ``SharedCacheTier/statistics``.
    public var sharedCacheTier: SharedCacheTier?
    /// A permanent store of processed variants, after ``sharedCacheTier`` and before the source
    /// (default `nil`: none). Variants made here are written to it in the background, through
    /// its bounded queue; a store that is slow or down is a miss, never a failed request
    /// (`alcedo serve --result-storage s3://BUCKET/PREFIX` or `local:///PATH` sets it).
    public var resultStore: ObjectStoreTier?
    /// A permanent store of originals, consulted before a source is downloaded (default `nil`:
    /// none; `alcedo serve --source-storage` sets it). Originals downloaded here are written to
    /// it in the background, so a restarted or new server does not download them again.
    public var sourceStore: ObjectStoreTier?

    /// Read `s3://bucket/key` sources from this S3 or S3-compatible store (default `nil`: the
    /// `s3:` scheme is refused with 403). Its endpoint is not subject to the address check
    /// (``allowPrivateNetworks``): the operator chose it. Without credentials in it, they are
    /// looked for in the environment and the shared credentials file when the server starts
    /// (none found: unsigned requests).
    public var s3: S3Configuration?
    /// The folder `local:///path` sources are read from, and nothing outside it (default
    /// `nil`: the `local:` scheme is refused with 403). See ``LocalFolderImageDataLoader``.
    public var localRoot: URL?
    /// Where the server logs what it must not tell clients, such as why an object store refused
    /// access (default: a logger labelled `alcedo.serve`).
    public var logger = Logger(label: "alcedo.serve")
    /// The path prefix every route is served under, such as `/images` (default empty: none), as
    /// imgproxy's `IMGPROXY_PATH_PREFIX`: `/images/SIGNATURE/OPTIONS/SOURCE`, `/images/health`.
    /// Stored normalised: a leading `/` added, trailing `/`, query and fragment removed.
    public var pathPrefix = "" {
        didSet { pathPrefix = Self.normalizedPrefix(pathPrefix) }
    }
    /// How source URLs are rewritten before use: imgproxy's `IMGPROXY_URL_REPLACEMENTS` and
    /// `IMGPROXY_BASE_URL` (default: unchanged).
    public var sourceURLRewriter = SourceURLRewriter()
    /// Key/salt pairs accept signatures of this many bytes of the HMAC, 1...32 (default 32),
    /// as imgproxy's `IMGPROXY_SIGNATURE_SIZE`.
    public var signatureSize = 32
    /// Signatures accepted without checking, even with ``keys`` set (default none), as
    /// imgproxy's `IMGPROXY_TRUSTED_SIGNATURES`.
    public var trustedSignatures: Set<String> = []
    /// Address kinds sources may be on although ``allowPrivateNetworks`` is off (default none),
    /// as imgproxy's `IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES`, `…_PRIVATE_…` and `…_LINK_LOCAL_…`.
    public var allowedAddressKinds: Set<SourceGuard.AddressKind> = []
    /// The most redirects a source download follows (default 10; 0 follows none), as
    /// imgproxy's `IMGPROXY_MAX_REDIRECTS`.
    public var maxRedirects = 10
    /// The `User-Agent` of source downloads (default `Alcedo`), as imgproxy's `IMGPROXY_USER_AGENT`.
    public var userAgent = "Alcedo"
    /// Send `ETag` and answer `If-None-Match` (default `true`), as imgproxy's `IMGPROXY_USE_ETAG`.
    public var useETag = true
    /// Send `Last-Modified` (the source's) and answer `If-Modified-Since` (default `true`), as
    /// imgproxy's `IMGPROXY_USE_LAST_MODIFIED`.
    public var useLastModified = true
    /// Add imgproxy's debug headers to image responses (default `false`), as
    /// `IMGPROXY_ENABLE_DEBUG_HEADERS`: `X-Origin-Content-Length`, `X-Origin-Width`,
    /// `X-Origin-Height`, `X-Result-Width` and `X-Result-Height`.
    public var debugHeaders = false
    /// Serve WebP to clients that accept it even when the URL names a format (default `false`),
    /// as imgproxy's `IMGPROXY_ENFORCE_WEBP`; implies ``autoWebP``.
    public var enforceWebP = false
    /// Serve AVIF to clients that accept it even when the URL names a format, unless the
    /// result is animated (default `false`), as imgproxy's `IMGPROXY_ENFORCE_AVIF`; implies
    /// ``autoAVIF`` and wins over ``enforceWebP``.
    public var enforceAVIF = false
    /// Serve JPEG XL to clients that accept it even when the URL names another format, for a
    /// result that is not animated (default `false`; imgproxy's `IMGPROXY_ENFORCE_JXL`). Implies
    /// ``autoJXL`` and wins over ``enforceAVIF`` and ``enforceWebP``.
    public var enforceJXL = false
    /// Read the client hints `Sec-CH-DPR` (or `DPR`) and `Sec-CH-Width` (or `Width`) as the
    /// `dpr` and `width` a URL starts from (the width divided by the DPR), as imgproxy's
    /// `IMGPROXY_ENABLE_CLIENT_HINTS` does; the URL's own options still win (default `false`).
    public var clientHints = false
    /// The separator of option arguments in URLs (default `:`; imgproxy's `IMGPROXY_ARGUMENTS_SEPARATOR`).
    public var argumentsSeparator = ":"
    /// A base64-encoded source is followed by one more path segment, a file name, which is
    /// ignored (default `false`; imgproxy's `IMGPROXY_BASE64_URL_INCLUDES_FILENAME`).
    public var base64URLIncludesFilename = false
    /// The options every URL starts from before its own are applied (default: imgproxy's
    /// defaults, ``ProcessingOptions/init()``). imgproxy's `IMGPROXY_AUTO_ROTATE` and
    /// `IMGPROXY_STRIP_METADATA` set ``ProcessingOptions/autoRotate`` and
    /// ``ProcessingOptions/stripMetadata`` here.
    public var defaultOptions = ProcessingOptions()
    /// A second address serving only `/metrics` (default `nil`: `/metrics` is served on the
    /// main address). When set, the main address no longer answers `/metrics`, as imgproxy's
    /// `IMGPROXY_PROMETHEUS_BIND` keeps metrics off the public port.
    public var metricsAddress: BindAddress?
    /// The prefix of imgproxy's metric names (`NAMESPACE_requests_total`…; default empty:
    /// `requests_total`), as imgproxy's `IMGPROXY_PROMETHEUS_NAMESPACE`. Alcedo's own metrics stay
    /// `alcedo_*`; `alcedo` itself is refused, as its names would collide with them.
    public var prometheusNamespace = ""
    /// Whether `/metrics` carries imgproxy's metric names beside Alcedo's own, and each request's
    /// stages are timed into `alcedo_request_stage_duration_seconds` (default `true`). See ``ImgproxyMetrics``.
    public var imgproxyMetrics = true
    /// Told of every stage of every image request as it starts and ends (default `nil`): where
    /// a tracing backend attaches. See ``RequestStages``.
    public var stageObserver: (any RequestStageObserver)?
    /// The format of the log lines written by ``ImgproxyLogHandler`` when `alcedo serve` installs
    /// it (default `nil`: swift-log's handler, or the one the embedding application installed),
    /// as imgproxy's `IMGPROXY_LOG_FORMAT`. Informational here: the logging system is chosen
    /// once per process, before the configuration's ``logger`` is made.
    public var logFormat: ImgproxyLogFormat?
    /// Whether each image and info request writes its access line to ``logger`` when it is
    /// answered (default `true`): `info`, `warning` for a 4xx, `error` for a 5xx, so ``logLevel``
    /// `warning` keeps only the failures. See ``ImageService/finishRequest(_:response:path:stages:)``.
    public var logsRequests = true
    /// A token image and info requests must bring as `Authorization: Bearer TOKEN` (default
    /// `nil`: none); others get 403. imgproxy's `IMGPROXY_SECRET`.
    public var secret: String?
    /// Sent as `Access-Control-Allow-Origin` (with `Access-Control-Allow-Methods: GET, OPTIONS`)
    /// on image and info responses, and `OPTIONS` requests are answered 200 (default `nil`: no
    /// CORS headers). imgproxy's `IMGPROXY_ALLOW_ORIGIN`.
    public var allowOrigin: String?
    /// A second path answering like `/health`, under ``pathPrefix`` (default `nil`: none).
    /// imgproxy's `IMGPROXY_HEALTH_CHECK_PATH`.
    public var healthCheckPath: String?
    /// Whether each image and info request is a span of the tracer bootstrapped in
    /// `InstrumentationSystem` (swift-distributed-tracing), with a child span per stage and the
    /// trace context sent on to the origin (default `false`: no spans, no cost).
    /// imgproxy's `IMGPROXY_OPEN_TELEMETRY_ENABLE`.
    public var tracesRequests = false
    /// Whether a request's spans join the trace its W3C `traceparent` header names (default
    /// `false`: each request starts a trace of its own, so clients cannot pick trace IDs).
    /// imgproxy's `IMGPROXY_OPEN_TELEMETRY_PROPAGATE_EXTERNAL`.
    public var propagatesExternalTraceContext = false
    /// Mixed into every `ETag` (default empty): change it after a configuration change that
    /// alters results so clients and CDNs stop revalidating old ones. imgproxy's `IMGPROXY_ETAG_BUSTER`.
    public var etagBuster = ""
    // Memory (see "Sizing memory" in the Serving images article).
    /// The memory budget in bytes, the resident size the server keeps within: each request's
    /// working set is reserved from it before decoding, the caches' sizes and
    /// ``processMemoryShare`` are set aside from it (default ``defaultMaxMemory``: 75% of the
    /// control group's limit when there is one, else 256 MiB).
    public var maxMemory: Int = ImageServerConfiguration.defaultMaxMemory
    /// The part of ``maxMemory`` set aside for the process itself: code, the runtime,
    /// connections and the allocator's slack (default 48 MiB).
    public var processMemoryShare = 48 << 20
    /// Give freed memory back to the system after a burst of work and every 2 s while busy with
    /// more than 24 MiB free
    /// (glibc's `malloc_trim`), bound malloc's arenas to ``mallocArenas`` and give allocations
    /// of ``largeAllocationThreshold`` bytes and more pages of their own, while up to
    /// ``trimThreshold`` bytes free at the top of a heap stay there for the next request
    /// (default `true`).
    public var returnsFreedMemory = true
    /// The most glibc malloc arenas when ``returnsFreedMemory`` is on (default 2).
    public var mallocArenas = 2
    /// When ``returnsFreedMemory`` is on: allocations of this many bytes or more (pixel
    /// buffers, downloaded sources, encoded results) are mapped apart and returned to the
    /// system when freed (`M_MMAP_THRESHOLD`; default 4 MiB). Measured on a mixed load, it cut
    /// the peak resident size by about a quarter; smaller buffers (a 2000x1500 JPEG decoded at
    /// 1/2 is 3 MB) stay in malloc's heaps, where they are reused without page faults.
    public var largeAllocationThreshold = 4 << 20
    /// When ``returnsFreedMemory`` is on: the free bytes at the top of each of malloc's heaps
    /// that `free` keeps for the next request instead of giving them back at once
    /// (`M_TRIM_THRESHOLD`; default 8 MiB). glibc's own 128 KiB gives back and faults in again
    /// the few-MiB buffers of every thumbnail; the returns after bursts and while busy still
    /// give back everything free.
    public var trimThreshold = 8 << 20
    /// 75% of the control group's memory limit when there is one, else 256 MiB.
    public static var defaultMaxMemory: Int {
        ProcessMemory.controlGroupLimit.map { $0 / 4 * 3 } ?? 256 << 20
    }
    /// The earliest `Last-Modified` sent (default `nil`: the source's own): a result whose
    /// source is older, or has no date, is dated this, so clients and CDNs that revalidate
    /// with `If-Modified-Since` fetch it again after a configuration change. imgproxy's
    /// `IMGPROXY_LAST_MODIFIED_BUSTER`.
    public var lastModifiedBuster: Date?

    /// The image answered, processed with the request's options, when a source cannot be
    /// fetched or is not an image (default `nil`: the error is answered), as imgproxy's
    /// `IMGPROXY_FALLBACK_IMAGE_DATA`, `_PATH` and `_URL`. A source that loads but fails later
    /// (over a limit, a processing error) is still answered with its error.
    public var fallbackImage: Data?
    /// The status of a fallback answer (default 200; 0: the status the error would have had),
    /// as imgproxy's `IMGPROXY_FALLBACK_IMAGE_HTTP_CODE`.
    public var fallbackImageStatus = 200
    /// `Cache-Control: max-age` of a fallback answer in seconds (default `nil`: ``ttl``), as
    /// imgproxy's `IMGPROXY_FALLBACK_IMAGE_TTL`. Fallback answers carry no `ETag` or `Last-Modified`.
    public var fallbackImageTTL: Int?

    /// The processing option names URLs may use, as written (`w` and `width` are two names;
    /// presets' options are not checked); another answers 404 (default `nil`: every option), as
    /// imgproxy's `IMGPROXY_ALLOWED_PROCESSING_OPTIONS`.
    public var allowedProcessingOptions: Set<String>?
    /// Send `Link: <SOURCE>; rel="canonical"` with results of http(s) sources (default `false`),
    /// as imgproxy's `IMGPROXY_SET_CANONICAL_HEADER`.
    public var setCanonicalHeader = false

    /// The level of the HTTP server's log and ``logger`` (default `nil`: warnings and up from the
    /// HTTP server, ``logger``'s own level for the rest), as imgproxy's `IMGPROXY_LOG_LEVEL`.
    public var logLevel: Logger.Level? {
        didSet { if let logLevel { logger.logLevel = logLevel } }
    }

    /// The URL dialect image paths are read in (default ``URLDialect/imgproxy``).
    public var dialect: URLDialect = .imgproxy
    /// How thumbor URLs are read with ``dialect`` ``URLDialect/thumbor`` (default: unsafe URLs
    /// allowed, no security key, every built-in filter).
    public var thumbor = ThumborRules()

    /// The defaults.
    public init() {}

    /// The checks sources go through, made from ``allowPrivateNetworks``, ``allowedSources``,
    /// ``trustedSourceHosts``, ``allowedAddressKinds``, ``s3`` and ``localRoot``.
    public var sourceGuard: SourceGuard {
        SourceGuard(allowPrivateNetworks: allowPrivateNetworks, allowedSources: allowedSources, trustedHosts: trustedSourceHosts,
                    allowedAddressKinds: allowedAddressKinds, s3: s3, localRoot: localRoot)
    }

    /// `/a/b` from `a/b/`, `/a/b/` or `/a/b`; empty stays empty.
    static func normalizedPrefix(_ text: String) -> String {
        var prefix = text
        if let cut = prefix.firstIndex(where: { $0 == "?" || $0 == "#" }) { prefix = String(prefix[..<cut]) }
        while prefix.hasSuffix("/") { prefix.removeLast() }
        if !prefix.isEmpty, !prefix.hasPrefix("/") { prefix = "/" + prefix }
        return prefix
    }

    /// Parses `NAME=OPTIONS` (options separated by `/`, as in a URL) into ``presets``.
    /// - Throws: ``ServerConfigurationError/invalidPreset(_:)`` when there is no `=` or no name.
    public mutating func addPreset(_ text: String) throws(ServerConfigurationError) {
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else { throw .invalidPreset(text) }
        let name = String(text[..<equals])
        let options = text[text.index(after: equals)...].split(separator: "/").map(String.init)
        // A preset may name presets given after it: `pr:` segments are checked by
        // ``validatePresets()`` once all are known; the others are checked here.
        var probe = ProcessingOptions()
        var warnings: [String] = []
        let rules = ImgproxyParsingRules(allowSecurityOptions: true)
        for option in options where !(option.hasPrefix("pr:") || option.hasPrefix("preset:")) {
            do throws(ImgproxyURLError) {
                try probe.apply(segment: Substring(option), rules: rules, usedPresets: [], warnings: &warnings)
            } catch {
                throw .invalidPresetOption(name: name, error: error)
            }
        }
        presets[name] = options
    }

    /// Checks every preset with all presets known (presets may name presets defined after them;
    /// a loop is cut, as imgproxy does).
    /// - Throws: ``ServerConfigurationError/invalidPresetOption(name:error:)`` for a preset that
    ///   names an unknown preset or whose options do not parse.
    public func validatePresets() throws(ServerConfigurationError) {
        let rules = ImgproxyParsingRules(presets: presets, allowSecurityOptions: true)
        for name in presets.keys.sorted() {
            var probe = ProcessingOptions()
            var warnings: [String] = []
            do throws(ImgproxyURLError) {
                try probe.applyPresets([name], rules: rules, usedPresets: [], warnings: &warnings)
            } catch {
                throw .invalidPresetOption(name: name, error: error)
            }
        }
    }

    /// The quality a result in `format` gets when its URL sets none: ``formatQuality``, else
    /// ``defaultQuality``, kept within 1...100.
    public func quality(for format: ImageFormat) -> Int {
        min(100, max(1, formatQuality[format] ?? defaultQuality))
    }

    /// The rules URLs are parsed by: presets, ``onlyPresets``, ``allowSecurityOptions`` and
    /// ``defaultOptions``.
    public var parsingRules: ImgproxyParsingRules {
        var rules = ImgproxyParsingRules(presets: presets, allowSecurityOptions: allowSecurityOptions, onlyPresets: onlyPresets,
                                         defaults: defaultOptions)
        rules.argumentsSeparator = argumentsSeparator.isEmpty ? ":" : argumentsSeparator
        rules.base64URLIncludesFilename = base64URLIncludesFilename
        rules.allowedOptions = allowedProcessingOptions
        return rules
    }

    /// Parses imgproxy's `IMGPROXY_PREFERRED_FORMATS` form, `jpeg,png,gif`, into ``preferredFormats``.
    /// - Throws: ``ServerConfigurationError/invalidValue(_:message:)`` for a format Alcedo cannot write.
    public mutating func setPreferredFormats(_ names: [String]) throws(ServerConfigurationError) {
        var formats: [ImageFormat] = []
        for name in names {
            do throws(ImgproxyURLError) {
                let format = try ProcessingOptions.format(name.trimmingSpaces())
                if !formats.contains(format) { formats.append(format) }
            } catch {
                throw .invalidValue("preferred formats", message: "\"\(name)\" is not a format Alcedo writes")
            }
        }
        guard !formats.isEmpty else { throw .invalidValue("preferred formats", message: "the list is empty") }
        preferredFormats = formats
    }

    /// The format negotiation ``autoWebP`` and ``autoAVIF`` make (each also on when its
    /// ``enforceWebP`` or ``enforceAVIF`` is).
    public var negotiation: FormatNegotiation {
        var negotiation = FormatNegotiation(autoWebP: autoWebP || enforceWebP, autoAVIF: autoAVIF || enforceAVIF,
                                            autoJXL: autoJXL || enforceJXL, preferredFormats: preferredFormats)
        negotiation.rasterizesSVG = alwaysRasterizeSVG
        return negotiation
    }

    /// Parses imgproxy's `IMGPROXY_FORMAT_QUALITY` form, `avif=63,webp=79`, into ``formatQuality``
    /// (the formats named replace their entries; the others stay).
    /// - Throws: ``ServerConfigurationError/invalidValue(_:message:)`` for an unknown format or
    ///   a quality outside 1...100.
    ///
    /// `jxl`, which Alcedo does not write, is accepted and has no effect, so imgproxy's own
    /// default (`webp=79,avif=63,jxl=77`) can be given as it is.
    public mutating func setFormatQuality(_ text: String) throws(ServerConfigurationError) {
        for item in text.split(separator: ",") {
            let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingSpaces() }
            guard pair.count == 2, let format = ImageFormat(fileExtension: pair[0]),
                  [.jpeg, .png, .webp, .gif, .avif, .heic, .jxl, .tiff].contains(format) else {
                throw .invalidValue("format quality", message: "\"\(item)\" is not FORMAT=QUALITY with FORMAT jpeg, png, webp, gif, avif, heic, jxl or tiff")
            }
            guard let quality = Int(pair[1]), (1...100).contains(quality) else {
                throw .invalidValue("format quality", message: "\"\(pair[1])\" is not a quality in 1...100")
            }
            formatQuality[format] = quality
        }
    }

    /// The decoding limits the source limits make: ``maxSourceResolution`` over all frames.
    var decodingLimits: DecodingLimits {
        let pixels = Int(maxSourceResolution * 1_000_000)
        return DecodingLimits(maxPixelCount: pixels, maxFrameCount: DecodingLimits.default.maxFrameCount,
                              maxTotalBytes: pixels * 4)
    }
}

/// A configuration value that cannot be used.
public enum ServerConfigurationError: Error, Sendable, CustomStringConvertible {
    /// A key or salt that is not hex.
    case invalidHex(String, value: String)
    /// Keys and salts must come in pairs.
    case unpairedKeys(keys: Int, salts: Int)
    /// A preset without `NAME=`.
    case invalidPreset(String)
    /// A preset whose options do not parse.
    case invalidPresetOption(name: String, error: ImgproxyURLError)
    /// A value out of range.
    case invalidValue(String, message: String)

    public var description: String {
        switch self {
        case .invalidHex(let what, let value): return "the \(what) \"\(value)\" is not hex"
        case .unpairedKeys(let keys, let salts): return "\(keys) keys but \(salts) salts: give one salt per key"
        case .invalidPreset(let text): return "preset \"\(text)\" is not NAME=OPTIONS"
        case .invalidPresetOption(let name, let error): return "preset \"\(name)\": \(error)"
        case .invalidValue(let name, let message): return "\(name): \(message)"
        }
    }
}
