import CAVIF
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes AVIF with libavif and the AV1 encoder Debian's libavif links (libaom first, then
/// rav1e or SVT-AV1, in libavif's order of preference).
///
/// - **Quality**: ``EncodingOptions/quality`` 1...100 maps linearly onto AV1's quantizer
///   63...0 (100 is quantizer 0); colour and alpha use the same. At quality 90 and above
///   chroma is kept at full resolution (4:4:4), below it is 4:2:0, as the JPEG encoder does.
///   ``EncodingOptions/lossless`` writes 4:4:4 with quantizer 0 and the identity matrix: the
///   RGB samples come back exactly.
/// - **Speed**: ``speed`` 0 (slowest, smallest) ... 10 (fastest); default 8, which is what
///   image servers use for on-the-fly encoding. An animation asked for at speed 7 is encoded
///   at speed 8: libaom 3.6 (Debian 12's) crashes on AV1 sequences at speed 7.
/// - **Alpha**: an image with any pixel not fully opaque gets an alpha plane; an opaque one none.
/// - **Animation**: every frame with its duration (milliseconds timescale). libavif 0.11
///   writes no repetition count: players loop the sequence forever.
/// - **Colour**: an image in its source's space (``ColorManagement/preserve``) carries its
///   profile in `colr`; otherwise the file states sRGB through `nclx` (BT.709 primaries,
///   sRGB transfer).
/// - **Metadata**: with ``EncodingOptions/writesMetadata``, the image's EXIF and XMP
///   (``AlcedoImage/metadata``) are stored as the file's `Exif` and `mime` XMP items, as
///   libvips' `heifsave` does; IPTC has no place in AVIF.
public struct AVIFEncoder: ImageEncoding {
    /// Always ``ImageFormat/avif``.
    public var format: ImageFormat { .avif }

    /// Encoder speed, 0 (slowest) to 10 (fastest); default 8.
    public let speed: Int

    /// Creates an AVIF encoder running at `speed` (clamped to 0...10; default 8).
    public init(speed: Int = 8) {
        self.speed = min(10, max(0, speed))
    }

    /// Encodes `image`; every frame of an animation.
    /// - Throws: `.invalidQuality` outside 1...100, `.imageNotEncodable` when a side is over
    ///   65,536 pixels, `.libraryFailure` when libavif or its AV1 encoder fails.
    public func encode(_ image: AlcedoImage, options: EncodingOptions = .default) throws(AlcedoError) -> Data {
        try options.validate()
        guard image.width <= 65_536, image.height <= 65_536 else {
            throw .encodingError(reason: .imageNotEncodable(format: .avif, message: "\(image.width)x\(image.height) is over 65,536 pixels a side"))
        }
        let lib = try AVIFLibrary.functions { Self.failure($0) }
        guard let encoder = lib.avifEncoderCreate!() else { throw Self.failure("libavif could not create an encoder") }
        defer { lib.avifEncoderDestroy!(encoder) }
        encoder.pointee.maxThreads = 1
        encoder.pointee.speed = Int32(Self.effectiveSpeed(speed, frames: image.frames.count))
        encoder.pointee.timescale = 1000
        let quantizer = options.lossless ? 0 : Int32(((100 - options.quality) * 63 + 50) / 100)
        encoder.pointee.minQuantizer = quantizer
        encoder.pointee.maxQuantizer = quantizer
        encoder.pointee.minQuantizerAlpha = quantizer
        encoder.pointee.maxQuantizerAlpha = quantizer
        let pixelFormat = options.lossless || options.quality >= 90 ? AVIF_PIXEL_FORMAT_YUV444 : AVIF_PIXEL_FORMAT_YUV420
        let hasAlpha = image.hasAlpha
        let single = image.frames.count == 1
        for (index, frame) in image.frames.enumerated() {
            guard let avif = lib.avifImageCreate!(UInt32(image.width), UInt32(image.height), 8, pixelFormat) else {
                throw Self.failure("libavif could not create an image")
            }
            defer { lib.avifImageDestroy!(avif) }
            avif.pointee.yuvRange = AVIF_RANGE_FULL
            if options.lossless { avif.pointee.matrixCoefficients = UInt16(AVIF_MATRIX_COEFFICIENTS_IDENTITY) }
            if let profile = image.colorMetadata.pixelProfile {
                profile.data.withUnsafeBytes { lib.avifImageSetProfileICC!(avif, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count) }
            } else {
                avif.pointee.colorPrimaries = UInt16(AVIF_COLOR_PRIMARIES_BT709)
                avif.pointee.transferCharacteristics = UInt16(AVIF_TRANSFER_CHARACTERISTICS_SRGB)
            }
            if index == 0, options.writesMetadata, let metadata = image.metadata {
                metadata.exif?.withUnsafeBytes { lib.avifImageSetMetadataExif!(avif, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count) }
                metadata.xmp?.withUnsafeBytes { lib.avifImageSetMetadataXMP!(avif, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count) }
            }
            var rgb = avifRGBImage()
            lib.avifRGBImageSetDefaults!(&rgb, avif)
            rgb.format = AVIF_RGB_FORMAT_RGBA
            rgb.depth = 8
            rgb.ignoreAlpha = hasAlpha ? 0 : 1
            rgb.rowBytes = UInt32(image.width * 4)
            var status = frame.pixels.withUnsafeBytes { raw -> avifResult in
                rgb.pixels = UnsafeMutablePointer(mutating: raw.baseAddress?.assumingMemoryBound(to: UInt8.self))
                return lib.avifImageRGBToYUV!(avif, &rgb)
            }
            guard status == AVIF_RESULT_OK else { throw Self.failure(status, encoder, lib: lib) }
            let duration = UInt64(max(1, (frame.duration * 1000).rounded()))
            let flags = single ? avifAddImageFlags(AVIF_ADD_IMAGE_FLAG_SINGLE.rawValue)
                : avifAddImageFlags(index == 0 ? AVIF_ADD_IMAGE_FLAG_FORCE_KEYFRAME.rawValue : AVIF_ADD_IMAGE_FLAG_NONE.rawValue)
            status = lib.avifEncoderAddImage!(encoder, avif, duration, flags)
            guard status == AVIF_RESULT_OK else { throw Self.failure(status, encoder, lib: lib) }
        }
        var output = avifRWData(data: nil, size: 0)
        defer { lib.avifRWDataFree!(&output) }
        let status = lib.avifEncoderFinish!(encoder, &output)
        guard status == AVIF_RESULT_OK, let bytes = output.data else { throw Self.failure(status, encoder, lib: lib) }
        return Data(bytes: bytes, count: output.size)
    }

    /// The speed given to libavif: `speed`, except 8 for a sequence asked at 7 (libaom 3.6
    /// dereferences a null pointer encoding more than one frame at speed 7, whatever the size
    /// or quality).
    static func effectiveSpeed(_ speed: Int, frames: Int) -> Int {
        frames > 1 && speed == 7 ? 8 : speed
    }

    private static func failure(_ message: String) -> AlcedoError {
        .encodingError(reason: .libraryFailure(format: .avif, message: message))
    }

    private static func failure(_ status: avifResult, _ encoder: UnsafeMutablePointer<avifEncoder>, lib: alcedo_avif_api) -> AlcedoError {
        var message = lib.avifResultToString!(status).map { String(cString: $0) } ?? "libavif error \(status.rawValue)"
        let detail = withUnsafeBytes(of: encoder.pointee.diag.error) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
        if !detail.isEmpty { message += ": " + detail }
        return failure(message)
    }
}
