import CAlcedoCodecs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes JPEG with libjpeg-turbo.
///
/// - **Quality** comes from ``EncodingOptions/quality`` (1...100, default 90); anything
///   else throws ``EncodingErrorReason/invalidQuality(_:)``.
/// - **Chroma subsampling**: 4:2:0 below quality 90, 4:4:4 at 90 and above, where the
///   colour detail 4:2:0 throws away becomes the largest error left.
/// - **Huffman tables** are optimised for the image (smaller files, same pixels), unless the
///   whole-image coefficient buffer that takes (2 bytes a sample) would pass 256 MiB (above about
///   44 MP at quality 90 and up, 89 MP below): then the standard tables are used, so encoding
///   keeps no second whole-image buffer.
/// - **Alpha**: JPEG has none. Pixels that are not fully opaque are composited onto white
///   first (straight alpha: `c * a / 255 + 255 - a`), so transparent areas come out white.
/// - **Animation**: only the first frame is written.
/// - The output has a JFIF header and no EXIF: the image is upright already.
public struct JPEGEncoder: ImageEncoding {
    /// Always ``ImageFormat/jpeg``.
    public var format: ImageFormat { .jpeg }

    /// Write a progressive JPEG (default `false`: baseline, which decodes faster everywhere).
    public var progressive: Bool

    /// Creates a JPEG encoder, baseline unless `progressive` (default `false`).
    public init(progressive: Bool = false) {
        self.progressive = progressive
    }

    /// Encodes the first frame of `image` at ``EncodingOptions/quality``.
    /// - Throws: ``AlcedoError/encodingError(reason:)``: `.invalidQuality` for a quality
    ///   outside 1...100, `.imageNotEncodable` for a side over 65,500 pixels (JPEG's limit),
    ///   `.libraryFailure` when libjpeg fails.
    public func encode(_ image: AlcedoImage, options: EncodingOptions = .default) throws(AlcedoError) -> Data {
        try options.validate()
        guard image.width <= Self.maximumDimension, image.height <= Self.maximumDimension else {
            throw .encodingError(reason: .imageNotEncodable(
                format: .jpeg, message: "\(image.width)x\(image.height) is over JPEG's limit of \(Self.maximumDimension) pixels a side"))
        }
        var output: UnsafeMutablePointer<UInt8>?
        var outputSize = 0
        var message = [CChar](repeating: 0, count: 200)
        let status = image.pixels.withUnsafeBufferPointer { pixels in
            message.withUnsafeMutableBufferPointer { messageBuffer in
                alcedo_jpeg_encode(pixels.baseAddress, Int32(image.width), Int32(image.height), image.width * 4,
                                   Int32(options.quality), progressive ? 1 : 0, &output, &outputSize,
                                   messageBuffer.baseAddress, messageBuffer.count)
            }
        }
        guard status == ALCEDO_JPEG_OK, let output else {
            let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw .encodingError(reason: .libraryFailure(format: .jpeg, message: text.isEmpty ? "status \(status.rawValue)" : text))
        }
        let encoded = Data(bytesNoCopy: output, count: outputSize, deallocator: .free)
        return ICCProfileEmbedding.embed(image.colorMetadata.pixelProfile, in: encoded, format: .jpeg,
                                         width: image.width, height: image.height, hasAlpha: false)
    }

    /// The largest width or height a JPEG can have in libjpeg (JPEG_MAX_DIMENSION).
    static let maximumDimension = 65_500
}
