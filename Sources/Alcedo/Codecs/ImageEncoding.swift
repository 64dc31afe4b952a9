#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes an ``AlcedoImage`` into the bytes of one format.
///
/// Encoders of animated formats (GIF, WebP) write every frame with its duration and the
/// image's loop count; encoders of still formats write the first frame.
public protocol ImageEncoding: Sendable {
    /// The format this encoder writes.
    var format: ImageFormat { get }

    /// Encodes `image`. Failures are ``AlcedoError/encodingError(reason:)``.
    func encode(_ image: AlcedoImage, options: EncodingOptions) throws(AlcedoError) -> Data
}

/// Options for one encode.
public struct EncodingOptions: Sendable, Hashable {
    /// Quality from 1 (smallest) to 100 (best) for lossy formats (default 90). Ignored by PNG
    /// and GIF, and by WebP when ``lossless`` is set.
    public var quality: Int
    /// Write WebP losslessly (default `false`).
    public var lossless: Bool
    /// Write the image's ``AlcedoImage/metadata`` (EXIF, XMP, IPTC) into the file, as
    /// ``EmbeddedMetadata/embedded(in:format:width:height:hasAlpha:)`` does for JPEG, PNG and
    /// WebP and the AVIF, HEIC, JPEG XL and TIFF encoders do themselves (default `false`:
    /// results carry no metadata).
    public var writesMetadata = false

    /// - Parameters:
    ///   - quality: 1...100 (default 90).
    ///   - lossless: WebP losslessly (default `false`).
    ///   - writesMetadata: write the image's metadata (default `false`).
    public init(quality: Int = 90, lossless: Bool = false, writesMetadata: Bool = false) {
        self.quality = quality
        self.lossless = lossless
        self.writesMetadata = writesMetadata
    }

    /// Quality 90, lossy where the format is lossy.
    public static let `default` = EncodingOptions()

    /// Throws `.invalidQuality` unless ``quality`` is in 1...100.
    public func validate() throws(AlcedoError) {
        guard (1...100).contains(quality) else { throw .encodingError(reason: .invalidQuality(quality)) }
    }
}
