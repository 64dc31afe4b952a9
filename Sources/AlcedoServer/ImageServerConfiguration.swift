import Alcedo
import Foundation

/// Everything `alcedo serve` can be told; every property has the default stated on it.
public struct ImageServerConfiguration: Sendable {
    /// The address to listen on (default `127.0.0.1`).
    public var host: String = "127.0.0.1"
    /// The port (default 8080; 0 picks a free one).
    public var port: Int = 8080
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
    /// Requests processed at the same time (default: the number of cores).
    public var concurrency: Int = ProcessInfo.processInfo.activeProcessorCount
    /// Requests waiting for a processing slot beyond ``concurrency`` (default 256); more get 429.
    public var queueLength: Int = 256
    /// `Cache-Control: max-age` of image responses, in seconds (default one year, 31,536,000).
    public var ttl: Int = 31_536_000
    /// Named option lists for `preset:NAME` (default none), as `--preset NAME=OPTIONS` gives them.
    public var presets: [String: [String]] = [:]
    /// Serve WebP to clients that accept it when the URL names no format (default `true`).
    public var autoWebP = true
    /// Serve AVIF to clients that accept it when the URL names no format, preferred over WebP
    /// (default `false`, as imgproxy's `IMGPROXY_AUTO_AVIF`: the AV1 encode is the costliest step
    /// of a request, and its cost grows fast as ``avifSpeed`` goes down). See ``FormatNegotiation``
    /// for which sources and results it applies to.
    public var autoAVIF = false
    /// The quality used when the URL sets none and ``formatQuality`` has no entry for the
    /// output format (default 80, as imgproxy's `IMGPROXY_QUALITY`).
    public var defaultQuality = 80
    /// The quality of a format when the URL sets none (default WebP 79 and AVIF 63, as
    /// imgproxy's `IMGPROXY_FORMAT_QUALITY`); formats not listed use ``defaultQuality``.
    public var formatQuality: [ImageFormat: Int] = [.webp: 79, .avif: 63]
    /// The AV1 encoder's speed for AVIF results, 0 (slowest, smallest) to 10 (fastest)
    /// (default 8, as imgproxy's `IMGPROXY_AVIF_SPEED`).
    public var avifSpeed = 8
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
    /// (`AlcedoRedis` provides one on Redis; `alcedo serve --redis` sets it).
    public var sharedCacheTier: SharedCacheTier?

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
    /// The options every URL starts from before its own are applied (default: imgproxy's
    /// defaults, ``ProcessingOptions/init()``). imgproxy's `IMGPROXY_AUTO_ROTATE` and
    /// `IMGPROXY_STRIP_METADATA` set ``ProcessingOptions/autoRotate`` and
    /// ``ProcessingOptions/stripMetadata`` here.
    public var defaultOptions = ProcessingOptions()
    /// A second address serving only `/metrics` (default `nil`: `/metrics` is served on the
    /// main address). When set, the main address no longer answers `/metrics`, as imgproxy's
    /// `IMGPROXY_PROMETHEUS_BIND` keeps metrics off the public port.
    public var metricsAddress: BindAddress?
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
    /// Mixed into every `ETag` (default empty): change it after a configuration change that
    /// alters results so clients and CDNs stop revalidating old ones. imgproxy's `IMGPROXY_ETAG_BUSTER`.
    public var etagBuster = ""
    /// The earliest `Last-Modified` sent (default `nil`: the source's own): a result whose
    /// source is older, or has no date, is dated this, so clients and CDNs that revalidate
    /// with `If-Modified-Since` fetch it again after a configuration change. imgproxy's
    /// `IMGPROXY_LAST_MODIFIED_BUSTER`.
    public var lastModifiedBuster: Date?

    /// The defaults.
    public init() {}

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
        var probe = ProcessingOptions()
        for option in options {
            do throws(ImgproxyURLError) {
                try probe.apply(segment: Substring(option), presets: presets)
            } catch {
                throw .invalidPresetOption(name: name, error: error)
            }
        }
        presets[name] = options
    }

    /// The quality a result in `format` gets when its URL sets none: ``formatQuality``, else
    /// ``defaultQuality``, kept within 1...100.
    public func quality(for format: ImageFormat) -> Int {
        min(100, max(1, formatQuality[format] ?? defaultQuality))
    }

    /// The format negotiation ``autoWebP`` and ``autoAVIF`` make (each also on when its
    /// ``enforceWebP`` or ``enforceAVIF`` is).
    public var negotiation: FormatNegotiation {
        FormatNegotiation(autoWebP: autoWebP || enforceWebP, autoAVIF: autoAVIF || enforceAVIF)
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
            let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            let name = pair.first?.lowercased() ?? ""
            let format = ImageFormat(fileExtension: name)
            let writable = format.map { [.jpeg, .png, .webp, .gif, .avif].contains($0) } ?? false
            guard pair.count == 2, writable || name == "jxl" else {
                throw .invalidValue("format quality", message: "\"\(item)\" is not FORMAT=QUALITY with FORMAT jpeg, png, webp, gif or avif")
            }
            guard let quality = Int(pair[1]), (1...100).contains(quality) else {
                throw .invalidValue("format quality", message: "\"\(pair[1])\" is not a quality in 1...100")
            }
            if let format, writable { formatQuality[format] = quality }
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
