import Alcedo
import AlcedoRedis
import AlcedoServer
import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Logging

/// `alcedo serve`: wires flags (or `ALCEDO_<FLAG>` environment variables) to AlcedoServer.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve resized, re-encoded, cached images over HTTP with imgproxy's URL format.",
        discussion: """
            URLs: /SIGNATURE/OPTIONS/plain/PERCENT-ENCODED-URL[@EXT] or /SIGNATURE/OPTIONS/BASE64URL[.EXT], \
            with imgproxy's processing options (rs:fill:300:200, q:80, f:webp, f:avif, g:sm, …); /health, /metrics and \
            /info/SIGNATURE/OPTIONS/SOURCE as well. Without --key, any signature segment is accepted ("insecure", "unsafe"). \
            Every option can also be set by an environment variable ALCEDO_<OPTION> (for example \
            ALCEDO_PORT=9000, ALCEDO_ALLOW_PRIVATE_NETWORKS=1; lists separated by commas), and by \
            imgproxy's IMGPROXY_* variables (IMGPROXY_KEY, IMGPROXY_BIND, IMGPROXY_WORKERS, …); a flag wins \
            over ALCEDO_*, which wins over IMGPROXY_*. An IMGPROXY_* variable that is set but not \
            supported is named in one warning line at start. --print-config prints every setting with \
            where its value came from and exits. Prints "listening on http://HOST:PORT" once listening; \
            SIGTERM or SIGINT lets in-flight requests finish (up to 10 s) and exits 0. \
            Sources may also be s3://BUCKET/KEY with --s3 (credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, \
            ~/.aws/credentials or the --s3-* flags) and local:///PATH under --local-root DIR.
            """
    )

    @Option(help: ArgumentHelp("The URL dialect: imgproxy or thumbor (default imgproxy).", valueName: "name"))
    var dialect: String?
    @Option(help: ArgumentHelp("thumbor's SECURITY_KEY, which signs thumbor URLs (also $THUMBOR_SECURITY_KEY, imagor's $IMAGOR_SECRET).",
                               valueName: "key"))
    var thumborSecurityKey: String?
    @Option(help: ArgumentHelp("Accept thumbor's /unsafe/ URLs (thumbor's ALLOW_UNSAFE_URL; default true).", valueName: "bool"))
    var thumborAllowUnsafeUrl: Bool?
    @Option(help: ArgumentHelp("A thumbor.conf whose plain NAME = value lines are read (never run) for the keys Alcedo supports; the others are named in one warning.",
                               valueName: "file"))
    var thumborConfig: String?
    @Option(help: ArgumentHelp("thumbor's MAX_WIDTH: requested widths above it are lowered to it (default 0: none).", valueName: "px"))
    var thumborMaxWidth: Int?
    @Option(help: ArgumentHelp("thumbor's MAX_HEIGHT: requested heights above it are lowered to it (default 0: none).", valueName: "px"))
    var thumborMaxHeight: Int?
    @Option(help: ArgumentHelp("thumbor's FILTERS: the filter names URLs may use, comma-separated (default: every built-in filter).",
                               valueName: "list"))
    var thumborFilters: String?
    @Option(help: ArgumentHelp("thumbor's AUTO_PNG_TO_JPG: a PNG source whose result has no transparent pixel is answered as JPEG when the URL names no format (default false).",
                               valueName: "bool"))
    var thumborAutoPngToJpg: Bool?
    @Option(help: "The address to listen on (default 127.0.0.1).")
    var host: String?
    @Option(help: "The port (default 8080; 0 picks a free one).")
    var port: Int?
    @Option(help: ArgumentHelp("The disk cache folder (default: the platform's cache folder).", valueName: "dir"))
    var cacheDir: String?
    @Option(help: ArgumentHelp("A hex signing key; repeat with --salt for rotation.", valueName: "hex"))
    var key: [String] = []
    @Option(help: ArgumentHelp("The hex salt of the --key at the same position.", valueName: "hex"))
    var salt: [String] = []
    @Option(help: ArgumentHelp("Only serve sources whose URL starts with this prefix (repeatable).", valueName: "prefix"))
    var allowedSources: [String] = []
    @Flag(help: "Allow sources on loopback, private, link-local, CGNAT, multicast and unspecified addresses.")
    var allowPrivateNetworks = false
    @Option(help: ArgumentHelp("A host exempt from the address check, such as an internal origin (repeatable).", valueName: "host"))
    var trustedSourceHost: [String] = []
    @Option(help: ArgumentHelp("The most source megapixels, summed over frames (default 50).", valueName: "MP"))
    var maxSrcResolution: Double?
    @Option(help: ArgumentHelp("The largest source in bytes (default 33554432).", valueName: "N"))
    var maxSrcBytes: Int?
    @Option(help: ArgumentHelp("The default of max_animation_frames: frames of an animated source processed; 1 makes it a still image, its first frame (default: every frame; imgproxy: 1).",
                               valueName: "N"))
    var maxAnimationFrames: Int?
    @Option(help: ArgumentHelp("The default of max_animation_frame_resolution: an animation whose frames are larger is refused with 422 (default 0: no such limit).",
                               valueName: "MP"))
    var maxAnimationFrameResolution: Double?
    @Option(help: ArgumentHelp("The largest result side in pixels (default 8192).", valueName: "px"))
    var maxResultSide: Int?
    @Option(help: ArgumentHelp("How long a source download may take, in seconds (default 15).", valueName: "seconds"))
    var downloadTimeout: Double?
    @Option(help: ArgumentHelp("How long connecting to a source's host may take, in seconds (thumbor's HTTP_LOADER_CONNECT_TIMEOUT; default 10).",
                               valueName: "seconds"))
    var connectTimeout: Double?
    @Option(help: ArgumentHelp("How long writing one response may take before the connection is closed, in seconds; 0: no limit (default 10).",
                               valueName: "seconds"))
    var writeResponseTimeout: Double?
    @Option(help: ArgumentHelp("How long an image request may take before it is answered 503, in seconds (default: no limit; imgproxy: 10).",
                               valueName: "seconds"))
    var timeout: Double?
    @Flag(inversion: .prefixedNo, help: "Answer with Content-Disposition: attachment unless the URL says att:0 (default off).")
    var returnAttachment: Bool?
    @Flag(inversion: .prefixedNo, help: "Send Link: <SOURCE>; rel=\"canonical\" with results of http(s) sources (default off).")
    var setCanonicalHeader: Bool?
    @Option(help: ArgumentHelp("The server's log level: debug, info, warn or error (default: warnings from the HTTP server, info from the rest).",
                               valueName: "level"))
    var logLevel: String?
    @Option(help: ArgumentHelp("The log line format: pretty, structured, json or gcp, as imgproxy's (default: swift-log's plain lines).",
                               valueName: "format"))
    var logFormat: String?
    @Option(help: ArgumentHelp("The prefix of imgproxy's metric names in /metrics, NAMESPACE_requests_total (default none).",
                               valueName: "namespace"))
    var prometheusNamespace: String?
    @Flag(inversion: .prefixedNo,
          help: "Export imgproxy's metric names beside Alcedo's own and time each request's stages (default on).")
    var imgproxyMetrics: Bool?
    @Flag(inversion: .prefixedNo, help: "Write JPEG results progressive (default off: baseline).")
    var jpegProgressive: Bool?
    @Option(help: ArgumentHelp("libwebp's effort for WebP results, 1 (fastest) to 6 (smallest files) (default 2; imgproxy's is 4).", valueName: "1-6"))
    var webpEffort: Int?
    @Option(help: ArgumentHelp("libwebp's content preset for WebP results: default, picture, photo, drawing, icon or text (default: default).",
                               valueName: "preset"))
    var webpPreset: String?
    @Flag(inversion: .prefixedNo, help: "Write PNG results Adam7-interlaced (default off).")
    var pngInterlaced: Bool?
    @Flag(inversion: .prefixedNo, help: "Write PNG results as palette images of --png-quantization-colors colours (default off).")
    var pngQuantize: Bool?
    @Option(help: ArgumentHelp("The palette size of quantized PNG results, 2 to 256 (default 256).", valueName: "2-256"))
    var pngQuantizationColors: Int?
    @Option(help: ArgumentHelp("The only processing option names URLs may use, comma-separated, as written (w and width are two names); others get 404 (default: all).",
                               valueName: "list"))
    var allowedProcessingOptions: String?
    @Option(help: "Requests processed at once (default: the number of cores).")
    var concurrency: Int?
    @Option(help: ArgumentHelp("Worker processes that share the port (SO_REUSEPORT), each with its share of --max-memory, the memory caches, --concurrency and --queue; a worker that dies is replaced at once and logged with its signal (thumbor's --processes; default 1: one process, no supervisor).",
                               valueName: "N"))
    var processes: Int?
    @Option(help: "Requests waiting beyond --concurrency before 429 (default 256).")
    var queue: Int?
    @Option(help: ArgumentHelp("Cache-Control max-age of images in seconds (default 31536000).", valueName: "seconds"))
    var ttl: Int?
    @Option(help: ArgumentHelp("A preset for preset:NAME, as NAME=OPTIONS with options separated by / (repeatable).",
                               valueName: "NAME=OPTIONS"))
    var preset: [String] = []
    @Option(help: ArgumentHelp("Serve WebP to clients that accept it when the URL names no format (default true).",
                               valueName: "bool"))
    var autoWebp: Bool?
    @Flag(inversion: .prefixedNo,
          help: "Serve AVIF (preferred over WebP) to clients that accept it when the URL names no format (default off: AV1 encoding is the costliest step).")
    var autoAvif: Bool?
    @Flag(inversion: .prefixedNo,
          help: "Serve JPEG XL (preferred over AVIF and WebP) to clients that accept image/jxl when the URL names no format, for still results (default off).")
    var autoJxl: Bool?
    @Option(help: ArgumentHelp("Remove scripts and event attributes from SVG sources answered as SVG (default true).", valueName: "bool"))
    var sanitizeSvg: Bool?
    @Flag(inversion: .prefixedNo, help: "Rasterise SVG sources when the URL names no format, instead of answering SVG (default off).")
    var alwaysRasterizeSvg: Bool?
    @Option(help: ArgumentHelp("Default quality per format when the URL sets none, as FORMAT=Q,... (default webp=79,avif=63,jxl=77; others 80).",
                               valueName: "list"))
    var formatQuality: String?
    @Option(help: ArgumentHelp("The AV1 encoder speed for AVIF results, 0 (slowest, smallest) to 10 (default 8).", valueName: "0-10"))
    var avifSpeed: Int?
    @Option(help: ArgumentHelp("Encoded results kept in memory for repeated requests, in bytes (default 67108864: 64 MiB; 0 keeps none).",
                               valueName: "bytes"))
    var resultCacheBytes: Int?
    @Option(help: ArgumentHelp("Decoded images kept in the memory cache, in bytes (default 0: none; repeats come from the encoded results and the disk).",
                               valueName: "bytes"))
    var memoryCacheBytes: Int?
    @Flag(help: "Allow sources on loopback and unspecified addresses only (imgproxy's IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES).")
    var allowLoopbackSourceAddresses = false
    @Flag(help: "Allow sources on private and CGNAT addresses only (imgproxy's IMGPROXY_ALLOW_PRIVATE_SOURCE_ADDRESSES).")
    var allowPrivateSourceAddresses = false
    @Flag(help: "Allow sources on link-local addresses only (imgproxy's IMGPROXY_ALLOW_LINK_LOCAL_SOURCE_ADDRESSES).")
    var allowLinkLocalSourceAddresses = false
    @Option(help: ArgumentHelp("The most redirects a source download follows (default 10; 0 follows none).", valueName: "N"))
    var maxRedirects: Int?
    @Option(help: ArgumentHelp("The User-Agent of source downloads (default Alcedo; %current_version is Alcedo's version).",
                               valueName: "text"))
    var userAgent: String?
    @Option(help: ArgumentHelp("Serve every route under this path prefix, such as /images (default none).", valueName: "path"))
    var pathPrefix: String?
    @Option(help: ArgumentHelp("Put this before every source URL that does not start with it (default none).", valueName: "URL"))
    var baseUrl: String?
    @Option(help: ArgumentHelp("Source URL prefix replacements, PATTERN=REPLACEMENT separated by ; (* matches up to a /, ${1} is its text).",
                               valueName: "list"))
    var urlReplacements: String?
    @Option(help: ArgumentHelp("Bytes of the HMAC kept in signatures, 1...32 (default 32).", valueName: "N"))
    var signatureSize: Int?
    @Option(help: ArgumentHelp("A signature accepted without checking, even with --key (repeatable or comma-separated).",
                               valueName: "signature"))
    var trustedSignatures: [String] = []
    @Option(help: ArgumentHelp("The quality when the URL sets none and --format-quality names no entry for the format (default 80).",
                               valueName: "1-100"))
    var quality: Int?
    @Flag(inversion: .prefixedNo, help: "Serve WebP to clients that accept it even when the URL names a format (default off).")
    var enforceWebp: Bool?
    @Flag(inversion: .prefixedNo,
          help: "Serve AVIF to clients that accept it even when the URL names a format, unless animated (default off).")
    var enforceAvif: Bool?
    @Flag(inversion: .prefixedNo,
          help: "Serve JPEG XL to clients that accept it even when the URL names a format, unless animated (default off).")
    var enforceJxl: Bool?
    @Flag(inversion: .prefixedNo,
          help: "Convert results to sRGB without a colour profile unless the URL says scp:0 (default on).")
    var stripColorProfile: Bool?
    @Flag(inversion: .prefixedNo,
          help: "Read the Sec-CH-DPR/DPR and Sec-CH-Width/Width client hints as dpr and width defaults (default off).")
    var enableClientHints: Bool?
    @Option(help: ArgumentHelp("The separator of option arguments in URLs (default :).", valueName: "text"))
    var argumentsSeparator: String?
    @Flag(inversion: .prefixedNo,
          help: "A base64 source is followed by a file name segment, which is ignored (default off).")
    var base64UrlIncludesFilename: Bool?
    @Option(help: ArgumentHelp("Source formats sent unprocessed when the URL names no other format, comma-separated (default none).",
                               valueName: "formats"))
    var skipProcessingFormats: String?
    @Flag(inversion: .prefixedNo, help: "Send ETag and answer If-None-Match (default on).")
    var useEtag: Bool?
    @Flag(inversion: .prefixedNo, help: "Send the source's Last-Modified and answer If-Modified-Since (default on).")
    var useLastModified: Bool?
    @Flag(inversion: .prefixedNo,
          help: "Add X-Origin-Content-Length, X-Origin-Width/-Height and X-Result-Width/-Height to image responses (default off).")
    var enableDebugHeaders: Bool?
    @Flag(inversion: .prefixedNo, help: "Apply the EXIF orientation when the URL does not say (auto_rotate; default on).")
    var autoRotate: Bool?
    @Flag(inversion: .prefixedNo, help: "Leave metadata out of results when the URL does not say (strip_metadata; default on).")
    var stripMetadata: Bool?
    @Flag(inversion: .prefixedNo,
          help: "When stripping metadata, keep the copyright notices when the URL does not say (keep_copyright; default on).")
    var keepCopyright: Bool?
    @Flag(inversion: .prefixedNo,
          help: "Use the thumbnail a HEIC or AVIF source embeds when the URL does not say (enforce_thumbnail; default off).")
    var enforceThumbnail: Bool?
    @Option(help: ArgumentHelp("Serve /metrics on this HOST:PORT only, not on the main address (default: on the main address).",
                               valueName: "host:port"))
    var prometheusBind: String?
    @Option(help: ArgumentHelp("A file of presets, one NAME=OPTIONS per line, # for comments (default none).", valueName: "file"))
    var presetsPath: String?
    @Option(help: ArgumentHelp("How long in-flight requests may take to finish after SIGTERM, in seconds (default 10).",
                               valueName: "seconds"))
    var gracefulStopTimeout: Int?
    @Option(help: ArgumentHelp("Require Authorization: Bearer TOKEN on image and info requests (default none).", valueName: "token"))
    var secret: String?
    @Option(help: ArgumentHelp("Send Access-Control-Allow-Origin with this origin and answer OPTIONS (default: no CORS headers).",
                               valueName: "origin"))
    var allowOrigin: String?
    @Option(help: ArgumentHelp("Another path answering like /health (default none).", valueName: "path"))
    var healthCheckPath: String?
    @Option(help: ArgumentHelp("Mixed into every ETag; change it to invalidate old ETags (default empty).", valueName: "text"))
    var etagBuster: String?
    @Option(help: ArgumentHelp("The earliest Last-Modified sent, as an RFC 3339 date such as 2030-01-31T12:00:00Z (default none).",
                               valueName: "date"))
    var lastModifiedBuster: String?
    @Flag(help: "Print the effective configuration, one setting per line with where its value came from, and exit.")
    var printConfig = false
    @Option(help: ArgumentHelp("The memory budget in MiB the server keeps within: requests reserve their working set from it, the caches count against it (default: 75% of the cgroup limit, else 256).",
                               valueName: "MB"))
    var maxMemory: Int?
    @Flag(inversion: .prefixedNo, help: "Give freed memory back to the system after bursts and bound malloc's arenas (default on).")
    var returnFreedMemory: Bool?
    @Option(help: ArgumentHelp("With freed memory given back: allocations of this many KiB or more get pages of their own, "
                               + "returned to the system when freed (128-32768; default 4096).", valueName: "KiB"))
    var largeAllocationThreshold: Int?
    @Option(help: ArgumentHelp("With freed memory given back: the free KiB at the top of each of malloc's heaps kept for the next "
                               + "request instead of being given back at once (0-1048576; default 8192).", valueName: "KiB"))
    var trimThreshold: Int?
    @Flag(help: "Accept the security options msr, msfs, maf, mafr and mrd in URLs (default off: 403).")
    var allowSecurityOptions = false
    @Flag(help: "URLs name presets instead of options: /SIGNATURE/PRESET[:PRESET...]/SOURCE.")
    var onlyPresets = false
    @Option(help: ArgumentHelp("Formats used when a URL names none and nothing is negotiated, in order (default jpeg,png,gif).",
                               valueName: "list"))
    var preferredFormats: String?
    @Option(help: ArgumentHelp("Scale results down so that no side is over this, padding included (default 0: no limit).",
                               valueName: "px"))
    var maxResultDimension: Int?
    @Option(help: ArgumentHelp("The watermark image for wm: a file.", valueName: "path"))
    var watermarkPath: String?
    @Option(help: ArgumentHelp("The watermark image for wm: an http(s) URL fetched once at start.", valueName: "url"))
    var watermarkUrl: String?
    @Option(help: ArgumentHelp("The watermark image for wm: base64 of its bytes.", valueName: "base64"))
    var watermarkData: String?
    @Option(help: ArgumentHelp("The base opacity every wm opacity multiplies, 0 to 1 (default 1).", valueName: "0-1"))
    var watermarkOpacity: Double?
    @Option(help: ArgumentHelp("The image answered, processed with the URL's options, when a source cannot be fetched or is not an image: a file.",
                               valueName: "path"))
    var fallbackImagePath: String?
    @Option(help: ArgumentHelp("The fallback image: an http(s) URL fetched once at start, through the source checks.", valueName: "url"))
    var fallbackImageUrl: String?
    @Option(help: ArgumentHelp("The fallback image: base64 of its bytes.", valueName: "base64"))
    var fallbackImageData: String?
    @Option(help: ArgumentHelp("The status of a fallback answer; 0: the status the error would have had (default 200).", valueName: "code"))
    var fallbackImageHttpCode: Int?
    @Option(help: ArgumentHelp("Cache-Control max-age of a fallback answer in seconds (default: --ttl).", valueName: "seconds"))
    var fallbackImageTtl: Int?
    @Flag(help: "Also serve the bundled sample images on a loopback port (trusted) and print an example URL.")
    var samples = false
    @OptionGroup var redis: RedisOptions
    @OptionGroup(title: "Object storage") var s3: S3Options
    @OptionGroup(title: "Result and source stores") var stores: StoreOptions
    @Option(help: ArgumentHelp("Serve local:///PATH sources from this folder, and nothing outside it (also $ALCEDO_LOCAL_FILESYSTEM_ROOT; default: local: refused).",
                               valueName: "dir"))
    var localRoot: String?

    func run() async throws {
        let environment = ServeEnvironment(ProcessInfo.processInfo.environment)
        var configuration: ImageServerConfiguration
        let grace: Int
        do {
            // Chosen before any logger is made: the configuration's own is made with it.
            let format = try Self.logFormat(environment, flag: logFormat)
            if let format, !printConfig {
                LoggingSystem.bootstrap { label in ImgproxyLogHandler(label: label, format: format) }
            }
            configuration = try makeConfiguration(environment)
            configuration.logFormat = format
            configuration.watermark = try await loadWatermark(environment)
            configuration.fallbackImage = try await loadFallbackImage(environment, configuration)
            grace = try environment.pick("GRACEFUL_STOP_TIMEOUT", flag: gracefulStopTimeout, environment.int("GRACEFUL_STOP_TIMEOUT")) ?? 10
            guard grace >= 0 else { throw ServerConfigurationError.invalidValue("--graceful-stop-timeout", message: "must not be negative") }
        } catch {
            throw ValidationError("\(error)")
        }
        let telemetry: OpenTelemetrySettings
        do {
            telemetry = try OpenTelemetrySettings(environment, process: ProcessInfo.processInfo.environment)
        } catch {
            throw ValidationError("\(error)")
        }
        configuration.tracesRequests = telemetry.tracesEnabled && OpenTelemetrySettings.exporterBuiltIn
        configuration.propagatesExternalTraceContext = telemetry.propagatesExternal
        let role = WorkerRole(environment: ProcessInfo.processInfo.environment)
        let processCount: Int
        do {
            processCount = try environment.pick("PROCESSES", flag: processes, environment.int("PROCESSES")) ?? 1
            guard (1...256).contains(processCount) else {
                throw ServerConfigurationError.invalidValue("--processes", message: "must be 1 to 256, got \(processCount)")
            }
            if let role {
                configuration = try WorkerRole.share(of: configuration, count: role.count, index: role.index, port: role.port,
                                                     metricsPorts: role.metricsPorts)
                WorkerRole.stopWithSupervisor(role)
            } else if processCount > 1 {
                // Each worker's share is checked here, before any worker starts.
                _ = try WorkerRole.share(of: configuration, count: processCount, index: 0, port: 1)
            }
        } catch {
            throw ValidationError("\(error)")
        }
        let unsupported = environment.unsupportedImgproxyVariables()
        if printConfig {
            var text = ServeConfigurationReport(configuration: configuration, environment: environment,
                                                extra: ["GRACEFUL_STOP_TIMEOUT": "\(grace) s", "PROCESSES": "\(processCount)"]
                                                    .merging(presetsPath.map { ["PRESETS_PATH": $0] } ?? [:]) { $1 }).text
            if !unsupported.isEmpty { text += "not supported (ignored): " + unsupported.joined(separator: ", ") + "\n" }
            if !environment.unsupportedThumborKeys.isEmpty {
                text += "thumbor.conf keys not supported (ignored): " + environment.unsupportedThumborKeys.joined(separator: ", ") + "\n"
            }
            if !environment.thumborKeysReadWithoutEffect.isEmpty {
                text += "thumbor.conf keys read, no effect on GET (as in thumbor 7.8): "
                    + environment.thumborKeysReadWithoutEffect.joined(separator: ", ") + "\n"
            }
            Console.write(text, to: STDOUT_FILENO)
            return
        }
        if !unsupported.isEmpty && role == nil {
            Console.write("alcedo: warning: these imgproxy variables are set but not supported, and are ignored: "
                + unsupported.joined(separator: ", ") + "\n", to: STDERR_FILENO)
        }
        if !environment.unsupportedThumborKeys.isEmpty && role == nil {
            Console.write("alcedo: warning: these thumbor.conf keys are not supported, and are ignored: "
                + environment.unsupportedThumborKeys.joined(separator: ", ") + "\n", to: STDERR_FILENO)
        }
        if role == nil {
            for warning in telemetry.warnings { Console.write("alcedo: warning: IMGPROXY_\(warning)\n", to: STDERR_FILENO) }
        }
        if role == nil && processCount > 1 {
            let supervisor = WorkerSupervisor(count: processCount, host: configuration.host, port: configuration.port,
                                              arguments: Array(CommandLine.arguments.dropFirst()), gracePeriod: grace)
            let status: Int32
            do {
                status = try supervisor.run { address in Console.write("listening on \(address)\n", to: STDOUT_FILENO) }
            } catch {
                Console.error("alcedo: \(error)")
                throw ExitCode.failure
            }
            if status != 0 { throw ExitCode(status) }
            return
        }
        // One request per core already keeps every core busy: each resize stays on its own
        // thread (about 4% less CPU per resize under load than splitting it into bands).
        let cores = max(1, ProcessInfo.processInfo.activeProcessorCount / (role?.count ?? 1))
        Resampler.maximumConcurrency = max(1, cores / max(1, configuration.concurrency))
        var serving = configuration
        let redisStorage: RedisSharedStorage?
        do {
            redisStorage = try redis.storage()
            // A refused login ends the command; unreachable nodes are logged and count as misses.
            try await redisStorage?.start()
        } catch {
            Console.error("alcedo: \(error)")
            throw ExitCode.failure
        }
        defer { redisStorage?.shutdown() }
        if let redisStorage { serving.sharedCacheTier = redis.tier(over: redisStorage) }
        var sampleServer: DemoHTTPServer?
        var sampleURL: String?
        if samples {
            let loaded = try DemoSamples.load()
            let server = try await DemoHTTPServer.start(samples: loaded)
            sampleServer = server
            serving.trustedSourceHosts.insert("127.0.0.1")
            let first = loaded.first { $0.name.hasSuffix(".jpg") } ?? loaded[0]
            sampleURL = server.url("/" + first.name).absoluteString
        }
        var server = ImageServer(configuration: serving)
        server.shutdownGracePeriod = .seconds(grace)
        do {
            if let exporter = try telemetry.bootstrap(logger: Logger(label: "alcedo.opentelemetry")) {
                server.additionalServices.append(exporter)
            }
        } catch {
            Console.error("alcedo: OpenTelemetry: \(error)")
            throw ExitCode.failure
        }
        let key = serving.keys.first
        let signatureSize = serving.signatureSize
        let prefix = serving.pathPrefix
        let example = sampleURL
        try await server.run { address in
            // Written unbuffered: a supervisor reading the pipe sees the line at once.
            Console.write("listening on \(address)\n", to: STDOUT_FILENO)
            if let sample = example, (role?.index ?? 0) == 0 {
                let url = ImgproxyURLBuilder(baseURL: address + prefix, key: key, signatureSize: signatureSize).url(for: sample, options: Self.exampleOptions)
                Console.error("example: curl -o thumb.webp -H 'Accept: image/webp' '\(url)'")
            }
        }
        await sampleServer?.shutdown()
    }

    /// `--log-format` or `LOG_FORMAT` (`nil`: neither is set).
    static func logFormat(_ env: ServeEnvironment, flag: String?) throws(ServerConfigurationError) -> ImgproxyLogFormat? {
        guard let text = env.pick("LOG_FORMAT", flag: flag, env.string("LOG_FORMAT")) else { return nil }
        guard let format = ImgproxyLogFormat(name: text.trimmingSpaces()) else {
            throw ServerConfigurationError.invalidValue(env.origin(of: "LOG_FORMAT") ?? "--log-format",
                                                        message: "\"\(text)\" is not pretty, structured, json or gcp")
        }
        return format
    }

    /// Whether `text` is a Prometheus metric name.
    static func isMetricName(_ text: String) -> Bool {
        guard let first = text.utf8.first, !(first >= 0x30 && first <= 0x39) else { return false }
        return text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":")
        }
    }

    private static var exampleOptions: ProcessingOptions {
        var options = ProcessingOptions()
        options.resizingType = .fill
        options.width = 300
        options.height = 200
        return options
    }

    /// The watermark from `--watermark-data`, `--watermark-path` or `--watermark-url` (the first
    /// given, in that order), decoded once; `nil` when none is given.
    private func loadWatermark(_ env: ServeEnvironment) async throws -> WatermarkImage? {
        let opacity = try watermarkOpacity ?? env.double("WATERMARK_OPACITY") ?? 1
        guard (0...1).contains(opacity) else {
            throw ServerConfigurationError.invalidValue("--watermark-opacity", message: "must be in 0...1, got \(opacity)")
        }
        guard let bytes = try await Self.auxiliaryImageBytes(
            data: watermarkData ?? env.string("WATERMARK_DATA"), path: watermarkPath ?? env.string("WATERMARK_PATH"),
            url: watermarkUrl ?? env.string("WATERMARK_URL"), flag: "--watermark", downloader: { ImageDownloader(name: "alcedo-watermark") })
        else { return nil }
        do {
            return try WatermarkImage(data: bytes, opacity: opacity)
        } catch {
            throw ServerConfigurationError.invalidValue("watermark", message: "the image does not decode: \(error)")
        }
    }

    /// The fallback image from `--fallback-image-data`, `--fallback-image-path` or
    /// `--fallback-image-url` (the first given, in that order), read once and checked to decode;
    /// a URL is fetched through the source guard of `configuration`, as sources are.
    private func loadFallbackImage(_ env: ServeEnvironment, _ configuration: ImageServerConfiguration) async throws -> Data? {
        let data = env.pick("FALLBACK_IMAGE_DATA", flag: fallbackImageData, env.string("FALLBACK_IMAGE_DATA"))
        let path = env.pick("FALLBACK_IMAGE_PATH", flag: fallbackImagePath, env.string("FALLBACK_IMAGE_PATH"))
        let url = env.pick("FALLBACK_IMAGE_URL", flag: fallbackImageUrl, env.string("FALLBACK_IMAGE_URL"))
        guard data != nil || path != nil || url != nil else { return nil }
        guard let bytes = try await Self.auxiliaryImageBytes(data: data, path: path, url: url, flag: "--fallback-image", downloader: {
            ImageDownloader(name: "alcedo-fallback",
                            configuration: ImageDownloader.Configuration(timeout: configuration.downloadTimeout,
                                                                         maximumBodySize: configuration.maxSourceBytes,
                                                                         maximumRedirects: configuration.maxRedirects),
                            loader: GuardedImageLoader(sourceGuard: configuration.sourceGuard))
        }) else { return nil }
        do {
            _ = try ImageCodecRegistry.shared.info(for: bytes, options: DecodingOptions())
        } catch {
            throw ServerConfigurationError.invalidValue("fallback image", message: "the image does not decode: \(error)")
        }
        return bytes
    }

    /// The bytes of an image given as base64 `data`, a file `path` or an http(s) `url` (the
    /// first given), fetched once with the downloader `downloader` makes (shut down here);
    /// `nil` when none is given. Errors name `flag` with `-data`, `-path` or `-url`.
    private static func auxiliaryImageBytes(data: String?, path: String?, url text: String?, flag: String,
                                            downloader: () -> ImageDownloader) async throws -> Data? {
        if let data {
            guard let bytes = Data(base64Encoded: data.trimmingWhitespace()) else {
                throw ServerConfigurationError.invalidValue(flag + "-data", message: "is not base64")
            }
            return bytes
        }
        if let path {
            do {
                return try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw ServerConfigurationError.invalidValue(flag + "-path", message: "cannot read \(path): \(errorReason(error))")
            }
        }
        guard let text else { return nil }
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https" else {
            throw ServerConfigurationError.invalidValue(flag + "-url", message: "\"\(text)\" is not an http(s) URL")
        }
        let loader = downloader()
        let fetched: Result<Data, AlcedoError>
        do {
            fetched = .success(try await loader.downloadData(with: url).data)
        } catch {
            fetched = .failure(error)
        }
        await loader.shutdown()
        switch fetched {
        case .success(let bytes): return bytes
        case .failure(let error): throw ServerConfigurationError.invalidValue(flag + "-url", message: "cannot fetch \(text): \(error)")
        }
    }

    /// The URL dialect and, for thumbor, its settings and defaults: thumbor's `MAX_AGE` (one
    /// day), no WebP negotiation, no EXIF rotation, quality 80 for every format, the source's
    /// format kept. A `--thumbor-config` file is read first, below every flag and variable.
    private func configureDialect(_ c: inout ImageServerConfiguration, _ env: ServeEnvironment) throws {
        if let path = env.pick("THUMBOR_CONFIG", flag: thumborConfig, env.string("THUMBOR_CONFIG")) {
            let text: String
            do {
                text = try String(decoding: Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
            } catch {
                throw ServerConfigurationError.invalidValue("--thumbor-config", message: "cannot read \(path): \(errorReason(error))")
            }
            env.loadThumborConfig(ThumborConfigFile(text: text), path: path)
        }
        let name = env.pick("DIALECT", flag: dialect, env.string("DIALECT")) ?? "imgproxy"
        guard let chosen = URLDialect(rawValue: name.lowercased()) else {
            throw ServerConfigurationError.invalidValue(env.origin(of: "DIALECT") ?? "--dialect", message: "must be imgproxy or thumbor, got \"\(name)\"")
        }
        c.dialect = chosen
        guard chosen == .thumbor else { return }
        c.useThumborDialect()
        c.thumbor.securityKey = env.pick("THUMBOR_SECURITY_KEY", flag: thumborSecurityKey, env.string("THUMBOR_SECURITY_KEY"))
        c.thumbor.allowUnsafe = try env.pick("THUMBOR_ALLOW_UNSAFE_URL", flag: thumborAllowUnsafeUrl,
                                             env.bool("THUMBOR_ALLOW_UNSAFE_URL")) ?? true
        for (setting, flag) in [("THUMBOR_MAX_WIDTH", thumborMaxWidth), ("THUMBOR_MAX_HEIGHT", thumborMaxHeight)] {
            let value = try env.pick(setting, flag: flag, env.int(setting)) ?? 0
            guard (0...65_535).contains(value) else {
                throw ServerConfigurationError.invalidValue(env.origin(of: setting) ?? "--" + setting.lowercased().replacing(literal: "_", with: "-"),
                                                            message: "must be in 0...\(65_535), got \(value)")
            }
            if setting == "THUMBOR_MAX_WIDTH" { c.thumbor.maxWidth = value } else { c.thumbor.maxHeight = value }
        }
        if let filters = env.pick("THUMBOR_FILTERS", flag: thumborFilters, env.string("THUMBOR_FILTERS")) {
            c.thumbor.filters = Set(ServeEnvironment.split(filters, separator: ","))
        }
        c.thumbor.autoPNGToJPG = try env.pick("THUMBOR_AUTO_PNG_TO_JPG", flag: thumborAutoPngToJpg,
                                              env.bool("THUMBOR_AUTO_PNG_TO_JPG")) ?? false
    }

    /// The configuration from the flags, else `ALCEDO_*`, else imgproxy's `IMGPROXY_*`
    /// variables, else the defaults; `env` records where each value came from.
    private func makeConfiguration(_ env: ServeEnvironment) throws -> ImageServerConfiguration {
        var c = ImageServerConfiguration()
        try configureDialect(&c, env)
        // imgproxy's IMGPROXY_BIND (HOST:PORT, ":8080" for every interface) stands for both.
        let bind = try env.imgproxyString("BIND", for: "HOST").map { try BindAddress(parsing: $0, name: "IMGPROXY_BIND") }
        if bind != nil { _ = env.imgproxyString("BIND", for: "PORT") }
        // IMGPROXY_NETWORK: TCP is what Alcedo listens on; unix sockets are not supported (warned).
        if let network = env.values["IMGPROXY_NETWORK"], ["tcp", "tcp4", "tcp6", ""].contains(network.lowercased()) {
            _ = env.imgproxyString("NETWORK", for: "HOST")
        }
        c.host = env.pick("HOST", flag: host, env.string("HOST") ?? bind?.host) ?? c.host
        c.port = try env.pick("PORT", flag: port, env.int("PORT") ?? bind?.port) ?? c.port
        guard (0...65535).contains(c.port) else { throw ServerConfigurationError.invalidValue("--port", message: "must be in 0...65535") }
        if let dir = env.pick("CACHE_DIR", flag: cacheDir, env.string("CACHE_DIR")) { c.cacheDirectory = URL(fileURLWithPath: dir, isDirectory: true) }
        let keys = env.pick("KEY", flag: key.nonEmpty, env.list("KEY").nonEmpty) ?? []
        let salts = env.pick("SALT", flag: salt.nonEmpty, env.list("SALT").nonEmpty) ?? []
        guard keys.count == salts.count else { throw ServerConfigurationError.unpairedKeys(keys: keys.count, salts: salts.count) }
        c.keys = try zip(keys, salts).map { try SigningKey(hexKey: $0, hexSalt: $1) }
        c.signatureSize = try env.pick("SIGNATURE_SIZE", flag: signatureSize, env.int("SIGNATURE_SIZE")) ?? c.signatureSize
        guard (1...32).contains(c.signatureSize) else {
            throw ServerConfigurationError.invalidValue("--signature-size", message: "must be in 1...32, got \(c.signatureSize)")
        }
        let trusted = trustedSignatures.flatMap { ServeEnvironment.split($0, separator: ",") }
        c.trustedSignatures = Set(env.pick("TRUSTED_SIGNATURES", flag: trusted.nonEmpty, env.list("TRUSTED_SIGNATURES").nonEmpty) ?? [])
        c.allowedSources = env.pick("ALLOWED_SOURCES", flag: allowedSources.nonEmpty, env.list("ALLOWED_SOURCES").nonEmpty) ?? []
        c.allowPrivateNetworks = try env.pick("ALLOW_PRIVATE_NETWORKS", flag: allowPrivateNetworks ? true : nil,
                                              env.bool("ALLOW_PRIVATE_NETWORKS")) ?? false
        let kinds: [(String, Bool, SourceGuard.AddressKind)] = [
            ("ALLOW_LOOPBACK_SOURCE_ADDRESSES", allowLoopbackSourceAddresses, .loopback),
            ("ALLOW_PRIVATE_SOURCE_ADDRESSES", allowPrivateSourceAddresses, .private),
            ("ALLOW_LINK_LOCAL_SOURCE_ADDRESSES", allowLinkLocalSourceAddresses, .linkLocal),
        ]
        for (name, flag, kind) in kinds {
            if try env.pick(name, flag: flag ? true : nil, env.bool(name)) == true { c.allowedAddressKinds.insert(kind) }
        }
        c.trustedSourceHosts = Set((env.pick("TRUSTED_SOURCE_HOST", flag: trustedSourceHost.nonEmpty,
                                             env.list("TRUSTED_SOURCE_HOST").nonEmpty) ?? []).map { $0.lowercased() })
        c.maxSourceResolution = try env.pick("MAX_SRC_RESOLUTION", flag: maxSrcResolution, env.double("MAX_SRC_RESOLUTION"))
            ?? c.maxSourceResolution
        if let frames = try env.pick("MAX_ANIMATION_FRAMES", flag: maxAnimationFrames, env.int("MAX_ANIMATION_FRAMES")) {
            guard frames > 0 else {
                throw ServerConfigurationError.invalidValue(env.origin(of: "MAX_ANIMATION_FRAMES") ?? "--max-animation-frames",
                                                            message: "must be positive, got \(frames)")
            }
            c.defaultOptions.security.maxAnimationFrames = frames
        }
        if let megapixels = try env.pick("MAX_ANIMATION_FRAME_RESOLUTION", flag: maxAnimationFrameResolution,
                                         env.double("MAX_ANIMATION_FRAME_RESOLUTION")) {
            guard megapixels >= 0 else {
                throw ServerConfigurationError.invalidValue(env.origin(of: "MAX_ANIMATION_FRAME_RESOLUTION") ?? "--max-animation-frame-resolution",
                                                            message: "must not be negative, got \(megapixels)")
            }
            c.defaultOptions.security.maxAnimationFrameResolution = megapixels > 0 ? megapixels : nil
        }
        // imgproxy's limits where 0 means "no check" keep Alcedo's bound instead: every request stays bounded.
        let imgproxyFileSize = try imgproxyLimit(env, "MAX_SRC_FILE_SIZE", for: "MAX_SRC_BYTES")
        c.maxSourceBytes = try env.pick("MAX_SRC_BYTES", flag: maxSrcBytes, env.int("MAX_SRC_BYTES") ?? imgproxyFileSize) ?? c.maxSourceBytes
        // imgproxy's IMGPROXY_MAX_RESULT_DIMENSION scales results down (--max-result-dimension,
        // below); Alcedo's own --max-result-side refuses larger results on top of it.
        c.maxResultSide = try env.pick("MAX_RESULT_SIDE", flag: maxResultSide, env.int("MAX_RESULT_SIDE")) ?? c.maxResultSide
        if let seconds = try env.pick("DOWNLOAD_TIMEOUT", flag: downloadTimeout, env.double("DOWNLOAD_TIMEOUT")) {
            c.downloadTimeout = .milliseconds(Int(seconds * 1000))
        }
        if let seconds = try env.pick("CONNECT_TIMEOUT", flag: connectTimeout, env.double("CONNECT_TIMEOUT")) {
            guard seconds > 0, seconds.isFinite else {
                throw ServerConfigurationError.invalidValue(env.origin(of: "CONNECT_TIMEOUT") ?? "--connect-timeout", message: "must be above 0")
            }
            c.connectTimeout = .milliseconds(Int(seconds * 1000))
        }
        if let seconds = try env.pick("WRITE_RESPONSE_TIMEOUT", flag: writeResponseTimeout, env.double("WRITE_RESPONSE_TIMEOUT")) {
            guard seconds >= 0 else {
                throw ServerConfigurationError.invalidValue("--write-response-timeout", message: "must not be negative")
            }
            c.writeResponseTimeout = seconds > 0 ? .milliseconds(Int(seconds * 1000)) : nil
        }
        if let seconds = try env.pick("TIMEOUT", flag: timeout, env.double("TIMEOUT")) {
            guard seconds > 0 else {
                throw ServerConfigurationError.invalidValue(env.origin(of: "TIMEOUT") ?? "--timeout", message: "must be positive, got \(seconds)")
            }
            c.requestTimeout = .milliseconds(Int(seconds * 1000))
        }
        c.maxRedirects = try env.pick("MAX_REDIRECTS", flag: maxRedirects, env.int("MAX_REDIRECTS")) ?? c.maxRedirects
        if let agent = env.pick("USER_AGENT", flag: userAgent, env.string("USER_AGENT")) {
            c.userAgent = agent.replacing(literal: "%current_version", with: AlcedoCommand.version)
        }
        c.concurrency = try env.pick("CONCURRENCY", flag: concurrency, env.int("CONCURRENCY")) ?? c.concurrency
        let imgproxyQueue = try imgproxyLimit(env, "REQUESTS_QUEUE_SIZE", for: "QUEUE")
        c.queueLength = try env.pick("QUEUE", flag: queue, env.int("QUEUE") ?? imgproxyQueue) ?? c.queueLength
        c.ttl = try env.pick("TTL", flag: ttl, env.int("TTL")) ?? c.ttl
        let detectWebP = try env.imgproxyString("ENABLE_WEBP_DETECTION", for: "AUTO_WEBP").map { try Self.bool($0, "IMGPROXY_ENABLE_WEBP_DETECTION") }
        c.autoWebP = try env.pick("AUTO_WEBP", flag: autoWebp, env.bool("AUTO_WEBP") ?? detectWebP) ?? c.autoWebP
        let detectAVIF = try env.imgproxyString("ENABLE_AVIF_DETECTION", for: "AUTO_AVIF").map { try Self.bool($0, "IMGPROXY_ENABLE_AVIF_DETECTION") }
        c.autoAVIF = try env.pick("AUTO_AVIF", flag: autoAvif, env.bool("AUTO_AVIF") ?? detectAVIF) ?? c.autoAVIF
        c.autoJXL = try env.pick("AUTO_JXL", flag: autoJxl, env.bool("AUTO_JXL")) ?? c.autoJXL
        c.sanitizeSVG = try env.pick("SANITIZE_SVG", flag: sanitizeSvg, env.bool("SANITIZE_SVG")) ?? c.sanitizeSVG
        c.alwaysRasterizeSVG = try env.pick("ALWAYS_RASTERIZE_SVG", flag: alwaysRasterizeSvg, env.bool("ALWAYS_RASTERIZE_SVG"))
            ?? c.alwaysRasterizeSVG
        c.enforceWebP = try env.pick("ENFORCE_WEBP", flag: enforceWebp, env.bool("ENFORCE_WEBP")) ?? c.enforceWebP
        c.enforceAVIF = try env.pick("ENFORCE_AVIF", flag: enforceAvif, env.bool("ENFORCE_AVIF")) ?? c.enforceAVIF
        c.enforceJXL = try env.pick("ENFORCE_JXL", flag: enforceJxl, env.bool("ENFORCE_JXL")) ?? c.enforceJXL
        c.clientHints = try env.pick("ENABLE_CLIENT_HINTS", flag: enableClientHints, env.bool("ENABLE_CLIENT_HINTS")) ?? c.clientHints
        c.argumentsSeparator = env.pick("ARGUMENTS_SEPARATOR", flag: argumentsSeparator, env.string("ARGUMENTS_SEPARATOR"))
            ?? c.argumentsSeparator
        c.base64URLIncludesFilename = try env.pick("BASE64_URL_INCLUDES_FILENAME", flag: base64UrlIncludesFilename,
                                                   env.bool("BASE64_URL_INCLUDES_FILENAME")) ?? c.base64URLIncludesFilename
        if let text = env.pick("SKIP_PROCESSING_FORMATS", flag: skipProcessingFormats, env.string("SKIP_PROCESSING_FORMATS")) {
            c.defaultOptions.skipProcessing = try ServeEnvironment.split(text, separator: ",").map { name in
                guard let format = ImageFormat(fileExtension: name), format != .unknown else {
                    throw ServerConfigurationError.invalidValue(env.origin(of: "SKIP_PROCESSING_FORMATS") ?? "--skip-processing-formats",
                                                                message: "\"\(name)\" is not an image format")
                }
                return format
            }
        }
        c.defaultQuality = try env.pick("QUALITY", flag: quality, env.int("QUALITY")) ?? c.defaultQuality
        guard (1...100).contains(c.defaultQuality) else {
            throw ServerConfigurationError.invalidValue("--quality", message: "must be in 1...100, got \(c.defaultQuality)")
        }
        if let text = env.pick("FORMAT_QUALITY", flag: formatQuality, env.string("FORMAT_QUALITY")) { try c.setFormatQuality(text) }
        c.avifSpeed = try env.pick("AVIF_SPEED", flag: avifSpeed, env.int("AVIF_SPEED")) ?? c.avifSpeed
        guard (0...10).contains(c.avifSpeed) else {
            throw ServerConfigurationError.invalidValue("--avif-speed", message: "must be in 0...10, got \(c.avifSpeed)")
        }
        c.useETag = try env.pick("USE_ETAG", flag: useEtag, env.bool("USE_ETAG")) ?? c.useETag
        c.useLastModified = try env.pick("USE_LAST_MODIFIED", flag: useLastModified, env.bool("USE_LAST_MODIFIED")) ?? c.useLastModified
        c.debugHeaders = try env.pick("ENABLE_DEBUG_HEADERS", flag: enableDebugHeaders, env.bool("ENABLE_DEBUG_HEADERS")) ?? c.debugHeaders
        c.defaultOptions.autoRotate = try env.pick("AUTO_ROTATE", flag: autoRotate, env.bool("AUTO_ROTATE")) ?? c.defaultOptions.autoRotate
        c.defaultOptions.stripMetadata = try env.pick("STRIP_METADATA", flag: stripMetadata, env.bool("STRIP_METADATA"))
            ?? c.defaultOptions.stripMetadata
        if let keep = try env.pick("KEEP_COPYRIGHT", flag: keepCopyright, env.bool("KEEP_COPYRIGHT")) {
            c.defaultOptions.keepCopyright = keep
        }
        if let enforce = try env.pick("ENFORCE_THUMBNAIL", flag: enforceThumbnail, env.bool("ENFORCE_THUMBNAIL")) {
            c.defaultOptions.enforceThumbnail = enforce
        }
        if let strip = try env.pick("STRIP_COLOR_PROFILE", flag: stripColorProfile, env.bool("STRIP_COLOR_PROFILE")) {
            c.defaultOptions.stripColorProfile = strip
        }
        if let attachment = try env.pick("RETURN_ATTACHMENT", flag: returnAttachment, env.bool("RETURN_ATTACHMENT")) {
            c.defaultOptions.returnAttachment = attachment
        }
        c.setCanonicalHeader = try env.pick("SET_CANONICAL_HEADER", flag: setCanonicalHeader, env.bool("SET_CANONICAL_HEADER"))
            ?? c.setCanonicalHeader
        if let text = env.pick("LOG_LEVEL", flag: logLevel, env.string("LOG_LEVEL")) {
            let levels: [String: Logger.Level] = ["debug": .debug, "info": .info, "warn": .warning, "warning": .warning, "error": .error]
            guard let level = levels[text.trimmingSpaces().lowercased()] else {
                throw ServerConfigurationError.invalidValue(env.origin(of: "LOG_LEVEL") ?? "--log-level",
                                                            message: "\"\(text)\" is not debug, info, warn or error")
            }
            c.logLevel = level
        }
        c.progressiveJPEG = try env.pick("JPEG_PROGRESSIVE", flag: jpegProgressive, env.bool("JPEG_PROGRESSIVE")) ?? c.progressiveJPEG
        if let effort = try env.pick("WEBP_EFFORT", flag: webpEffort, env.int("WEBP_EFFORT")) {
            guard (1...6).contains(effort) else {
                throw ServerConfigurationError.invalidValue(env.origin(of: "WEBP_EFFORT") ?? "--webp-effort", message: "must be 1 to 6, got \(effort)")
            }
            c.webpEffort = effort
        }
        if let text = env.pick("WEBP_PRESET", flag: webpPreset, env.string("WEBP_PRESET")) {
            guard let preset = WebPEncoder.Preset(name: text.trimmingSpaces()) else {
                throw ServerConfigurationError.invalidValue(env.origin(of: "WEBP_PRESET") ?? "--webp-preset",
                                                            message: "\"\(text)\" is not default, picture, photo, drawing, icon or text")
            }
            c.webpPreset = preset
        }
        c.pngInterlaced = try env.pick("PNG_INTERLACED", flag: pngInterlaced, env.bool("PNG_INTERLACED")) ?? c.pngInterlaced
        c.pngQuantize = try env.pick("PNG_QUANTIZE", flag: pngQuantize, env.bool("PNG_QUANTIZE")) ?? c.pngQuantize
        if let colors = try env.pick("PNG_QUANTIZATION_COLORS", flag: pngQuantizationColors, env.int("PNG_QUANTIZATION_COLORS")) {
            guard (2...256).contains(colors) else {
                throw ServerConfigurationError.invalidValue(env.origin(of: "PNG_QUANTIZATION_COLORS") ?? "--png-quantization-colors",
                                                            message: "must be 2 to 256, got \(colors)")
            }
            c.pngQuantizationColors = colors
        }
        if let text = env.pick("ALLOWED_PROCESSING_OPTIONS", flag: allowedProcessingOptions, env.string("ALLOWED_PROCESSING_OPTIONS")) {
            let names = ServeEnvironment.split(text, separator: ",")
            if !names.isEmpty { c.allowedProcessingOptions = Set(names) }
        }
        c.pathPrefix = env.pick("PATH_PREFIX", flag: pathPrefix, env.string("PATH_PREFIX")) ?? ""
        c.sourceURLRewriter.baseURL = env.pick("BASE_URL", flag: baseUrl, env.string("BASE_URL")) ?? ""
        if let text = env.pick("URL_REPLACEMENTS", flag: urlReplacements, env.string("URL_REPLACEMENTS")) {
            try c.sourceURLRewriter.addReplacements(text)
        }
        if let text = env.pick("PROMETHEUS_BIND", flag: prometheusBind, env.string("PROMETHEUS_BIND")) {
            c.metricsAddress = try BindAddress(parsing: text, name: "--prometheus-bind")
            if c.metricsAddress?.port == c.port, c.port != 0 {
                throw ServerConfigurationError.invalidValue("--prometheus-bind", message: "must differ from the main address (port \(c.port))")
            }
        }
        if let namespace = env.pick("PROMETHEUS_NAMESPACE", flag: prometheusNamespace, env.string("PROMETHEUS_NAMESPACE")) {
            let trimmed = namespace.trimmingSpaces()
            guard trimmed.isEmpty || Self.isMetricName(trimmed) else {
                throw ServerConfigurationError.invalidValue(env.origin(of: "PROMETHEUS_NAMESPACE") ?? "--prometheus-namespace",
                                                            message: "\"\(trimmed)\" is not a Prometheus name ([a-zA-Z_:][a-zA-Z0-9_:]*)")
            }
            guard trimmed != "alcedo" else {
                throw ServerConfigurationError.invalidValue(env.origin(of: "PROMETHEUS_NAMESPACE") ?? "--prometheus-namespace",
                                                            message: "\"alcedo\" would give imgproxy's metrics the names of Alcedo's own (alcedo_requests_total)")
            }
            c.prometheusNamespace = trimmed
        }
        c.imgproxyMetrics = try env.pick("IMGPROXY_METRICS", flag: imgproxyMetrics, env.bool("IMGPROXY_METRICS")) ?? c.imgproxyMetrics
        c.secret = env.pick("SECRET", flag: secret, env.string("SECRET"))
        c.allowOrigin = env.pick("ALLOW_ORIGIN", flag: allowOrigin, env.string("ALLOW_ORIGIN"))
        c.healthCheckPath = env.pick("HEALTH_CHECK_PATH", flag: healthCheckPath, env.string("HEALTH_CHECK_PATH"))
        c.etagBuster = env.pick("ETAG_BUSTER", flag: etagBuster, env.string("ETAG_BUSTER")) ?? ""
        if let text = env.pick("LAST_MODIFIED_BUSTER", flag: lastModifiedBuster, env.string("LAST_MODIFIED_BUSTER")) {
            guard let date = Self.rfc3339(text) else {
                throw ServerConfigurationError.invalidValue(env.origin(of: "LAST_MODIFIED_BUSTER") ?? "--last-modified-buster",
                                                            message: "\"\(text)\" is not an RFC 3339 date such as 2030-01-31T12:00:00Z")
            }
            c.lastModifiedBuster = date
        }
        c.resultCacheBytes = try env.pick("RESULT_CACHE_BYTES", flag: resultCacheBytes, env.int("RESULT_CACHE_BYTES")) ?? c.resultCacheBytes
        c.memoryCacheBytes = try env.pick("MEMORY_CACHE_BYTES", flag: memoryCacheBytes, env.int("MEMORY_CACHE_BYTES")) ?? c.memoryCacheBytes
        guard c.resultCacheBytes >= 0, c.memoryCacheBytes >= 0 else {
            throw ServerConfigurationError.invalidValue("cache sizes", message: "--result-cache-bytes and --memory-cache-bytes must not be negative")
        }
        if let megabytes = try env.pick("MAX_MEMORY", flag: maxMemory, env.int("MAX_MEMORY")) {
            guard megabytes > 0 else { throw ServerConfigurationError.invalidValue("--max-memory", message: "must be positive, got \(megabytes)") }
            c.maxMemory = megabytes << 20
        }
        c.returnsFreedMemory = try env.pick("RETURN_FREED_MEMORY", flag: returnFreedMemory, env.bool("RETURN_FREED_MEMORY"))
            ?? c.returnsFreedMemory
        if let kib = try env.pick("LARGE_ALLOCATION_THRESHOLD", flag: largeAllocationThreshold, env.int("LARGE_ALLOCATION_THRESHOLD")) {
            // glibc takes 32 MiB at most (half its heap size) and ignores larger values.
            guard (128...(32 << 10)).contains(kib) else {
                throw ServerConfigurationError.invalidValue("--large-allocation-threshold", message: "must be 128 to 32768 KiB, got \(kib)")
            }
            c.largeAllocationThreshold = kib << 10
        }
        if let kib = try env.pick("TRIM_THRESHOLD", flag: trimThreshold, env.int("TRIM_THRESHOLD")) {
            guard (0...(1 << 20)).contains(kib) else {
                throw ServerConfigurationError.invalidValue("--trim-threshold", message: "must be 0 to 1048576 KiB, got \(kib)")
            }
            c.trimThreshold = kib << 10
        }
        let setAside = c.processMemoryShare + c.resultCacheBytes + c.memoryCacheBytes
        guard setAside < c.maxMemory else {
            throw ServerConfigurationError.invalidValue("--max-memory", message: "\(c.maxMemory >> 20) MiB leaves nothing for requests "
                + "once the process (\(c.processMemoryShare >> 20) MiB) and the caches (\((setAside - c.processMemoryShare) >> 20) MiB) "
                + "are set aside: raise it or lower the cache sizes")
        }
        // Presets: the file's first (imgproxy reads IMGPROXY_PRESETS, then adds the file's), then the list.
        let separator = env.string("PRESETS_SEPARATOR") ?? ","
        env.record("PRESETS_SEPARATOR", flag: false)
        var presetTexts = env.pick("PRESET", flag: preset.nonEmpty, env.list("PRESET", separator: separator).nonEmpty) ?? []
        if let path = env.pick("PRESETS_PATH", flag: presetsPath, env.string("PRESETS_PATH")) {
            presetTexts += try Self.presetLines(path)
        }
        for text in presetTexts { try c.addPreset(text) }
        try c.validatePresets()
        c.onlyPresets = try env.pick("ONLY_PRESETS", flag: onlyPresets ? true : nil, env.bool("ONLY_PRESETS")) ?? false
        c.allowSecurityOptions = try env.pick("ALLOW_SECURITY_OPTIONS", flag: allowSecurityOptions ? true : nil,
                                              env.bool("ALLOW_SECURITY_OPTIONS")) ?? false
        if let formats = env.pick("PREFERRED_FORMATS", flag: preferredFormats.map { $0.split(separator: ",").map(String.init) },
                                  env.list("PREFERRED_FORMATS").nonEmpty) {
            try c.setPreferredFormats(formats)
        }
        c.maxResultDimension = try env.pick("MAX_RESULT_DIMENSION", flag: maxResultDimension, env.int("MAX_RESULT_DIMENSION"))
            ?? c.maxResultDimension
        guard c.maxResultDimension >= 0 else {
            throw ServerConfigurationError.invalidValue("--max-result-dimension", message: "must not be negative")
        }
        c.fallbackImageStatus = try env.pick("FALLBACK_IMAGE_HTTP_CODE", flag: fallbackImageHttpCode, env.int("FALLBACK_IMAGE_HTTP_CODE"))
            ?? c.fallbackImageStatus
        guard c.fallbackImageStatus == 0 || (100...599).contains(c.fallbackImageStatus) else {
            throw ServerConfigurationError.invalidValue(env.origin(of: "FALLBACK_IMAGE_HTTP_CODE") ?? "--fallback-image-http-code",
                                                        message: "must be 0 or an HTTP status in 100...599, got \(c.fallbackImageStatus)")
        }
        if let seconds = try env.pick("FALLBACK_IMAGE_TTL", flag: fallbackImageTtl, env.int("FALLBACK_IMAGE_TTL")) {
            guard seconds >= 0 else {
                throw ServerConfigurationError.invalidValue(env.origin(of: "FALLBACK_IMAGE_TTL") ?? "--fallback-image-ttl", message: "must not be negative")
            }
            // imgproxy's 0 means "the TTL".
            c.fallbackImageTTL = seconds > 0 ? seconds : nil
        }
        if try s3.isEnabled(env) { c.s3 = try s3.configuration(env) }
        (c.resultStore, c.sourceStore) = try stores.tiers(s3: s3, env: env)
        if let root = env.pick("LOCAL_FILESYSTEM_ROOT", flag: localRoot, env.string("LOCAL_FILESYSTEM_ROOT")) {
            var isFolder = false
            guard FileManager.default.fileExists(atPath: root, isDirectory: &isFolder), isFolder else {
                throw ServerConfigurationError.invalidValue("--local-root", message: "\(root) is not a folder")
            }
            c.localRoot = URL(fileURLWithPath: root, isDirectory: true)
        }
        guard c.maxSourceResolution > 0, c.maxSourceBytes > 0, c.maxResultSide > 0, c.concurrency > 0, c.queueLength >= 0, c.ttl >= 0,
              c.maxRedirects >= 0 else {
            throw ServerConfigurationError.invalidValue("limits", message: "sizes, concurrency and ttl must be positive (queue and redirects may be 0)")
        }
        return c
    }

    /// imgproxy's limit variable `IMGPROXY_<NAME>`, where 0 means "no limit": `nil` for 0 (the
    /// Alcedo setting keeps its bound), else the value.
    private func imgproxyLimit(_ env: ServeEnvironment, _ name: String, for setting: String) throws -> Int? {
        guard let text = env.imgproxyString(name, for: setting) else { return nil }
        guard let value = Int(text.trimmingSpaces()), value >= 0 else {
            throw ServerConfigurationError.invalidValue("IMGPROXY_" + name, message: "\"\(text)\" is not a non-negative integer")
        }
        return value == 0 ? nil : value
    }

    /// An RFC 3339 date-time, with or without fractional seconds.
    static func rfc3339(_ text: String) -> Date? {
        if let date = try? Date.ISO8601FormatStyle().parse(text) { return date }
        return try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)
    }

    private static func bool(_ text: String, _ name: String) throws -> Bool {
        guard let value = ServeEnvironment.parseBool(text) else {
            throw ServerConfigurationError.invalidValue(name, message: "\"\(text)\" is not a boolean")
        }
        return value
    }

    /// The presets of a file: one `NAME=OPTIONS` per line; blank lines and `#` comments skipped.
    static func presetLines(_ path: String) throws -> [String] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ServerConfigurationError.invalidValue("--presets-path", message: "cannot read \(path)")
        }
        return String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingSpaces() }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }
}

extension Array {
    /// `nil` when empty: a repeatable flag given no value counts as not given.
    var nonEmpty: Self? { isEmpty ? nil : self }
}
