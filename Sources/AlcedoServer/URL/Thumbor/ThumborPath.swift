import Alcedo

/// What a thumbor URL says, before it becomes a processing plan: the parts of thumbor 7.8's
/// URL grammar (libthumbor's `Url.regex`), in order:
///
///     /(unsafe|SIGNATURE)/[debug/][meta/][trim[:top-left|:bottom-right][:TOLERANCE]/][LxT:RxB/]
///     [adaptive-][full-]fit-in/][[-]W|orig x [-]H|orig/][left|right|center/][top|bottom|middle/]
///     [smart/][filters:NAME(ARGS)[:NAME(ARGS)…]/]IMAGE
///
/// Each optional part matches when it can, as the regular expression's greedy optional groups
/// do, but never so that the image is left empty (`/unsafe/300x200/` names the image `300x200/`).
public struct ThumborPath: Sendable, Hashable {
    /// `unsafe`, or `nil` when the URL is signed.
    public var unsafe: Bool
    /// The signature segment as written (URL-safe base64 of HMAC-SHA1, 28 characters), `nil` with `unsafe`.
    public var signature: String?
    /// The path after the signature segment, without its leading `/`: what the signature signs.
    public var signedPart: String
    /// `debug/`: the image as the trim and the manual crop leave it, not resized, cropped to the
    /// size or flipped (thumbor's debug mode, without its focal point outlines).
    public var debug = false
    /// `meta/`: answer thumbor's JSON description instead of the image.
    public var meta = false
    /// `trim`: `nil` when absent; the corner whose colour is trimmed and the tolerance.
    public var trim: Trim?
    /// `LxT:RxB`: the manual crop (all 0 when absent).
    public var crop = ThumborCrop()
    public var fitIn = false, adaptive = false, full = false
    /// The requested sizes: a number, 0 (absent), or `nil` for `orig`.
    public var width: Int? = 0, height: Int? = 0
    public var horizontalFlip = false, verticalFlip = false
    public var horizontalAlign: HorizontalAlign = .center
    public var verticalAlign: VerticalAlign = .middle
    public var smart = false
    /// The text between `filters:` and the `/` that ends the last filter's `)`, percent-decoded
    /// once (as Tornado hands it to thumbor: `%5B` in a curve is `[`).
    public var filters = ""
    /// The image part, percent-decoded once (as Tornado hands it to thumbor).
    public var image = ""

    public struct Trim: Sendable, Hashable {
        /// `true` for `:bottom-right` (default: the top-left pixel's colour).
        public var bottomRight = false
        /// The largest colour distance trimmed (default 0).
        public var tolerance = 0
    }

    public enum HorizontalAlign: String, Sendable, Hashable { case left, center, right }
    public enum VerticalAlign: String, Sendable, Hashable { case top, middle, bottom }

    /// The largest number a size, crop coordinate or tolerance may have; larger ones are refused.
    public static let maximumNumber = 1_000_000

    /// Parses a request path (without the query).
    /// - Throws: ``ThumborURLError`` for a path without an image, or numbers out of range.
    public static func parse(_ path: String) throws(ThumborURLError) -> ThumborPath {
        var rest = Substring(path)
        if rest.hasPrefix("/") { rest = rest.dropFirst() }
        var result = ThumborPath(unsafe: false, signature: nil, signedPart: "")
        // (?:(?:unsafe|HASH)/)? — HASH is non-greedy: the first segment, when another follows.
        if let slash = rest.firstIndex(of: "/"), rest.index(after: slash) < rest.endIndex {
            let first = rest[..<slash]
            if first == "unsafe" { result.unsafe = true } else { result.signature = String(first) }
            rest = rest[rest.index(after: slash)...]
        }
        result.signedPart = String(rest)
        guard try result.match(rest, step: 0) else { throw .noImage }
        return result
    }

    /// Matches the optional parts from `step` on, each tried first present, then absent;
    /// `true` when the image that is left is not empty.
    private mutating func match(_ text: Substring, step: Int) throws(ThumborURLError) -> Bool {
        guard step < 10 else {
            guard !text.isEmpty else { return false }
            image = text.percentDecoded ?? String(text)
            return true
        }
        let saved = self
        for (candidate, filterText) in try candidates(step, text) {
            if let filterText { filters = filterText.percentDecoded ?? filterText }
            if try match(text[candidate...], step: step + 1) { return true }
            self = saved
        }
        return try match(text, step: step + 1)
    }

    /// Where the text goes on after part `step` matched at its start (shortest first), with this
    /// value updated for the last one returned; empty when the part does not match.
    private mutating func candidates(_ step: Int, _ text: Substring) throws(ThumborURLError) -> [(Substring.Index, String?)] {
        guard let slash = text.firstIndex(of: "/") else { return [] }
        let segment = text[..<slash]
        let next = text.index(after: slash)
        switch step {
        case 0:
            guard segment == "debug" else { return [] }
            debug = true
        case 1:
            guard segment == "meta" else { return [] }
            meta = true
        case 2:
            guard let trim = try Self.trim(segment) else { return [] }
            self.trim = trim
        case 3:
            guard let crop = try Self.crop(segment) else { return [] }
            self.crop = crop
        case 4:
            switch segment {
            case "fit-in": fitIn = true
            case "full-fit-in": (fitIn, full) = (true, true)
            case "adaptive-fit-in": (fitIn, adaptive) = (true, true)
            case "adaptive-full-fit-in": (fitIn, adaptive, full) = (true, true, true)
            default: return []
            }
        case 5:
            guard try dimensions(segment) else { return [] }
        case 6:
            guard let align = HorizontalAlign(rawValue: String(segment)) else { return [] }
            horizontalAlign = align
        case 7:
            guard let align = VerticalAlign(rawValue: String(segment)) else { return [] }
            verticalAlign = align
        case 8:
            guard segment == "smart" else { return [] }
            smart = true
        default:
            // filters:(.+?\))/ — every ")/" after at least one character, shortest first.
            guard text.hasPrefix("filters:") else { return [] }
            let body = text.dropFirst("filters:".count)
            var ends: [(Substring.Index, String?)] = []
            var index = body.startIndex
            while index < body.endIndex, let close = body[index...].firstIndex(of: ")") {
                let after = body.index(after: close)
                if after < body.endIndex, body[after] == "/", close > body.startIndex {
                    ends.append((body.index(after: after), String(body[...close])))
                }
                index = after
            }
            return ends
        }
        return [(next, nil)]
    }

    /// `trim`, `trim:top-left`, `trim:bottom-right`, each optionally `:TOLERANCE`.
    private static func trim(_ segment: Substring) throws(ThumborURLError) -> Trim? {
        let parts = segment.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.first == "trim", parts.count <= 3 else { return nil }
        var trim = Trim()
        var rest = parts.dropFirst()
        if let corner = rest.first, corner == "top-left" || corner == "bottom-right" {
            trim.bottomRight = corner == "bottom-right"
            rest = rest.dropFirst()
        }
        if let tolerance = rest.first {
            guard rest.count == 1, let value = try number(tolerance) else { return nil }
            // thumbor reads the second part as the corner whatever it is: `trim:10` names no
            // tolerance, and a corner that is not `top-left` is the bottom-right one.
            if parts.count == 2 {
                trim.bottomRight = true
            } else {
                trim.tolerance = value
            }
        }
        return trim
    }

    /// `LxT:RxB`.
    private static func crop(_ segment: Substring) throws(ThumborURLError) -> ThumborCrop? {
        let corners = segment.split(separator: ":", omittingEmptySubsequences: false)
        guard corners.count == 2 else { return nil }
        var values: [Int] = []
        for corner in corners {
            let parts = corner.split(separator: "x", omittingEmptySubsequences: false)
            guard parts.count == 2 else { return nil }
            for part in parts {
                guard let value = try number(part) else { return nil }
                values.append(value)
            }
        }
        return ThumborCrop(left: values[0], top: values[1], right: values[2], bottom: values[3])
    }

    /// `[-][W|orig]x[-][H|orig]`.
    private mutating func dimensions(_ segment: Substring) throws(ThumborURLError) -> Bool {
        guard let x = segment.firstIndex(of: "x") else { return false }
        func side(_ text: Substring) throws(ThumborURLError) -> (flip: Bool, value: Int?)? {
            var text = text
            let flip = text.hasPrefix("-")
            if flip { text = text.dropFirst() }
            if text.isEmpty { return (flip, 0) }
            if text == "orig" { return (flip, nil) }
            guard let value = try Self.number(text) else { return nil }
            return (flip, value)
        }
        guard let w = try side(segment[..<x]), let h = try side(segment[segment.index(after: x)...]) else { return false }
        (horizontalFlip, width, verticalFlip, height) = (w.flip, w.value, h.flip, h.value)
        return true
    }

    /// Digits only; `nil` for anything else.
    /// - Throws: ``ThumborURLError/numberOutOfRange(_:)`` above ``maximumNumber``.
    private static func number(_ text: Substring) throws(ThumborURLError) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        guard text.utf8.count <= 7, let value = Int(text), value <= maximumNumber else { throw .numberOutOfRange(String(text)) }
        return value
    }
}

/// A manual crop in source pixels, thumbor's `LxT:RxB`.
public struct ThumborCrop: Sendable, Hashable {
    public var left = 0, top = 0, right = 0, bottom = 0

    public init(left: Int = 0, top: Int = 0, right: Int = 0, bottom: Int = 0) {
        self.left = left
        self.top = top
        self.right = right
        self.bottom = bottom
    }

    /// thumbor's `should_crop`: any coordinate above 0.
    public var isSet: Bool { left > 0 || top > 0 || right > 0 || bottom > 0 }

    /// Whether the crop keeps a pixel: its right side is past its left and its bottom below its
    /// top (thumbor drops an inverted or empty crop, and every focal point is kept then).
    var keepsPixels: Bool { left < right && top < bottom }

    /// Whether `(x, y)` lies inside the crop or on its edges (thumbor's test of a focal point
    /// against the manual crop); never for a crop that keeps no pixel.
    func contains(x: Double, y: Double) -> Bool {
        Double(left) <= x && x <= Double(right) && Double(top) <= y && y <= Double(bottom)
    }
}

/// Why a thumbor URL is refused; thumbor answers each with 400.
public enum ThumborURLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing is left for the image.
    case noImage
    /// Neither `unsafe` nor a signature, or both.
    case hashOrUnsafe
    /// `unsafe` while the server does not allow unsafe URLs.
    case unsafeNotAllowed
    /// The signature does not sign the path with the server's key.
    case invalidSignature
    /// A number too large to be a size (thumbor would fail later with a 500).
    case numberOutOfRange(String)
    /// A `convolution` kernel (`ITEMS,COLUMNS`) whose rows and columns are not both odd, or whose
    /// items do not fill the rows (thumbor 7.8 fails with a 500 on it).
    case invalidConvolutionKernel(String)

    /// thumbor's status: 400 for every one.
    public var status: Int { 400 }

    public var description: String {
        switch self {
        case .noImage: return "No original image was specified in the given URL"
        case .hashOrUnsafe: return "URL does not have hash or unsafe, or has both"
        case .unsafeNotAllowed: return "URL has unsafe but unsafe is not allowed by the config"
        case .invalidSignature: return "Malformed URL: the signature does not match"
        case .numberOutOfRange(let text): return "Malformed URL: \(text) is larger than \(ThumborPath.maximumNumber)"
        case .invalidConvolutionKernel(let text):
            return "Malformed URL: convolution(\(text)) needs an odd number of rows and of columns"
        }
    }
}
