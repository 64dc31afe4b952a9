#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A serializer that stores every image in one format, whatever it was downloaded as: for
/// example PNG to keep the transparency a processor added to a JPEG, or JPEG to save space.
public struct FormatIndicatedCacheSerializer: CacheSerializer {
    /// The format every image is stored in.
    public let format: ImageFormat
    /// The encoding options (quality for JPEG and WebP, lossless WebP).
    public let options: EncodingOptions
    /// The codecs used to encode and decode. Default ``ImageCodecRegistry/shared``.
    public let codecs: ImageCodecRegistry

    /// A serializer writing `format` with `options` (default quality 90).
    public init(format: ImageFormat, options: EncodingOptions = .default, codecs: ImageCodecRegistry = .shared) {
        self.format = format
        self.options = options
        self.codecs = codecs
    }

    /// PNG: lossless, keeps alpha; the first frame of an animation.
    public static let png = FormatIndicatedCacheSerializer(format: .png)
    /// JPEG at quality 90.
    public static let jpeg = FormatIndicatedCacheSerializer(format: .jpeg)
    /// GIF: keeps animation (colours reduced to 256 per frame).
    public static let gif = FormatIndicatedCacheSerializer(format: .gif)
    /// Lossy WebP at quality 90; keeps alpha and animation.
    public static let webp = FormatIndicatedCacheSerializer(format: .webp)

    /// JPEG at `quality` (1...100).
    public static func jpeg(quality: Int) -> FormatIndicatedCacheSerializer {
        FormatIndicatedCacheSerializer(format: .jpeg, options: EncodingOptions(quality: quality))
    }

    /// WebP at `quality` (1...100), or lossless.
    public static func webp(quality: Int = 90, lossless: Bool = false) -> FormatIndicatedCacheSerializer {
        FormatIndicatedCacheSerializer(format: .webp, options: EncodingOptions(quality: quality, lossless: lossless))
    }

    /// AVIF at `quality` 1...100 (default 60), through the registry's AVIF encoder
    /// (``AVIFEncoder``, speed 8).
    public static func avif(quality: Int = 60) -> FormatIndicatedCacheSerializer {
        FormatIndicatedCacheSerializer(format: .avif, options: EncodingOptions(quality: quality))
    }

    /// Encodes `image` in ``format``; the original bytes are not used.
    public func serializedData(with image: AlcedoImage, original: Data?) throws(AlcedoError) -> Data {
        try codecs.encode(image, as: format, options: options)
    }

    /// Decodes `data` with ``codecs``, whatever its format.
    public func deserializedImage(with data: Data, options: DecodingOptions) throws(AlcedoError) -> AlcedoImage {
        try codecs.decode(data, options: options)
    }
}
