import CHEIF
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes HEIC (HEVC in HEIF) with libheif and its x265 encoder.
///
/// - **Quality**: ``EncodingOptions/quality`` 1...100 is libheif's lossy quality, which its
///   x265 plugin maps onto HEVC's quantizer. At quality 90 and above chroma is kept at full
///   resolution (4:4:4), below it is 4:2:0, as the JPEG and AVIF encoders do.
///   ``EncodingOptions/lossless`` asks x265 for lossless coding (4:4:4); the RGB to YCbCr
///   conversion still rounds, so samples come back within a step or two, not exactly.
/// - **Speed**: ``speed`` 0 (slowest, smallest: x265's `placebo` preset) ... 9 (fastest:
///   `ultrafast`); default 6 (`faster`), about what image servers spend on a still picture.
///   x265 runs its own thread pool.
/// - **Alpha**: an image with any pixel not fully opaque gets an alpha auxiliary image.
/// - **Frames**: the first frame only (HEIF image sequences are not written).
/// - **Thumbnail**: with ``thumbnailSize`` above 0, a thumbnail of the picture scaled by
///   libheif to fit that box is stored too (`thmb`), as cameras write one.
/// - **Colour**: an image in its source's space (``ColorManagement/preserve``) carries its ICC
///   profile in `colr`; otherwise libheif states its default `nclx` (sRGB primaries and
///   transfer).
/// - **Metadata**: with ``EncodingOptions/writesMetadata``, the image's EXIF and XMP
///   (``AlcedoImage/metadata``) are stored as the primary image's `Exif` and `mime` XMP items,
///   as libvips' `heifsave` does; IPTC has no place in HEIF.
public struct HEICEncoder: ImageEncoding {
    /// Always ``ImageFormat/heic``.
    public var format: ImageFormat { .heic }

    /// Encoder speed, 0 (slowest) to 9 (fastest); default 6.
    public let speed: Int

    /// x265's presets, slowest first: ``speed`` indexes them.
    static let presets = ["placebo", "veryslow", "slower", "slow", "medium", "fast", "faster", "veryfast", "superfast", "ultrafast"]

    /// The side of the box an embedded thumbnail fits in, in pixels (default 0: no thumbnail).
    public let thumbnailSize: Int

    /// Creates a HEIC encoder running at `speed` (clamped to 0...9; default 6), embedding a
    /// thumbnail that fits `thumbnailSize` pixels a side (default 0: none).
    public init(speed: Int = 6, thumbnailSize: Int = 0) {
        self.speed = min(9, max(0, speed))
        self.thumbnailSize = max(0, thumbnailSize)
    }

    /// Encodes the first frame of `image`.
    /// - Throws: `.invalidQuality` outside 1...100, `.imageNotEncodable` when a side is over
    ///   16,384 pixels (x265's limit without a grid), `.libraryFailure` when libheif cannot be
    ///   loaded, has no HEVC encoder, or fails.
    public func encode(_ image: AlcedoImage, options: EncodingOptions = .default) throws(AlcedoError) -> Data {
        try options.validate()
        guard image.width <= 16_384, image.height <= 16_384 else {
            throw .encodingError(reason: .imageNotEncodable(format: .heic, message: "\(image.width)x\(image.height) is over 16,384 pixels a side"))
        }
        let lib: alcedo_heif_api
        do { lib = try HEIFLibrary.functions(format: .heic) } catch { throw Self.failure("\(error)") }
        guard lib.heif_have_encoder_for_format!(heif_compression_HEVC) != 0 else {
            throw Self.failure("libheif has no HEVC encoder (x265)")
        }
        guard let context = lib.heif_context_alloc!() else { throw Self.failure("libheif could not allocate a context") }
        defer { lib.heif_context_free!(context) }
        var encoder: OpaquePointer?
        try check(lib.heif_context_get_encoder_for_format!(context, heif_compression_HEVC, &encoder), "getting the HEVC encoder")
        guard let encoder else { throw Self.failure("libheif returned no HEVC encoder") }
        defer { lib.heif_encoder_release!(encoder) }
        try check(lib.heif_encoder_set_parameter_string!(encoder, "preset", Self.presets[speed]), "setting the preset")
        let fullChroma = options.lossless || options.quality >= 90
        try check(lib.heif_encoder_set_parameter_string!(encoder, "chroma", fullChroma ? "444" : "420"), "setting the chroma")
        if options.lossless {
            try check(lib.heif_encoder_set_lossless!(encoder, 1), "setting lossless mode")
        } else {
            try check(lib.heif_encoder_set_lossy_quality!(encoder, Int32(options.quality)), "setting the quality")
        }

        let hasAlpha = image.hasAlpha
        var heifImage: OpaquePointer?
        try check(lib.heif_image_create!(Int32(image.width), Int32(image.height), heif_colorspace_RGB,
                                         hasAlpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, &heifImage),
                  "creating the image")
        guard let heifImage else { throw Self.failure("libheif returned no image") }
        defer { lib.heif_image_release!(heifImage) }
        try check(lib.heif_image_add_plane!(heifImage, heif_channel_interleaved, Int32(image.width), Int32(image.height), 8), "adding the plane")
        var stride: Int32 = 0
        let channels = hasAlpha ? 4 : 3
        guard let plane = lib.heif_image_get_plane!(heifImage, heif_channel_interleaved, &stride), Int(stride) >= image.width * channels else {
            throw Self.failure("libheif returned no interleaved plane")
        }
        image.pixels.withUnsafeBufferPointer { source in
            for y in 0..<image.height {
                let row = plane + y * Int(stride)
                let input = source.baseAddress! + y * image.width * 4
                if hasAlpha {
                    row.update(from: input, count: image.width * 4)
                } else {
                    for x in 0..<image.width {
                        row[x * 3] = input[x * 4]
                        row[x * 3 + 1] = input[x * 4 + 1]
                        row[x * 3 + 2] = input[x * 4 + 2]
                    }
                }
            }
        }
        if let profile = image.colorMetadata.pixelProfile {
            let status = profile.data.withUnsafeBytes { lib.heif_image_set_raw_color_profile!(heifImage, "prof", $0.baseAddress, $0.count) }
            try check(status, "setting the ICC profile")
        }
        guard let encodingOptions = lib.heif_encoding_options_alloc!() else { throw Self.failure("libheif could not allocate encoding options") }
        defer { lib.heif_encoding_options_free!(encodingOptions) }
        encodingOptions.pointee.save_alpha_channel = hasAlpha ? 1 : 0
        var primary: OpaquePointer?
        try check(lib.heif_context_encode_image!(context, heifImage, encoder, encodingOptions, &primary), "encoding")
        defer { if let primary { lib.heif_image_handle_release!(primary) } }
        if options.writesMetadata, let metadata = image.metadata, let primary {
            HEIFSession.add(metadata, to: context, image: primary, lib: lib)
        }
        if thumbnailSize > 0, let primary {
            try check(lib.heif_context_encode_thumbnail!(context, heifImage, primary, encoder, encodingOptions,
                                                         Int32(thumbnailSize), nil), "encoding the thumbnail")
        }

        let sink = HEIFWriteSink()
        var writer = heif_writer(writer_api_version: 1, write: { _, data, size, userdata in
            let sink = Unmanaged<HEIFWriteSink>.fromOpaque(userdata!).takeUnretainedValue()
            if let data, size > 0 { sink.data.append(data.assumingMemoryBound(to: UInt8.self), count: size) }
            return heif_error(code: heif_error_Ok, subcode: heif_suberror_Unspecified, message: nil)
        })
        let status = withExtendedLifetime(sink) {
            lib.heif_context_write!(context, &writer, Unmanaged.passUnretained(sink).toOpaque())
        }
        try check(status, "writing the file")
        return sink.data
    }

    private func check(_ status: heif_error, _ what: String) throws(AlcedoError) {
        guard status.code != heif_error_Ok else { return }
        let message = status.message.map { String(cString: $0) } ?? "libheif error \(status.code.rawValue)"
        throw Self.failure("\(what): \(message)")
    }

    private static func failure(_ message: String) -> AlcedoError {
        .encodingError(reason: .libraryFailure(format: .heic, message: message))
    }
}

/// Collects the bytes libheif writes.
private final class HEIFWriteSink {
    var data = Data()
}
