#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The serializer ``ImageCache`` uses by default.
///
/// It stores the original bytes when it has them, so a downloaded file is cached exactly as
/// served, with nothing lost to re-encoding. Without them (a processed image, an image built in
/// memory), it encodes the image in its own format (``AlcedoImage/sourceFormat``), or as PNG
/// when no encoder writes that format or when the format is JPEG and the image has
/// transparency (which JPEG would lose). It decodes with the codec registry.
public struct DefaultCacheSerializer: CacheSerializer {
    /// A serializer with the shared codec registry and the defaults below.
    public static let `default` = DefaultCacheSerializer()

    /// The codecs used to encode and decode. Default ``ImageCodecRegistry/shared``.
    public var codecs: ImageCodecRegistry
    /// Store the original bytes when they are given. Default `true`; when `false`, the image is
    /// always encoded, in the original bytes' format when known.
    public var preferCacheOriginalData: Bool
    /// The options used when encoding (quality for JPEG and WebP). Default `.default` (quality 90).
    public var encodingOptions: EncodingOptions

    /// Creates a serializer; every parameter has the default stated on its property.
    public init(codecs: ImageCodecRegistry = .shared, preferCacheOriginalData: Bool = true,
                encodingOptions: EncodingOptions = .default) {
        self.codecs = codecs
        self.preferCacheOriginalData = preferCacheOriginalData
        self.encodingOptions = encodingOptions
    }

    /// ``preferCacheOriginalData``: whether the original bytes are stored when given.
    public var originalDataUsed: Bool { preferCacheOriginalData }

    /// `original` when given (and ``preferCacheOriginalData``), else `image` encoded in its
    /// own format, PNG when no encoder writes that format.
    /// - Throws: the encoder's error, or `.encodingError(.unsupportedFormat(.png))` when not even PNG can be written.
    public func serializedData(with image: AlcedoImage, original: Data?) throws(AlcedoError) -> Data {
        if preferCacheOriginalData, let original, !original.isEmpty { return original }
        let wanted = original.map { ImageFormat.sniff($0) } ?? image.sourceFormat
        var format = codecs.encoder(for: wanted == .apng ? .png : wanted) != nil ? wanted : .png
        // A processed JPEG may have gained transparency (round corners): JPEG would lose it.
        if format == .jpeg && image.hasAlpha { format = .png }
        return try codecs.encode(image, as: format, options: encodingOptions)
    }

    /// Decodes `data` with ``codecs``, whatever its format.
    public func deserializedImage(with data: Data, options: DecodingOptions) throws(AlcedoError) -> AlcedoImage {
        try codecs.decode(data, options: options)
    }
}
