import Alcedo
import Foundation

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
    /// `insecure` (or `_`) was used while keys are configured, or a signature without keys (403).
    case signatureRequired

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
        }
    }

    /// `true` for the signature errors (403), `false` for the others (400).
    public var isSignatureError: Bool {
        self == .invalidSignature || self == .signatureRequired
    }
}

extension ProcessingOptions {
    /// The longest side accepted for width, height and crop sizes before ``dpr`` (imgproxy
    /// accepts any; the server's result limit still applies).
    static let maximumSide = 65_535

    /// Applies one option segment (`name:arg:arg`), expanding presets from `presets`.
    /// - Throws: ``ImgproxyURLError`` naming the option.
    mutating func apply(segment: Substring, presets: [String: [String]], depth: Int = 0) throws(ImgproxyURLError) {
        let parts = segment.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let name = parts[0]
        let args = Array(parts.dropFirst())
        switch name {
        case "resize", "rs":
            try Self.count(args, name, 0...5)
            if args.count > 0, !args[0].isEmpty { resizingType = try Self.resizingType(args[0], name) }
            if args.count > 1 { width = try Self.side(args[1], name) }
            if args.count > 2 { height = try Self.side(args[2], name) }
            if args.count > 3 { enlarge = try Self.bool(args[3], name) }
            if args.count > 4 { extend = try Self.bool(args[4], name) }
        case "size", "s":
            try Self.count(args, name, 0...4)
            if args.count > 0 { width = try Self.side(args[0], name) }
            if args.count > 1 { height = try Self.side(args[1], name) }
            if args.count > 2 { enlarge = try Self.bool(args[2], name) }
            if args.count > 3 { extend = try Self.bool(args[3], name) }
        case "resizing_type", "rt":
            try Self.count(args, name, 1...1)
            resizingType = try Self.resizingType(args[0], name)
        case "width", "w":
            try Self.count(args, name, 1...1)
            width = try Self.side(args[0], name)
        case "height", "h":
            try Self.count(args, name, 1...1)
            height = try Self.side(args[0], name)
        case "dpr":
            try Self.count(args, name, 1...1)
            let value = try Self.double(args[0], name)
            guard value > 0, value <= 8 else { throw .invalidArgument(option: name, message: "must be in (0, 8], got \(args[0])") }
            dpr = value
        case "enlarge", "el":
            try Self.count(args, name, 1...1)
            enlarge = try Self.bool(args[0], name)
        case "extend", "ex":
            try Self.count(args, name, 1...1)
            extend = try Self.bool(args[0], name)
        case "gravity", "g":
            gravity = try Self.gravity(args, name)
        case "crop", "c":
            try Self.count(args, name, 2...5)
            let w = try Self.double(args[0], name), h = try Self.double(args[1], name)
            guard w >= 0, h >= 0, w <= Double(Self.maximumSide), h <= Double(Self.maximumSide) else {
                throw .invalidArgument(option: name, message: "width and height must be in 0...\(Self.maximumSide)")
            }
            var cropGravity: Gravity?
            if args.count > 2 { cropGravity = try Self.gravity(Array(args[2...]), name) }
            crop = Crop(width: w, height: h, gravity: cropGravity)
        case "quality", "q":
            try Self.count(args, name, 1...1)
            guard let value = Int(args[0]), (0...100).contains(value) else {
                throw .invalidArgument(option: name, message: "must be an integer in 0...100, got \"\(args[0])\"")
            }
            quality = value
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
            autoRotate = try Self.bool(args[0], name)
        case "strip_metadata", "sm":
            try Self.count(args, name, 1...1)
            stripMetadata = try Self.bool(args[0], name)
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
        case "page", "pg":
            try Self.count(args, name, 1...1)
            guard let value = Int(args[0]), value >= 0, value < 100_000 else {
                throw .invalidArgument(option: name, message: "must be a frame number in 0..<100000, got \"\(args[0])\"")
            }
            page = value
        case "preset", "pr":
            guard !args.isEmpty else { throw .invalidArgument(option: name, message: "expects at least one preset name") }
            guard depth < 4 else { throw .invalidArgument(option: name, message: "presets nest too deeply") }
            for preset in args {
                guard let segments = presets[preset] else { throw .unknownPreset(preset) }
                for inner in segments { try apply(segment: Substring(inner), presets: presets, depth: depth + 1) }
            }
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
        default:
            throw .unknownOption(name)
        }
    }

    private static func count(_ args: [String], _ name: String, _ range: ClosedRange<Int>) throws(ImgproxyURLError) {
        guard range.contains(args.count) else {
            let expected = range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range.lowerBound) to \(range.upperBound)"
            throw .invalidArgument(option: name, message: "expects \(expected) arguments, got \(args.count)")
        }
    }

    private static func resizingType(_ text: String, _ name: String) throws(ImgproxyURLError) -> ResizingType {
        guard let type = ResizingType(rawValue: text) else {
            throw .invalidArgument(option: name, message: "unknown resizing type \"\(text)\" (fit, fill, fill-down, force, auto)")
        }
        return type
    }

    private static func side(_ text: String, _ name: String) throws(ImgproxyURLError) -> Int {
        guard let value = Int(text), (0...maximumSide).contains(value) else {
            throw .invalidArgument(option: name, message: "size must be an integer in 0...\(maximumSide), got \"\(text)\"")
        }
        return value
    }

    private static func bool(_ text: String, _ name: String) throws(ImgproxyURLError) -> Bool {
        switch text {
        case "1", "t", "T", "true", "TRUE", "True": return true
        case "0", "f", "F", "false", "FALSE", "False", "": return false
        default: throw .invalidArgument(option: name, message: "expects a boolean (1/0, t/f, true/false), got \"\(text)\"")
        }
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

    static func format(_ text: String) throws(ImgproxyURLError) -> ImageFormat {
        switch text.lowercased() {
        case "jpg", "jpeg": return .jpeg
        case "png": return .png
        case "webp": return .webp
        case "gif": return .gif
        case "avif": return .avif
        case "heic": return .heic
        case "jxl": return .jxl
        case "svg": return .svg
        default: throw .unsupportedFormat(text)
        }
    }

    static func color(_ text: String, _ name: String) throws(ImgproxyURLError) -> RGBA {
        guard text.count == 6 || text.count == 8, let bytes = SigningKey.bytes(fromHex: text) else {
            throw .invalidArgument(option: name, message: "expects a hex colour RRGGBB or RRGGBBAA, got \"\(text)\"")
        }
        return RGBA(red: bytes[0], green: bytes[1], blue: bytes[2], alpha: bytes.count == 4 ? bytes[3] : 255)
    }

    private static func gravity(_ args: [String], _ name: String) throws(ImgproxyURLError) -> Gravity {
        guard let first = args.first else { throw .invalidArgument(option: name, message: "expects a gravity type") }
        if first == "fp" {
            guard args.count == 3 else { throw .invalidArgument(option: name, message: "fp expects x:y") }
            let x = try double(args[1], name), y = try double(args[2], name)
            guard (0...1).contains(x), (0...1).contains(y) else {
                throw .invalidArgument(option: name, message: "focus point coordinates must be in 0...1")
            }
            return .focusPoint(x: x, y: y)
        }
        guard let compass = Compass(rawValue: first) else {
            throw .invalidArgument(option: name, message: "unknown gravity \"\(first)\" (ce no so ea we nowe noea sowe soea sm fp)")
        }
        guard args.count == 1 || args.count == 3 else {
            throw .invalidArgument(option: name, message: "expects a type and optionally x and y offsets")
        }
        var x = 0.0, y = 0.0
        if args.count == 3 {
            x = try double(args[1], name)
            y = try double(args[2], name)
        }
        guard abs(x) <= Double(maximumSide), abs(y) <= Double(maximumSide) else {
            throw .invalidArgument(option: name, message: "offsets must be within \(maximumSide) pixels")
        }
        return .compass(compass, xOffset: x, yOffset: y)
    }
}
