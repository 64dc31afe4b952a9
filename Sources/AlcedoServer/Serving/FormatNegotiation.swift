import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The negotiable formats a client accepts, as its `Accept` header says.
///
/// A format counts only when the header names its type explicitly (`image/webp`,
/// `image/avif`) with a q-value above 0: `image/webp;q=0` says "not WebP", and the wildcards
/// `image/*` and `*/*` do not count, since browsers send them whatever they can decode.
public struct AcceptedImageFormats: Sendable, Hashable {
    /// The client accepts WebP (default `false`).
    public var webP: Bool
    /// The client accepts AVIF (default `false`).
    public var avif: Bool
    /// The client accepts JPEG XL (default `false`).
    public var jxl = false

    /// A set stated directly (both `false` by default).
    public init(webP: Bool = false, avif: Bool = false) {
        self.webP = webP
        self.avif = avif
    }

    /// A set stated directly, JPEG XL included.
    public init(webP: Bool = false, avif: Bool = false, jxl: Bool) {
        self.init(webP: webP, avif: avif)
        self.jxl = jxl
    }

    /// Reads the values of one or more `Accept` header fields (each a comma-separated list of
    /// media ranges with optional parameters such as `;q=0.8`).
    public init(acceptHeaders: some Sequence<String>) {
        self.init()
        for header in acceptHeaders {
            for range in header.split(separator: ",") {
                let parts = range.split(separator: ";")
                guard let type = parts.first?.trimmingSpaces().lowercased() else { continue }
                let accepted = Self.quality(parts.dropFirst()) > 0
                switch type {
                case "image/webp": webP = accepted
                case "image/avif": avif = accepted
                case "image/jxl": jxl = accepted
                default: break
                }
            }
        }
    }

    /// The `q` parameter of a media range (1 when absent or unreadable, as RFC 9110 defaults it).
    private static func quality(_ parameters: ArraySlice<Substring>) -> Double {
        for parameter in parameters {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingSpaces().lowercased() == "q" else { continue }
            return Double(pair[1].trimmingSpaces()) ?? 1
        }
        return 1
    }
}

/// How the server picks the output format when a URL names none (no extension, no `format`):
/// imgproxy 4's rule, from whether the result is animated or has alpha, what the client accepts,
/// and the source's format.
///
/// - An SVG source stays SVG (imgproxy answers it unprocessed, sanitized), unless
///   ``rasterizesSVG`` is on: it then follows the rules below as any other source.
/// - With ``autoJXL`` on, a client that accepts JPEG XL gets it for every still result; then,
///   with ``autoAVIF`` on, a client that accepts AVIF gets AVIF for every still result. An
///   animated result is never negotiated to either (`image/avif` in `Accept` does not promise
///   AV1 sequences: browsers shipped still AVIF before animated AVIF).
/// - With ``autoWebP`` on, a client that accepts WebP gets WebP, whatever the source: an
///   animated GIF becomes an animated WebP.
/// - Otherwise imgproxy's preferred formats decide (``preferredFormats``, default JPEG, PNG,
///   GIF): a source in the list keeps its format; any other (WebP, AVIF, HEIC, TIFF, JPEG XL…)
///   gets the first listed format that can hold the result: not JPEG when it has alpha, GIF or
///   WebP when it is animated; the first of the list when none can.
public struct FormatNegotiation: Sendable, Hashable {
    /// Negotiate WebP with clients that accept it (default `true`, `--auto-webp`).
    public var autoWebP: Bool
    /// Negotiate AVIF with clients that accept it, preferred over WebP (default `false`,
    /// `--auto-avif`, as imgproxy: the AV1 encode is the costliest step of a request).
    public var autoAVIF: Bool
    /// The formats used when nothing is negotiated, in order (default JPEG, PNG, GIF).
    public var preferredFormats: [ImageFormat]
    /// Negotiate JPEG XL with clients that accept it, preferred over AVIF and WebP (default
    /// `false`, `--auto-jxl`, as imgproxy's `IMGPROXY_AUTO_JXL`).
    public var autoJXL = false
    /// Rasterise SVG sources instead of answering them as SVG (default `false`; imgproxy's
    /// `IMGPROXY_ALWAYS_RASTERIZE_SVG`).
    public var rasterizesSVG = false

    /// A negotiation with WebP on and AVIF and JPEG XL off by default, and imgproxy's preferred formats.
    public init(autoWebP: Bool = true, autoAVIF: Bool = false, preferredFormats: [ImageFormat] = [.jpeg, .png, .gif]) {
        self.autoWebP = autoWebP
        self.autoAVIF = autoAVIF
        self.preferredFormats = preferredFormats.isEmpty ? [.jpeg, .png, .gif] : preferredFormats
    }

    /// A negotiation stating JPEG XL too.
    public init(autoWebP: Bool = true, autoAVIF: Bool = false, autoJXL: Bool, preferredFormats: [ImageFormat] = [.jpeg, .png, .gif]) {
        self.init(autoWebP: autoWebP, autoAVIF: autoAVIF, preferredFormats: preferredFormats)
        self.autoJXL = autoJXL
    }

    /// The accepted formats this negotiation may choose: those turned on.
    public func usable(_ accepted: AcceptedImageFormats) -> AcceptedImageFormats {
        AcceptedImageFormats(webP: autoWebP && accepted.webP, avif: autoAVIF && accepted.avif, jxl: autoJXL && accepted.jxl)
    }

    /// The output format for a result made from a `source`-format image, for a client that
    /// accepts `accepted`.
    /// - Parameters:
    ///   - animated: whether the result has more than one frame; `nil` when not known.
    ///   - alpha: whether the result has transparent pixels; `nil` when not known.
    /// - Returns: `nil` only when the answer depends on animation or alpha and that is not known.
    public func outputFormat(source: ImageFormat, animated: Bool?, alpha: Bool? = nil,
                             accepted: AcceptedImageFormats) -> ImageFormat? {
        let usable = usable(accepted)
        if source == .svg, !rasterizesSVG { return .svg }
        if usable.jxl || usable.avif {
            // A JPEG, PNG (not APNG) or BMP source is never animated.
            guard let animated = animated ?? ([.jpeg, .png, .bmp].contains(source) ? false : nil) else { return nil }
            if !animated { return usable.jxl ? .jxl : .avif }
        }
        if usable.webP { return .webp }
        return preferred(source: source == .apng ? .png : source, animated: animated, alpha: alpha)
    }

    /// imgproxy's choice without negotiation: the source's format when preferred, else the
    /// first preferred format that can hold the result.
    func preferred(source: ImageFormat, animated: Bool?, alpha: Bool?) -> ImageFormat? {
        if preferredFormats.contains(source) { return source }
        for format in preferredFormats {
            let holdsAnimation = format == .gif || format == .webp
            let holdsAlpha = format != .jpeg
            if !holdsAnimation {
                guard let animated else { return nil }
                if animated { continue }
            }
            if !holdsAlpha {
                guard let alpha else { return nil }
                if alpha { continue }
            }
            return format
        }
        return preferredFormats[0]
    }
}
