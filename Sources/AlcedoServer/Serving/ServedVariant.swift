import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a result is encoded for the response: the format asked for (or the negotiated choice),
/// the quality, the JPEG background and the `max_bytes` bound.
struct ResponseEncoding: Sendable, Hashable {
    /// The format in the URL, `nil` for the negotiated choice.
    var requested: ImageFormat?
    /// The formats the negotiation may pick for this client (only those turned on).
    var accepted: AcceptedImageFormats
    /// The formats that replace ``requested`` for this client (`--enforce-webp`,
    /// `--enforce-avif`; AVIF only for a result that is not animated).
    var enforced = AcceptedImageFormats()
    /// The quality in the URL, 0 for the per-format default.
    var quality: Int
    /// The quality of each format when the URL sets none.
    var defaultQualities: FormatQualities
    /// The AV1 encoder's speed for AVIF results.
    var avifSpeed: Int
    var background: RGBA?
    var maxBytes: Int
    /// Remove scripts from an SVG source answered as SVG (``ImageServerConfiguration/sanitizeSVG``).
    var sanitizeSVG = true
    /// Rasterise an SVG source when the URL names no format (``ImageServerConfiguration/alwaysRasterizeSVG``).
    var rasterizeSVG = false
    /// imgproxy's `strip_metadata`: leave the source's EXIF, XMP and IPTC out of the result.
    var stripMetadata = true
    /// imgproxy's `keep_copyright`: when stripping, keep the copyright notices.
    var keepCopyright = true
    /// Write JPEG results progressive (``ImageServerConfiguration/progressiveJPEG``).
    var progressiveJPEG = false
    /// libwebp's effort for WebP results (``ImageServerConfiguration/webpEffort``).
    var webpEffort = ImageServerConfiguration.defaultWebPEffort
    /// libwebp's content preset for WebP results (``ImageServerConfiguration/webpPreset``).
    var webpPreset = WebPEncoder.Preset.default
    /// thumbor's `AUTO_PNG_TO_JPG` (or `autojpg()`): a PNG source whose result has no
    /// transparent pixel is answered as JPEG when the URL names no format.
    var pngToJPEG = false
    /// How `max_bytes` lowers the quality (imgproxy's schedule unless the thumbor dialect asks).
    var maxBytesSchedule = MaxBytesSchedule.imgproxy
    /// How transparency is written to JPEG and GIF (imgproxy's unless the thumbor dialect asks).
    var alphaConversion = AlphaConversion.flatten
    /// PNG results interlaced (``ImageServerConfiguration/pngInterlaced``).
    var pngInterlaced = false
    /// The palette size of PNG results, or 0 for true colour (``ImageServerConfiguration/pngQuantize``).
    var pngPaletteColors = 0

    /// The PNG encoder these settings ask for.
    var pngEncoder: PNGEncoder {
        PNGEncoder(interlaced: pngInterlaced, quantizes: pngPaletteColors > 0, quantizationColors: max(2, pngPaletteColors))
    }

    /// Whether the result carries any of the source's metadata (so the source's is read).
    var keepsMetadata: Bool { !stripMetadata || keepCopyright }

    /// The metadata a result made from a source carrying `source` gets: all of it (the EXIF
    /// pixel dimensions set to the result's `size`), or the copyright notices only; its EXIF
    /// orientation reset to 1 when the pixels were turned.
    func resultMetadata(_ source: EmbeddedMetadata, pixelsTurned: Bool, size: PixelSize) -> EmbeddedMetadata? {
        var kept = stripMetadata ? source.copyrightOnly() : source.dimensionsSet(width: size.width, height: size.height)
        if pixelsTurned { kept = kept.orientationReset() }
        return kept.isEmpty ? nil : kept
    }

    /// The bytes of an SVG answer: the SVG source itself, sanitized unless turned off. An SVG
    /// result is made only from an SVG source (imgproxy's rule): anything else is refused.
    func svgBody(original: Data?) throws(AlcedoError) -> Data {
        guard let original, ImageFormat.sniff(original) == .svg else {
            throw .encodingError(reason: .imageNotEncodable(format: .svg, message: "an SVG result needs an SVG source"))
        }
        return sanitizeSVG ? SVGSanitizer.sanitize(original) : original
    }

    /// The formats used when nothing is negotiated (the server's preferred formats).
    var preferredFormats: [ImageFormat] = [.jpeg, .png, .gif]

    /// The output format for a result made from a `source`-format image; `alpha` is asked only
    /// when the choice depends on it.
    func format(source: ImageFormat, animated: Bool, alpha: () -> Bool) -> ImageFormat {
        if let requested {
            if enforced.jxl, !animated { return .jxl }
            if enforced.avif, !animated { return .avif }
            return enforced.webP ? .webp : requested
        }
        let negotiation = self.negotiation
        let format = negotiation.outputFormat(source: source, animated: animated, accepted: accepted)
            ?? negotiation.outputFormat(source: source, animated: animated, alpha: alpha(), accepted: accepted) ?? .png
        if pngToJPEG, source == .png, format == .png, !alpha() { return .jpeg }
        return format
    }

    /// The negotiation of results without a format in the URL: `accepted` holds only what the
    /// configuration turned on, so every format is allowed here.
    var negotiation: FormatNegotiation {
        var negotiation = FormatNegotiation(autoWebP: true, autoAVIF: true, autoJXL: true, preferredFormats: preferredFormats)
        negotiation.rasterizesSVG = rasterizeSVG
        return negotiation
    }

    /// The quality a result in `format` is encoded with.
    func quality(for format: ImageFormat) -> Int {
        quality != 0 ? quality : defaultQualities.quality(for: format)
    }

    /// Part of the variant's cache key: everything that changes the response's bytes.
    var identifier: String {
        var format = requested?.rawValue ?? "auto"
        if requested == nil {
            if accepted.jxl { format += "+jxl" }
            if accepted.avif { format += "+avif" }
            if accepted.webP { format += "+webp" }
            if preferredFormats != [.jpeg, .png, .gif] { format += "+" + preferredFormats.map(\.rawValue).joined(separator: "+") }
            if rasterizeSVG { format += "+rsvg" }
            if pngToJPEG { format += "+png2jpg" }
        }
        let background = background.map { "\($0.red).\($0.green).\($0.blue)" } ?? "-"
        let fixedFormat = enforced == AcceptedImageFormats() ? requested : nil
        let qualityText = fixedFormat.map { "q\(self.quality(for: $0))" }
            ?? (quality != 0 ? "q\(quality)" : "q" + defaultQualities.identifier)
        if enforced.jxl { format += "!jxl" }
        if enforced.avif { format += "!avif" }
        if enforced.webP { format += "!webp" }
        let speed = requested == .avif || accepted.avif || enforced.avif ? ",s\(avifSpeed)" : ""
        let metadata = !stripMetadata ? ",meta" : keepCopyright ? "" : ",nometa"
        let progressive = progressiveJPEG ? ",prog" : ""
        let effort = (webpEffort != ImageServerConfiguration.defaultWebPEffort ? ",e\(webpEffort)" : "") + (webpPreset != .default ? ",wp\(webpPreset)" : "")
        let png = (maxBytesSchedule == .thumbor ? ",mbt" : "") + (alphaConversion == .drop ? ",adrop" : "") + (pngInterlaced ? ",pngi" : "") + (pngPaletteColors > 0 ? ",pngq\(pngPaletteColors)" : "")
        return "\(format),\(qualityText),bg\(background),mb\(maxBytes)\(speed)\(metadata)\(progressive)\(effort)\(png)"
    }
}

/// How a result with transparency is written as a format that holds less of it.
enum AlphaConversion: Sendable, Hashable {
    /// imgproxy's: JPEG composited onto the background (white by default); GIF with pixels of
    /// alpha under 128 transparent (``GIFEncoder``'s own rule).
    case flatten
    /// Pillow's, as thumbor 7.8 writes: JPEG keeps each pixel's colour and drops its alpha (a
    /// transparent pixel shows the colour stored under it: black after a resize); GIF makes only
    /// fully transparent pixels transparent and every other one opaque.
    case drop
}

/// The quality of each output format when a URL sets none: imgproxy's `IMGPROXY_QUALITY` and
/// `IMGPROXY_FORMAT_QUALITY`.
struct FormatQualities: Sendable, Hashable {
    var fallback: Int
    var perFormat: [ImageFormat: Int]

    func quality(for format: ImageFormat) -> Int { min(100, max(1, perFormat[format] ?? fallback)) }

    /// `80;avif63;webp79`: the fallback, then each format's own, in name order.
    var identifier: String {
        ([String(fallback)] + perFormat.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue)\($0.value)" })
            .joined(separator: ";")
    }
}

/// The imgproxy processing plus the response's encoding, as the ImageManager's processor: its
/// identifier names the encoding too, so the variant the caches keep (on disk and in a shared
/// tier) is the response's very bytes, written by ``ResponseSerializer``, and a hit is sent
/// without encoding again.
struct ServedVariantProcessor: ImageProcessor {
    let processing: ImgproxyProcessor
    let encoding: ResponseEncoding

    var identifier: String { "\(processing.identifier)|\(encoding.identifier)" }
    var decodingTarget: (size: PixelSize, mode: ContentMode)? { processing.decodingTarget }
    func outputSize(for size: PixelSize) -> PixelSize { processing.outputSize(for: size) }
    /// The processing's copies and scaled image, which the memory budget reserves with the
    /// decode (without it every request was reserved as if the processing held none).
    func intermediateBytes(for size: PixelSize) -> Int { processing.intermediateBytes(for: size) }

    func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        var result = try processing.process(image)
        // The source's metadata, filtered, rides on the result to the encoder.
        if encoding.keepsMetadata, let metadata = image.metadata {
            let options = processing.options
            let turned = options.autoRotate || options.rotate != 0 || options.flipHorizontal || options.flipVertical
            result.metadata = encoding.resultMetadata(metadata, pixelsTurned: turned, size: result.pixelSize)
        } else {
            result.metadata = nil
        }
        return result
    }
}

/// Stores a served variant as the response's bytes: encoded as ``ResponseEncoding`` says
/// (flattened for JPEG, quality lowered for `max_bytes`), from the processed image's source format.
struct ResponseSerializer: CacheSerializer {
    let encoding: ResponseEncoding

    func serializedData(with image: AlcedoImage, original: Data?) throws(AlcedoError) -> Data {
        let format = encoding.format(source: image.sourceFormat, animated: image.isAnimated, alpha: { image.hasAlpha })
        if format == .svg { return try encoding.svgBody(original: original) }
        return try ImageService.encode(image, as: format, encoding: encoding)
    }

    func deserializedImage(with data: Data, options: DecodingOptions) throws(AlcedoError) -> AlcedoImage {
        try ImageCodecRegistry.shared.decode(data, options: options)
    }

    func encodedFormat(forSource source: ImageFormat, animated: Bool) -> ImageFormat? {
        // Whether the result has alpha is not known before decoding: cost it as if it had
        // (PNG rather than JPEG, the larger encoder when the choice depends on it).
        encoding.format(source: source, animated: animated, alpha: { true })
    }
}

/// How a result over `max_bytes` is encoded again at lower qualities, as each peer does it.
enum MaxBytesSchedule: Sendable, Hashable {
    /// imgproxy's: the quality times 0.25 when the result is over 3 times the limit, 0.5 over 1.5
    /// times, else 0.75, until it fits or the quality is 10 or less (then the last result is
    /// answered). From quality 100 that is at most 9 encodes, from 80 at most 8.
    case imgproxy
    /// thumbor's: the quality times 0.75 until it fits; when the next quality would be under 10
    /// the first result is answered. From quality 80 at most 8 encodes.
    case thumbor

    /// The quality of the next try after a result of `size` bytes at `quality`, or `nil` to stop.
    func nextQuality(after quality: Int, size: Int, limit: Int) -> Int? {
        switch self {
        case .imgproxy:
            guard quality > 10 else { return nil }
            let delta = Double(size) / Double(max(1, limit))
            let factor = delta > 3 ? 0.25 : delta > 1.5 ? 0.5 : 0.75
            return max(1, Int(Double(quality) * factor))
        case .thumbor:
            let next = Int(Double(quality) * 0.75)
            return next < 10 ? nil : next
        }
    }
}
