#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The decoders and encoders Alcedo uses, keyed by format.
///
/// ``shared`` starts with the built-in codecs (JPEG, PNG, GIF, WebP, AVIF; HEIC/HEIF decoding). Register your own
/// decoder or encoder to add a format or to replace a built-in one; the last registration
/// for a format wins. Thread-safe.
public final class ImageCodecRegistry: Sendable {
    private struct State {
        var decoders: [ImageFormat: any ImageDecoding] = [:]
        var encoders: [ImageFormat: any ImageEncoding] = [:]
    }

    private let state = Mutex(State())

    /// The registry used by default everywhere, with the built-in codecs.
    public static let shared = ImageCodecRegistry()

    /// Creates a registry; with `includingBuiltIns` (default `true`) it starts with the
    /// built-in JPEG, PNG, GIF, WebP and AVIF codecs and the HEIC/HEIF decoder.
    public init(includingBuiltIns: Bool = true) {
        if includingBuiltIns {
            for decoder in BuiltInCodecs.decoders { register(decoder) }
            for encoder in BuiltInCodecs.encoders { register(encoder) }
        }
    }

    /// Registers `decoder` for its format, replacing any earlier one.
    public func register(_ decoder: any ImageDecoding) {
        state.withLock { $0.decoders[decoder.format] = decoder }
    }

    /// Registers `encoder` for its format, replacing any earlier one.
    public func register(_ encoder: any ImageEncoding) {
        state.withLock { $0.encoders[encoder.format] = encoder }
    }

    /// The decoder for `format`, if any. APNG goes to the PNG decoder, which decodes its frames.
    public func decoder(for format: ImageFormat) -> (any ImageDecoding)? {
        state.withLock { state in
            state.decoders[format] ?? (format == .apng ? state.decoders[.png] : nil)
        }
    }

    /// The encoder for `format`, if any.
    public func encoder(for format: ImageFormat) -> (any ImageEncoding)? {
        state.withLock { $0.encoders[format] }
    }

    /// The formats with a registered decoder.
    public var decodableFormats: Set<ImageFormat> { state.withLock { Set($0.decoders.keys) } }

    /// The formats with a registered encoder.
    public var encodableFormats: Set<ImageFormat> { state.withLock { Set($0.encoders.keys) } }

    /// The formats whose decoders scale for ``DecodingOptions/targetSize`` and whose `info` reads
    /// only the file's headers: a decode of one of them reports the whole picture's size in
    /// ``AlcedoImage/scaledFrom``. HEIC, HEIF and AVIF decode at full size; an SVG is drawn at its
    /// target and its `info` would parse the document again; an icon's entries have no one size.
    static let scalingFormats: Set<ImageFormat> = [.jpeg, .png, .apng, .gif, .webp, .bmp, .tiff, .jxl]

    /// Sniffs the format of `data` and decodes it with the registered decoder; with
    /// ``DecodingOptions/readsMetadata`` the file's EXIF, XMP and IPTC go to ``AlcedoImage/metadata``
    /// (from the decoder, or ``EmbeddedMetadata/read(from:)`` when the decoder gave none).
    /// - Throws: `.decodingError(.emptyData)`, `.decodingError(.unsupportedFormat)` when no
    ///   decoder reads the sniffed format, or the decoder's own error.
    public func decode(_ data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> AlcedoImage {
        let decoder = try decoderForData(data)
        var image = try decoder.decode(data, options: options)
        if options.readsMetadata, image.metadata == nil { image.metadata = EmbeddedMetadata.read(from: data) }
        var upright = options
        upright.appliesOrientation = true
        if options.targetSize != nil, Self.scalingFormats.contains(decoder.format),
           let info = try? decoder.info(for: data, options: upright) {
            // The upright size; without the orientation applied, the stored one.
            let turned = !options.appliesOrientation && info.orientation.swapsDimensions
            let whole = turned ? PixelSize(width: info.height, height: info.width) : PixelSize(width: info.width, height: info.height)
            if whole != image.pixelSize { image.scaledFrom = whole }
        }
        return image
    }

    /// Sniffs the format of `data` and reads its header with the registered decoder.
    public func info(for data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> ImageInfo {
        try decoderForData(data).info(for: data, options: options)
    }

    /// Encodes `image` as `format` with the registered encoder; with
    /// ``EncodingOptions/writesMetadata`` the image's ``AlcedoImage/metadata`` is written into
    /// JPEG, PNG and WebP files (see ``EmbeddedMetadata/embedded(in:format:width:height:hasAlpha:)``);
    /// the AVIF, HEIC, JPEG XL and TIFF encoders write it themselves.
    /// - Throws: `.encodingError(.unsupportedFormat)` when no encoder writes `format`.
    public func encode(_ image: AlcedoImage, as format: ImageFormat, options: EncodingOptions = .default) throws(AlcedoError) -> Data {
        guard let encoder = encoder(for: format == .apng ? .png : format) else {
            throw .encodingError(reason: .unsupportedFormat(format))
        }
        let data = try encoder.encode(image, options: options)
        guard options.writesMetadata, let metadata = image.metadata, !metadata.isEmpty else { return data }
        return metadata.embedded(in: data, format: format, width: image.width, height: image.height, hasAlpha: image.hasAlpha)
    }

    private func decoderForData(_ data: Data) throws(AlcedoError) -> any ImageDecoding {
        guard !data.isEmpty else { throw .decodingError(reason: .emptyData) }
        let format = ImageFormat.sniff(data)
        guard let decoder = decoder(for: format) else {
            throw .decodingError(reason: .unsupportedFormat(format))
        }
        return decoder
    }
}
