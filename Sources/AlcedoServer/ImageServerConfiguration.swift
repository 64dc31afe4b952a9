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
    /// Serve JPEG XL to clients that accept it (`image/jxl`) when the URL names no format,
    /// preferred over AVIF and WebP, for still results (default `false`, as imgproxy's
    /// `IMGPROXY_AUTO_JXL`).
    public var autoJXL = false
    /// Remove scripts and event attributes from an SVG source served as SVG (default `true`, as
    /// imgproxy's `IMGPROXY_SANITIZE_SVG`); see ``SVGSanitizer``.
    public var sanitizeSVG = true
    /// The quality used when the URL sets none and ``formatQuality`` has no entry for the
    /// output format (default 80, as imgproxy's `IMGPROXY_QUALITY`).
    public var defaultQuality = 80
    /// The quality of a format when the URL sets none (default WebP 79, AVIF 63 and JPEG XL 77,
    /// as imgproxy's `IMGPROXY_FORMAT_QUALITY`); formats not listed (HEIC among them) use ``defaultQuality``.
    public var formatQuality: [ImageFormat: Int] = [.webp: 79, .avif: 63, .jxl: 77]
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

    /// The defaults.
    public init() {}

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

    /// The format negotiation ``autoWebP`` and ``autoAVIF`` make.
    public var negotiation: FormatNegotiation {
        FormatNegotiation(autoWebP: autoWebP, autoAVIF: autoAVIF, autoJXL: autoJXL)
    }

    /// Parses imgproxy's `IMGPROXY_FORMAT_QUALITY` form, `avif=63,webp=79`, into ``formatQuality``
    /// (the formats named replace their entries; the others stay).
    /// - Throws: ``ServerConfigurationError/invalidValue(_:message:)`` for an unknown format or
    ///   a quality outside 1...100.
    public mutating func setFormatQuality(_ text: String) throws(ServerConfigurationError) {
        for item in text.split(separator: ",") {
            let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, let format = ImageFormat(fileExtension: pair[0]),
                  [.jpeg, .png, .webp, .gif, .avif, .heic, .jxl].contains(format) else {
                throw .invalidValue("format quality", message: "\"\(item)\" is not FORMAT=QUALITY with FORMAT jpeg, png, webp, gif, avif, heic or jxl")
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
