import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why an imgproxy path was refused. Each case names what was wrong in one line
/// (``description``); the server answers 400, or 403 for signatures.
public enum ImgproxyURLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The path has no signature segment, no options or no source.
    case malformedPath(String)
    /// An option name imgproxy and Alcedo do not know.
    case unknownOption(String)
    /// A known option with arguments it does not accept.
    case invalidArgument(option: String, message: String)
    /// A preset named by `preset`/`pr` that is not configured.
    case unknownPreset(String)
    /// The source URL is not valid base64, not valid percent-encoding, or not a URL.
    case invalidSource(String)
    /// The extension names no format Alcedo can write.
    case unsupportedFormat(String)
    /// The signature is missing or wrong for every configured key (403).
    case invalidSignature
    /// `insecure` (or `_`) was used while keys are configured (403).
    case signatureRequired
    /// The signature segment holds a `:`: it is an option, so the signature is missing (403).
    case malformedSignature
    /// A security option (`msr`, `msfs`, `maf`, `mafr`, `mrd`) while the server does not allow them (403).
    case securityOptionsNotAllowed(String)
    /// `expires` is in the past (404, as imgproxy).
    case expired
    /// An option in a URL of a server that takes presets only (`--only-presets`).
    case presetsOnly(String)
    /// An option outside the server's allowed list (`--allowed-processing-options`; 404, as imgproxy).
    case optionNotAllowed(String)

    public var description: String {
        switch self {
        case .malformedPath(let message): return "malformed path: \(message)"
        case .unknownOption(let name): return "unknown option \"\(name)\""
        case .invalidArgument(let option, let message): return "option \"\(option)\": \(message)"
        case .unknownPreset(let name): return "option \"preset\": no preset named \"\(name)\""
        case .invalidSource(let message): return "invalid source URL: \(message)"
        case .unsupportedFormat(let name): return "unsupported output format \"\(name)\""
        case .invalidSignature: return "invalid signature"
        case .signatureRequired: return "a signature is required (the server has keys)"
        case .malformedSignature: return "malformed path: the first segment must be the signature, not an option"
        case .securityOptionsNotAllowed(let name):
            return "option \"\(name)\": security options are not allowed (start the server with --allow-security-options)"
        case .expired: return "the URL has expired (option \"expires\")"
        case .presetsOnly(let name): return "\"\(name)\" is not a preset: this server takes preset names only in URLs"
        case .optionNotAllowed(let name): return "option \"\(name)\" is not allowed on this server (--allowed-processing-options)"
        }
    }

    /// `true` for the signature errors (403), `false` for the others (400).
    public var isSignatureError: Bool {
        self == .invalidSignature || self == .signatureRequired || self == .malformedSignature
    }

    /// The HTTP status Alcedo answers: 403 for signatures and refused security options, 404
    /// for an expired URL and an option the server does not allow (as imgproxy), 400 for the
    /// other bad options.
    public var status: Int {
        switch self {
        case .invalidSignature, .signatureRequired, .malformedSignature, .securityOptionsNotAllowed: return 403
        case .expired, .optionNotAllowed: return 404
        default: return 400
        }
    }

    /// The status imgproxy 4 answers for the same URL (404 for option errors).
    public var imgproxyStatus: Int {
        switch self {
        case .invalidSignature, .signatureRequired, .malformedSignature, .securityOptionsNotAllowed: return 403
        case .unsupportedFormat: return 422
        default: return 404
        }
    }
}

/// What the parser needs besides the path: the presets and which option groups are allowed.
public struct ImgproxyParsingRules: Sendable {
    /// Named option lists for `preset:NAME`; a preset named `default` applies to every URL first
    /// (default none).
    public var presets: [String: [String]]
    /// Accept the security options `msr`, `msfs`, `maf`, `mafr` and `mrd` (default `false`: 403).
    public var allowSecurityOptions: Bool
    /// URLs carry preset names instead of options: `/SIGNATURE/PRESET:PRESET/SOURCE` (default `false`).
    public var onlyPresets: Bool
    /// The options every URL starts from before its own are applied (default: imgproxy's
    /// defaults, ``ProcessingOptions/init()``).
    public var defaults: ProcessingOptions
    /// What separates an option's arguments (default `:`; imgproxy's `IMGPROXY_ARGUMENTS_SEPARATOR`).
    public var argumentsSeparator = ":"
    /// A base64 source is followed by a file name segment, which is ignored (default `false`;
    /// imgproxy's `IMGPROXY_BASE64_URL_INCLUDES_FILENAME`).
    public var base64URLIncludesFilename = false
    /// The option names a URL may use, as written (`w` and `width` are two names); presets'
    /// own options are not checked (default `nil`: every option; imgproxy's
    /// `IMGPROXY_ALLOWED_PROCESSING_OPTIONS`).
    public var allowedOptions: Set<String>?

    /// Creates rules (defaults: no presets, no security options, options in the URL, imgproxy's
    /// default options).
    public init(presets: [String: [String]] = [:], allowSecurityOptions: Bool = false, onlyPresets: Bool = false,
                defaults: ProcessingOptions = ProcessingOptions()) {
        self.presets = presets
        self.allowSecurityOptions = allowSecurityOptions
        self.onlyPresets = onlyPresets
        self.defaults = defaults
    }
}

extension ProcessingOptions {
    /// The longest side accepted for width, height and crop sizes before ``dpr`` (imgproxy
    /// accepts any; the server's result limit still applies).
    static let maximumSide = 65_535

    /// Applies one option segment (`name:arg:arg`), expanding presets from `presets`.
    /// - Throws: ``ImgproxyURLError`` naming the option.
    mutating func apply(segment: Substring, presets: [String: [String]]) throws(ImgproxyURLError) {
        var warnings: [String] = []
        try apply(segment: segment, rules: ImgproxyParsingRules(presets: presets, allowSecurityOptions: true), usedPresets: [],
                  warnings: &warnings)
    }

    /// Applies one option segment under `rules`; `usedPresets` are the presets being expanded
    /// (a preset met again is skipped with a warning, as imgproxy does); non-fatal problems
    /// (a boolean that is not one) are added to `warnings`.
    mutating func apply(segment: Substring, rules: ImgproxyParsingRules, usedPresets: [String],
                        warnings: inout [String]) throws(ImgproxyURLError) {
        let parts = segment.split(separator: rules.argumentsSeparator, omittingEmptySubsequences: false).map(String.init)
        let name = parts[0]
        let args = Array(parts.dropFirst())
        func bool(_ text: String) -> Bool { Self.bool(text, name, &warnings) }
        switch name {
        case "resize", "rs":
            try Self.count(args, name, 0...8)
            if args.count > 0, !args[0].isEmpty { resizingType = try Self.resizingType(args[0], name) }
            if args.count > 1 { try applySize(Array(args[1...]), name, &warnings) }
        case "size", "s":
            try Self.count(args, name, 0...7)
            try applySize(args, name, &warnings)
        case "resizing_type", "rt":
            try Self.count(args, name, 1...1)
            resizingType = try Self.resizingType(args[0], name)
        case "width", "w":
            try Self.count(args, name, 1...1)
            width = try Self.side(args[0], name)
        case "height", "h":
            try Self.count(args, name, 1...1)
            height = try Self.side(args[0], name)
        case "min-width", "mw":
            try Self.count(args, name, 1...1)
            minWidth = try Self.side(args[0], name)
        case "min-height", "mh":
            try Self.count(args, name, 1...1)
            minHeight = try Self.side(args[0], name)
        case "zoom", "z":
            try Self.count(args, name, 1...2)
            zoomX = try Self.factor(args[0], name)
            zoomY = args.count > 1 ? try Self.factor(args[1], name) : zoomX
        case "dpr":
            try Self.count(args, name, 1...1)
            dpr = try Self.factor(args[0], name)
        case "enlarge", "el":
            try Self.count(args, name, 1...1)
            enlarge = bool(args[0])
        case "extend", "ex":
            try Self.count(args, name, 1...4)
            extend = bool(args[0])
            if args.count > 1 { extendGravity = try Self.gravity(Array(args[1...]), name, current: extendGravity, smart: false) }
        case "extend_aspect_ratio", "extend_ar", "exar":
            try Self.count(args, name, 1...4)
            extendAspectRatio = bool(args[0])
            if args.count > 1 {
                extendAspectRatioGravity = try Self.gravity(Array(args[1...]), name, current: extendAspectRatioGravity, smart: false)
            }
        case "gravity", "g":
            gravity = try Self.gravity(args, name, current: gravity, smart: true)
        case "crop", "c":
            try Self.count(args, name, 1...5)
            let w = try Self.double(args[0], name)
            let h = args.count > 1 ? try Self.double(args[1], name) : crop?.height ?? 0
            guard w >= 0, h >= 0, w <= Double(Self.maximumSide), h <= Double(Self.maximumSide) else {
                throw .invalidArgument(option: name, message: "width and height must be in 0...\(Self.maximumSide)")
            }
            var cropGravity = crop?.gravity
            if args.count > 2 { cropGravity = try Self.gravity(Array(args[2...]), name, current: cropGravity ?? .center, smart: true) }
            crop = w == 0 && h == 0 && cropGravity == nil ? nil : Crop(width: w, height: h, gravity: cropGravity)
        case "trim", "t":
            try Self.count(args, name, 1...4)
            if args[0].isEmpty {
                trim = nil
            } else {
                let threshold = try Self.double(args[0], name)
                guard threshold >= 0, threshold <= 255 else { throw .invalidArgument(option: name, message: "threshold must be in 0...255") }
                var value = trim ?? Trim()
                value.threshold = threshold
                value.color = args.count > 1 && !args[1].isEmpty ? try Self.color(args[1], name) : nil
                if args.count > 2, !args[2].isEmpty { value.equalHorizontal = bool(args[2]) }
                if args.count > 3, !args[3].isEmpty { value.equalVertical = bool(args[3]) }
                trim = value
            }
        case "padding", "pd":
            try Self.count(args, name, 1...4)
            var value = padding
            if !args[0].isEmpty { value.top = try Self.side(args[0], name) }
            if args.count > 1, !args[1].isEmpty { value.right = try Self.side(args[1], name) } else { value.right = value.top }
            if args.count > 2, !args[2].isEmpty { value.bottom = try Self.side(args[2], name) } else { value.bottom = value.top }
            if args.count > 3, !args[3].isEmpty { value.left = try Self.side(args[3], name) } else { value.left = value.right }
            padding = value
        case "flip", "fl":
            try Self.count(args, name, 1...2)
            if !args[0].isEmpty { flipHorizontal = bool(args[0]) }
            if args.count > 1, !args[1].isEmpty { flipVertical = bool(args[1]) }
        case "pixelate", "pix":
            try Self.count(args, name, 1...1)
            guard let value = Int(args[0]), (0...10_000).contains(value) else {
                throw .invalidArgument(option: name, message: "must be an integer in 0...10000, got \"\(args[0])\"")
            }
            pixelate = value > 1 ? value : 0
        case "watermark", "wm":
            try applyWatermark(args, name)
        case "quality", "q":
            try Self.count(args, name, 1...1)
            quality = try Self.quality(args[0], name)
        case "format_quality", "fq":
            guard !args.isEmpty, args.count % 2 == 0 else {
                throw .invalidArgument(option: name, message: "expects FORMAT:QUALITY pairs")
            }
            for index in stride(from: 0, to: args.count, by: 2) {
                guard let format = ImageFormat(fileExtension: args[index]), format != .unknown else {
                    throw .invalidArgument(option: name, message: "unknown image format \"\(args[index])\"")
                }
                let value = try Self.quality(args[index + 1], name)
                formatQuality[format] = value == 0 ? nil : value
            }
        case "format", "f", "ext":
            try Self.count(args, name, 1...1)
            format = try Self.format(args[0])
        case "background", "bg":
            if args.isEmpty || (args.count == 1 && args[0].isEmpty) {
                background = nil
            } else if args.count == 3 {
                var channels: [UInt8] = []
                for arg in args {
                    guard let value = UInt8(arg) else {
                        throw .invalidArgument(option: name, message: "colour channels must be integers in 0...255, got \"\(arg)\"")
                    }
                    channels.append(value)
                }
                background = RGBA(red: channels[0], green: channels[1], blue: channels[2])
            } else if args.count == 1 {
                background = try Self.color(args[0], name)
            } else {
                throw .invalidArgument(option: name, message: "expects R:G:B or a hex colour")
            }
        case "blur", "bl":
            try Self.count(args, name, 1...1)
            blur = try Self.radius(args[0], name)
        case "sharpen", "sh":
            try Self.count(args, name, 1...1)
            sharpen = try Self.radius(args[0], name)
        case "rotate", "rot":
            try Self.count(args, name, 1...1)
            guard let value = Int(args[0]), value % 90 == 0 else {
                throw .invalidArgument(option: name, message: "must be a multiple of 90, got \"\(args[0])\"")
            }
            rotate = ((value % 360) + 360) % 360
        case "auto_rotate", "ar":
            try Self.count(args, name, 1...1)
            autoRotate = bool(args[0])
        case "strip_metadata", "sm":
            try Self.count(args, name, 1...1)
            stripMetadata = bool(args[0])
        case "keep_copyright", "kcr":
            try Self.count(args, name, 1...1)
            keepCopyright = bool(args[0])
        case "strip_color_profile", "scp":
            try Self.count(args, name, 1...1)
            stripColorProfile = bool(args[0])
        case "enforce_thumbnail", "eth":
            try Self.count(args, name, 1...1)
            enforceThumbnail = bool(args[0])
        case "preserve_hdr", "ph":
            // Alcedo decodes to 8 bits per channel: accepted and without effect.
            try Self.count(args, name, 1...1)
            _ = bool(args[0])
        case "max_bytes", "mb":
            try Self.count(args, name, 1...1)
            guard let value = Int(args[0]), value >= 0 else {
                throw .invalidArgument(option: name, message: "must be a non-negative integer, got \"\(args[0])\"")
            }
            maxBytes = value
        case "cachebuster", "cb":
            try Self.count(args, name, 1...1)
            guard args[0].utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") }) else {
                throw .invalidArgument(option: name, message: "must be printable ASCII without spaces")
            }
            cacheBuster = args[0]
        case "skip_processing", "skp":
            for arg in args {
                guard let format = ImageFormat(fileExtension: arg), format != .unknown else {
                    throw .invalidArgument(option: name, message: "unknown image format \"\(arg)\"")
                }
                if !skipProcessing.contains(format) { skipProcessing.append(format) }
            }
        case "raw":
            try Self.count(args, name, 1...1)
            raw = bool(args[0])
        case "expires", "exp":
            try Self.count(args, name, 1...1)
            guard let value = Int(args[0]) else { throw .invalidArgument(option: name, message: "expects a Unix timestamp, got \"\(args[0])\"") }
            if value > 0, value < Int(Date().timeIntervalSince1970) { throw .expired }
            expires = value
        case "filename", "fn":
            try Self.count(args, name, 1...2)
            if args.count > 1, bool(args[1]) {
                let text = args[0].hasSuffix("=") ? String(args[0].prefix { $0 != "=" }) : args[0]
                guard let bytes = Base64URL.decode(text), let decoded = String(validating: bytes, as: UTF8.self) else {
                    throw .invalidArgument(option: name, message: "\"\(args[0])\" is not URL-safe base64 of a UTF-8 name")
                }
                filename = decoded.isEmpty ? nil : decoded
            } else {
                let decoded = args[0].percentDecoded ?? args[0]
                filename = decoded.isEmpty ? nil : decoded
            }
        case "return_attachment", "att":
            try Self.count(args, name, 1...1)
            returnAttachment = bool(args[0])
        case "max_src_resolution", "msr":
            try Self.securityAllowed(rules, name)
            try Self.count(args, name, 1...1)
            security.maxSourceResolution = try Self.megapixels(args[0], name)
        case "max_src_file_size", "msfs":
            try Self.securityAllowed(rules, name)
            try Self.count(args, name, 1...1)
            guard let value = Int(args[0]) else { throw .invalidArgument(option: name, message: "expects an integer, got \"\(args[0])\"") }
            security.maxSourceFileSize = value
        case "max_animation_frames", "maf":
            try Self.securityAllowed(rules, name)
            try Self.count(args, name, 1...1)
            guard let value = Int(args[0]), value > 0 else {
                throw .invalidArgument(option: name, message: "expects a positive integer, got \"\(args[0])\"")
            }
            security.maxAnimationFrames = value
        case "max_animation_frame_resolution", "mafr":
            try Self.securityAllowed(rules, name)
            try Self.count(args, name, 1...1)
            security.maxAnimationFrameResolution = try Self.megapixels(args[0], name)
        case "max_result_dimension", "mrd":
            try Self.securityAllowed(rules, name)
            try Self.count(args, name, 1...1)
            guard let value = Int(args[0]) else { throw .invalidArgument(option: name, message: "expects an integer, got \"\(args[0])\"") }
            security.maxResultDimension = max(0, value)
        case "page", "pg":
            try Self.count(args, name, 1...1)
            guard let value = Int(args[0]), value >= 0, value < 100_000 else {
                throw .invalidArgument(option: name, message: "must be a frame number in 0..<100000, got \"\(args[0])\"")
            }
            page = value
        case "preset", "pr":
            guard !args.isEmpty else { throw .invalidArgument(option: name, message: "expects at least one preset name") }
            try applyPresets(args, rules: rules, usedPresets: usedPresets, warnings: &warnings)
        case "round_corner":
            try Self.count(args, name, 1...1)
            let value = try Self.double(args[0], name)
            guard value >= 0, value <= Double(Self.maximumSide) else {
                throw .invalidArgument(option: name, message: "radius must be in 0...\(Self.maximumSide)")
            }
            roundCorner = value
        case "border":
            try Self.count(args, name, 1...2)
            let value = try Self.double(args[0], name)
            guard value >= 0, value <= 1000 else { throw .invalidArgument(option: name, message: "width must be in 0...1000") }
            var color = RGBA.black
            if args.count > 1 { color = try Self.color(args[1], name) }
            border = value == 0 ? nil : Border(width: value, color: color)
        case "tint":
            try Self.count(args, name, 1...1)
            tint = try Self.color(args[0], name)
        case "round_corner_color":
            try Self.count(args, name, 1...1)
            roundCornerColor = try Self.color(args[0], name)
        case "crop_region":
            try Self.count(args, name, 4...4)
            let sides = try args.map { (text: String) throws(ImgproxyURLError) -> Int in try Self.side(text, name) }
            region = Region(left: sides[0], top: sides[1], right: sides[2], bottom: sides[3])
        case "adaptive":
            try Self.count(args, name, 1...1)
            adaptiveOrientation = Self.bool(args[0], name, &warnings)
        case "focus_pixel":
            try Self.count(args, name, 2...2)
            focusPixel = FocusPixel(x: try Self.offset(args[0], name), y: try Self.offset(args[1], name))
        case "max_age":
            try Self.count(args, name, 1...1)
            guard let value = Int(args[0]), (0...315_360_000).contains(value) else {
                throw .invalidArgument(option: name, message: "must be seconds in 0...315360000, got \"\(args[0])\"")
            }
            maxAge = value
        default:
            throw .unknownOption(name)
        }
    }

    /// Expands presets by name; one already being expanded is skipped with a warning.
    mutating func applyPresets(_ names: [String], rules: ImgproxyParsingRules, usedPresets: [String],
                               warnings: inout [String]) throws(ImgproxyURLError) {
        for preset in names {
            guard let segments = rules.presets[preset] else { throw .unknownPreset(preset) }
            if usedPresets.contains(preset) {
                warnings.append("recursive use of preset \"\(preset)\" skipped")
                continue
            }
            for inner in segments {
                try apply(segment: Substring(inner), rules: rules, usedPresets: usedPresets + [preset], warnings: &warnings)
            }
        }
    }

    /// `WIDTH:HEIGHT:ENLARGE:EXTEND[:GRAVITY…]`, each part optional (an empty one keeps the value).
    private mutating func applySize(_ args: [String], _ name: String, _ warnings: inout [String]) throws(ImgproxyURLError) {
        if args.count > 0, !args[0].isEmpty { width = try Self.side(args[0], name) }
        if args.count > 1, !args[1].isEmpty { height = try Self.side(args[1], name) }
        if args.count > 2, !args[2].isEmpty { enlarge = Self.bool(args[2], name, &warnings) }
        if args.count > 3, !args[3].isEmpty {
            extend = Self.bool(args[3], name, &warnings)
            if args.count > 4 { extendGravity = try Self.gravity(Array(args[4...]), name, current: extendGravity, smart: false) }
        }
    }

    private mutating func applyWatermark(_ args: [String], _ name: String) throws(ImgproxyURLError) {
        try Self.count(args, name, 1...7)
        let opacity = try Self.double(args[0], name)
        guard (0...1).contains(opacity) else { throw .invalidArgument(option: name, message: "opacity must be in 0...1, got \(args[0])") }
        guard opacity > 0 else {
            watermark = nil
            return
        }
        var value = watermark ?? Watermark(opacity: opacity)
        value.opacity = opacity
        var rest = args.dropFirst()
        if let position = rest.first, !position.isEmpty {
            rest = rest.dropFirst()
            switch position {
            case "re": value.position = .replicate
            case "fp":
                guard rest.count >= 2 else { throw .invalidArgument(option: name, message: "fp expects x:y") }
                let x = try Self.double(rest[rest.startIndex], name), y = try Self.double(rest[rest.startIndex + 1], name)
                guard (0...1).contains(x), (0...1).contains(y) else {
                    throw .invalidArgument(option: name, message: "focus point coordinates must be in 0...1")
                }
                value.position = .focusPoint(x: x, y: y)
                value.xOffset = 0
                value.yOffset = 0
                rest = rest.dropFirst(2)
                if let scale = rest.first, !scale.isEmpty { value.scale = try Self.watermarkScale(scale, name) }
                guard rest.count <= 1 else { throw .invalidArgument(option: name, message: "too many arguments after fp:x:y") }
                watermark = value
                return
            default:
                guard let compass = Compass(rawValue: position), compass != .smart else {
                    throw .invalidArgument(option: name, message: "unknown position \"\(position)\" (ce no so ea we nowe noea sowe soea re fp)")
                }
                value.position = .compass(compass)
            }
        } else if !rest.isEmpty {
            rest = rest.dropFirst()
        }
        let extra = Array(rest)
        guard extra.count <= 3 else { throw .invalidArgument(option: name, message: "expects opacity:position:x:y:scale") }
        if extra.count > 0, !extra[0].isEmpty { value.xOffset = try Self.offset(extra[0], name) }
        if extra.count > 1, !extra[1].isEmpty { value.yOffset = try Self.offset(extra[1], name) }
        if extra.count > 2, !extra[2].isEmpty { value.scale = try Self.watermarkScale(extra[2], name) }
        watermark = value
    }

    private static func count(_ args: [String], _ name: String, _ range: ClosedRange<Int>) throws(ImgproxyURLError) {
        guard range.contains(args.count) else {
            let expected = range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range.lowerBound) to \(range.upperBound)"
            throw .invalidArgument(option: name, message: "expects \(expected) arguments, got \(args.count)")
        }
    }

    private static func resizingType(_ text: String, _ name: String) throws(ImgproxyURLError) -> ResizingType {
        guard let type = ResizingType(rawValue: text) else {
            throw .invalidArgument(option: name, message: "unknown resizing type \"\(text)\" (fit, fill, fill-down, force, auto, cover)")
        }
        return type
    }

    private static func side(_ text: String, _ name: String) throws(ImgproxyURLError) -> Int {
        guard let value = Int(text), (0...maximumSide).contains(value) else {
            throw .invalidArgument(option: name, message: "size must be an integer in 0...\(maximumSide), got \"\(text)\"")
        }
        return value
    }

    /// imgproxy's booleans (Go's `strconv.ParseBool`); anything else is `false` with a warning.
    static func bool(_ text: String, _ name: String, _ warnings: inout [String]) -> Bool {
        switch text {
        case "1", "t", "T", "true", "TRUE", "True": return true
        case "0", "f", "F", "false", "FALSE", "False": return false
        default:
            warnings.append("option \"\(name)\": \"\(text)\" is not a boolean, taken as false")
            return false
        }
    }

    private static func factor(_ text: String, _ name: String) throws(ImgproxyURLError) -> Double {
        let value = try double(text, name)
        guard value > 0, value <= 100 else { throw .invalidArgument(option: name, message: "must be a number in (0, 100], got \(text)") }
        return value
    }

    private static func quality(_ text: String, _ name: String) throws(ImgproxyURLError) -> Int {
        guard let value = Int(text), (0...100).contains(value) else {
            throw .invalidArgument(option: name, message: "must be an integer in 0...100, got \"\(text)\"")
        }
        return value
    }

    private static func megapixels(_ text: String, _ name: String) throws(ImgproxyURLError) -> Double {
        let value = try double(text, name)
        guard value >= 0, value <= 100_000 else { throw .invalidArgument(option: name, message: "must be megapixels in 0...100000, got \(text)") }
        return value
    }

    private static func offset(_ text: String, _ name: String) throws(ImgproxyURLError) -> Double {
        let value = try double(text, name)
        guard abs(value) <= Double(maximumSide) else { throw .invalidArgument(option: name, message: "offsets must be within \(maximumSide) pixels") }
        return value
    }

    private static func watermarkScale(_ text: String, _ name: String) throws(ImgproxyURLError) -> Double {
        let value = try double(text, name)
        guard value >= 0, value <= 100 else { throw .invalidArgument(option: name, message: "scale must be in 0...100, got \(text)") }
        return value
    }

    private static func securityAllowed(_ rules: ImgproxyParsingRules, _ name: String) throws(ImgproxyURLError) {
        guard rules.allowSecurityOptions else { throw .securityOptionsNotAllowed(name) }
    }

    private static func double(_ text: String, _ name: String) throws(ImgproxyURLError) -> Double {
        // Digits, sign, point and exponent only: no "inf", "nan" or hexadecimal floats.
        guard let value = Double(text), value.isFinite,
              text.utf8.allSatisfy({ (0x30...0x39).contains($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-")
                  || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) else {
            throw .invalidArgument(option: name, message: "expects a number, got \"\(text)\"")
        }
        return value
    }

    private static func radius(_ text: String, _ name: String) throws(ImgproxyURLError) -> Double {
        let value = try double(text, name)
        guard value >= 0, value <= 100 else { throw .invalidArgument(option: name, message: "sigma must be in 0...100, got \(text)") }
        return value
    }

    /// An output format by imgproxy's name or extension: one Alcedo can write (JPEG, PNG, WebP,
    /// GIF, AVIF, and any other with an encoder registered in ``ImageCodecRegistry``).
    static func format(_ text: String) throws(ImgproxyURLError) -> ImageFormat {
        guard let format = ImageFormat(fileExtension: text), format != .unknown else { throw .unsupportedFormat(text) }
        let normalized: ImageFormat = format == .apng ? .png : format
        guard [.jpeg, .png, .webp, .gif, .avif, .svg].contains(normalized)
            || ImageCodecRegistry.shared.encodableFormats.contains(normalized) else { throw .unsupportedFormat(text) }
        return normalized
    }

    /// A hex colour: `RGB` (each digit doubled), `RRGGBB` or `RRGGBBAA`.
    static func color(_ text: String, _ name: String) throws(ImgproxyURLError) -> RGBA {
        if text.utf8.count == 3, let bytes = SigningKey.bytes(fromHex: text.map { "\($0)\($0)" }.joined()) {
            return RGBA(red: bytes[0], green: bytes[1], blue: bytes[2])
        }
        guard text.count == 6 || text.count == 8, let bytes = SigningKey.bytes(fromHex: text) else {
            throw .invalidArgument(option: name, message: "expects a hex colour RGB, RRGGBB or RRGGBBAA, got \"\(text)\"")
        }
        return RGBA(red: bytes[0], green: bytes[1], blue: bytes[2], alpha: bytes.count == 4 ? bytes[3] : 255)
    }

    /// `TYPE[:X[:Y]]` or `fp:X:Y`. An empty offset keeps the one of `current` (imgproxy sets
    /// only the values given); `smart` allows `sm`, which takes no offsets.
    private static func gravity(_ args: [String], _ name: String, current: Gravity, smart: Bool) throws(ImgproxyURLError) -> Gravity {
        guard let first = args.first, !first.isEmpty else { throw .invalidArgument(option: name, message: "expects a gravity type") }
        var (x, y): (Double, Double)
        switch current {
        case .compass(_, let cx, let cy): (x, y) = (cx, cy)
        case .focusPoint(let fx, let fy): (x, y) = (fx, fy)
        }
        if first == "fp" {
            guard args.count == 3 else { throw .invalidArgument(option: name, message: "fp expects x:y") }
            if !args[1].isEmpty { x = try double(args[1], name) }
            if !args[2].isEmpty { y = try double(args[2], name) }
            guard (0...1).contains(x), (0...1).contains(y) else {
                throw .invalidArgument(option: name, message: "focus point coordinates must be in 0...1")
            }
            return .focusPoint(x: x, y: y)
        }
        guard let compass = Compass(rawValue: first), smart || compass != .smart else {
            throw .invalidArgument(option: name, message: "unknown gravity \"\(first)\" (ce no so ea we nowe noea sowe soea\(smart ? " sm" : "") fp)")
        }
        if compass == .smart {
            guard args.count == 1 else { throw .invalidArgument(option: name, message: "sm takes no offsets") }
            return .compass(.smart, xOffset: 0, yOffset: 0)
        }
        guard args.count <= 3 else { throw .invalidArgument(option: name, message: "expects a type and optionally x and y offsets") }
        if args.count > 1, !args[1].isEmpty { x = try offset(args[1], name) }
        if args.count > 2, !args[2].isEmpty { y = try offset(args[2], name) }
        return .compass(compass, xOffset: x, yOffset: y)
    }
}
