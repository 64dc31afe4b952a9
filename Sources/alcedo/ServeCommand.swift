import Alcedo
import AlcedoRedis
import AlcedoServer
import ArgumentParser
import Foundation

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
            ALCEDO_PORT=9000, ALCEDO_ALLOW_PRIVATE_NETWORKS=1; lists separated by commas); a flag wins \
            over its variable. Prints "listening on http://HOST:PORT" once listening; SIGTERM or SIGINT \
            lets in-flight requests finish (up to 10 s) and exits 0.
            """
    )

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
    @Option(help: ArgumentHelp("The largest result side in pixels (default 8192).", valueName: "px"))
    var maxResultSide: Int?
    @Option(help: ArgumentHelp("How long a source download may take, in seconds (default 15).", valueName: "seconds"))
    var downloadTimeout: Double?
    @Option(help: "Requests processed at once (default: the number of cores).")
    var concurrency: Int?
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
    @Option(help: ArgumentHelp("Default quality per format when the URL sets none, as FORMAT=Q,... (default webp=79,avif=63; others 80).",
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
    @Flag(help: "Also serve the bundled sample images on a loopback port (trusted) and print an example URL.")
    var samples = false
    @OptionGroup var redis: RedisOptions

    func run() async throws {
        var environment = ServeEnvironment(ProcessInfo.processInfo.environment)
        var configuration: ImageServerConfiguration
        do {
            configuration = try makeConfiguration(&environment)
            configuration.watermark = try await loadWatermark(environment)
        } catch {
            throw ValidationError("\(error)")
        }
        // One request per core already keeps every core busy: each resize stays on its own
        // thread (about 4% less CPU per resize under load than splitting it into bands).
        let cores = ProcessInfo.processInfo.activeProcessorCount
        Resampler.maximumConcurrency = max(1, cores / max(1, configuration.concurrency))
        var serving = configuration
        let redisStorage: RedisSharedStorage?
        do {
            redisStorage = try redis.storage()
            // A refused login ends the command; unreachable nodes are logged and count as misses.
            try await redisStorage?.start()
        } catch {
            FileHandle.standardError.write(Data("alcedo: \(error)\n".utf8))
            throw ExitCode.failure
        }
        defer { redisStorage?.shutdown() }
        if let redisStorage { serving.sharedCacheTier = redis.tier(over: redisStorage) }
        var sampleServer: DemoHTTPServer?
        var sampleURL: String?
        if samples {
            let loaded = try DemoSamples.load(from: DemoSamples.locate())
            let server = try await DemoHTTPServer.start(samples: loaded)
            sampleServer = server
            serving.trustedSourceHosts.insert("127.0.0.1")
            let first = loaded.first { $0.name.hasSuffix(".jpg") } ?? loaded[0]
            sampleURL = server.url("/" + first.name).absoluteString
        }
        let server = ImageServer(configuration: serving)
        let key = serving.keys.first
        let example = sampleURL
        try await server.run { address in
            // Written unbuffered: a supervisor reading the pipe sees the line at once.
            FileHandle.standardOutput.write(Data("listening on \(address)\n".utf8))
            if let sample = example {
                let url = ImgproxyURLBuilder(baseURL: address, key: key).url(for: sample, options: Self.exampleOptions)
                FileHandle.standardError.write(Data("example: curl -o thumb.webp -H 'Accept: image/webp' '\(url)'\n".utf8))
            }
        }
        await sampleServer?.shutdown()
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
        let bytes: Data
        if let text = watermarkData ?? env.string("WATERMARK_DATA") {
            guard let data = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw ServerConfigurationError.invalidValue("--watermark-data", message: "is not base64")
            }
            bytes = data
        } else if let path = watermarkPath ?? env.string("WATERMARK_PATH") {
            do {
                bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw ServerConfigurationError.invalidValue("--watermark-path", message: "cannot read \(path): \(error.localizedDescription)")
            }
        } else if let text = watermarkUrl ?? env.string("WATERMARK_URL") {
            guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https" else {
                throw ServerConfigurationError.invalidValue("--watermark-url", message: "\"\(text)\" is not an http(s) URL")
            }
            let downloader = ImageDownloader(name: "alcedo-watermark")
            let fetched: Result<Data, AlcedoError>
            do {
                fetched = .success(try await downloader.downloadData(with: url).data)
            } catch {
                fetched = .failure(error)
            }
            await downloader.shutdown()
            switch fetched {
            case .success(let data): bytes = data
            case .failure(let error):
                throw ServerConfigurationError.invalidValue("--watermark-url", message: "cannot fetch \(text): \(error)")
            }
        } else {
            return nil
        }
        do {
            return try WatermarkImage(data: bytes, opacity: opacity)
        } catch {
            throw ServerConfigurationError.invalidValue("watermark", message: "the image does not decode: \(error)")
        }
    }

    private func makeConfiguration(_ env: inout ServeEnvironment) throws -> ImageServerConfiguration {
        var c = ImageServerConfiguration()
        c.host = host ?? env.string("HOST") ?? c.host
        c.port = try port ?? env.int("PORT") ?? c.port
        guard (0...65535).contains(c.port) else { throw ServerConfigurationError.invalidValue("--port", message: "must be in 0...65535") }
        if let dir = cacheDir ?? env.string("CACHE_DIR") { c.cacheDirectory = URL(fileURLWithPath: dir, isDirectory: true) }
        let keys = key.isEmpty ? env.list("KEY") : key
        let salts = salt.isEmpty ? env.list("SALT") : salt
        guard keys.count == salts.count else { throw ServerConfigurationError.unpairedKeys(keys: keys.count, salts: salts.count) }
        c.keys = try zip(keys, salts).map { try SigningKey(hexKey: $0, hexSalt: $1) }
        c.allowedSources = allowedSources.isEmpty ? env.list("ALLOWED_SOURCES") : allowedSources
        c.allowPrivateNetworks = try allowPrivateNetworks || (env.bool("ALLOW_PRIVATE_NETWORKS") ?? false)
        c.trustedSourceHosts = Set((trustedSourceHost.isEmpty ? env.list("TRUSTED_SOURCE_HOST") : trustedSourceHost).map { $0.lowercased() })
        c.maxSourceResolution = try maxSrcResolution ?? env.double("MAX_SRC_RESOLUTION") ?? c.maxSourceResolution
        c.maxSourceBytes = try maxSrcBytes ?? env.int("MAX_SRC_BYTES") ?? c.maxSourceBytes
        c.maxResultSide = try maxResultSide ?? env.int("MAX_RESULT_SIDE") ?? c.maxResultSide
        if let seconds = try downloadTimeout ?? env.double("DOWNLOAD_TIMEOUT") { c.downloadTimeout = .milliseconds(Int(seconds * 1000)) }
        c.concurrency = try concurrency ?? env.int("CONCURRENCY") ?? c.concurrency
        c.queueLength = try queue ?? env.int("QUEUE") ?? c.queueLength
        c.ttl = try ttl ?? env.int("TTL") ?? c.ttl
        c.autoWebP = try autoWebp ?? env.bool("AUTO_WEBP") ?? c.autoWebP
        c.autoAVIF = try autoAvif ?? env.bool("AUTO_AVIF") ?? c.autoAVIF
        if let text = formatQuality ?? env.string("FORMAT_QUALITY") { try c.setFormatQuality(text) }
        c.avifSpeed = try avifSpeed ?? env.int("AVIF_SPEED") ?? c.avifSpeed
        guard (0...10).contains(c.avifSpeed) else {
            throw ServerConfigurationError.invalidValue("--avif-speed", message: "must be in 0...10, got \(c.avifSpeed)")
        }
        c.resultCacheBytes = try resultCacheBytes ?? env.int("RESULT_CACHE_BYTES") ?? c.resultCacheBytes
        c.memoryCacheBytes = try memoryCacheBytes ?? env.int("MEMORY_CACHE_BYTES") ?? c.memoryCacheBytes
        guard c.resultCacheBytes >= 0, c.memoryCacheBytes >= 0 else {
            throw ServerConfigurationError.invalidValue("cache sizes", message: "--result-cache-bytes and --memory-cache-bytes must not be negative")
        }
        for text in preset.isEmpty ? env.list("PRESET") : preset { try c.addPreset(text) }
        try c.validatePresets()
        c.onlyPresets = try onlyPresets || (env.bool("ONLY_PRESETS") ?? false)
        c.allowSecurityOptions = try allowSecurityOptions || (env.bool("ALLOW_SECURITY_OPTIONS") ?? false)
        if let text = preferredFormats {
            try c.setPreferredFormats(text.split(separator: ",").map(String.init))
        } else if !env.list("PREFERRED_FORMATS").isEmpty {
            try c.setPreferredFormats(env.list("PREFERRED_FORMATS"))
        }
        c.maxResultDimension = try maxResultDimension ?? env.int("MAX_RESULT_DIMENSION") ?? c.maxResultDimension
        guard c.maxResultDimension >= 0 else {
            throw ServerConfigurationError.invalidValue("--max-result-dimension", message: "must not be negative")
        }
        guard c.maxSourceResolution > 0, c.maxSourceBytes > 0, c.maxResultSide > 0, c.concurrency > 0, c.queueLength >= 0, c.ttl >= 0 else {
            throw ServerConfigurationError.invalidValue("limits", message: "sizes, concurrency and ttl must be positive (queue may be 0)")
        }
        return c
    }
}

/// `ALCEDO_<NAME>` environment variables, read as the flags they stand for.
struct ServeEnvironment {
    let values: [String: String]

    init(_ values: [String: String]) { self.values = values }

    func string(_ name: String) -> String? {
        guard let value = values["ALCEDO_" + name], !value.isEmpty else { return nil }
        return value
    }

    func int(_ name: String) throws -> Int? {
        guard let text = string(name) else { return nil }
        guard let value = Int(text) else { throw ServerConfigurationError.invalidValue("ALCEDO_" + name, message: "\"\(text)\" is not an integer") }
        return value
    }

    func double(_ name: String) throws -> Double? {
        guard let text = string(name) else { return nil }
        guard let value = Double(text) else { throw ServerConfigurationError.invalidValue("ALCEDO_" + name, message: "\"\(text)\" is not a number") }
        return value
    }

    func bool(_ name: String) throws -> Bool? {
        guard let text = string(name)?.lowercased() else { return nil }
        switch text {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: throw ServerConfigurationError.invalidValue("ALCEDO_" + name, message: "\"\(text)\" is not a boolean")
        }
    }

    func list(_ name: String) -> [String] {
        string(name)?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } ?? []
    }
}
