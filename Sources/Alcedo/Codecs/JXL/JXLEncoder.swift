import CJXL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Encodes JPEG XL with libjxl 0.7, as a bare codestream (or a container when a profile needs it).
///
/// - **Quality**: ``EncodingOptions/quality`` 1...100 maps onto libjxl's Butteraugli distance
///   as `cjxl` maps its `-q` (quality 90 is distance 1.0, "visually lossless"; 100 is 0.1;
///   below 30 the distance grows quickly up to 25). ``EncodingOptions/lossless`` writes a
///   modular, lossless file: the RGBA samples come back exactly.
/// - **Effort**: ``effort`` 1 (fastest) ... 9 (slowest, smallest); default 4, imgproxy's
///   default for on-the-fly encoding (`cjxl`'s own default is 7).
/// - **Alpha**: an image with any pixel not fully opaque gets an 8-bit alpha channel; an
///   opaque one none.
/// - **Animation**: every frame with its duration (millisecond ticks) and the image's loop count.
/// - **Colour**: an image in its source's space (``ColorManagement/preserve``) carries its ICC
///   profile; otherwise the file states sRGB in its colour encoding.
/// - **Metadata**: with ``EncodingOptions/writesMetadata``, the image's EXIF and XMP
///   (``AlcedoImage/metadata``) are written as `Exif` and `xml ` boxes (the file is then a
///   container), as libvips' `jxlsave` does; IPTC has no place in JPEG XL.
/// - Runs on the calling thread (libjxl's tasks one after the other).
public struct JXLEncoder: ImageEncoding {
    /// Always ``ImageFormat/jxl``.
    public var format: ImageFormat { .jxl }

    /// Encoder effort, 1 (fastest) to 9 (slowest, smallest); default 4.
    public let effort: Int

    /// Creates a JPEG XL encoder working at `effort` (clamped to 1...9; default 4).
    public init(effort: Int = 4) {
        self.effort = min(9, max(1, effort))
    }

    /// The Butteraugli distance `cjxl` uses for a quality of 1...100.
    public static func distance(forQuality quality: Int) -> Float {
        let q = Double(min(100, max(1, quality)))
        let distance = q >= 30 ? 0.1 + (100 - q) * 0.09 : 6.4 + pow(2.5, (30 - q) / 5) / 6.25
        return Float(min(25, distance))
    }

    /// Encodes `image`; every frame of an animation.
    /// - Throws: `.invalidQuality` outside 1...100, `.imageNotEncodable` when a side is over
    ///   1,073,741,823 pixels (JPEG XL's limit), `.libraryFailure` when libjxl fails or cannot be loaded.
    public func encode(_ image: AlcedoImage, options: EncodingOptions = .default) throws(AlcedoError) -> Data {
        try options.validate()
        guard image.width < 1 << 30, image.height < 1 << 30 else {
            throw .encodingError(reason: .imageNotEncodable(format: .jxl, message: "\(image.width)x\(image.height) is over JPEG XL's 2^30-1 pixels a side"))
        }
        let lib = try JXLLibrary.functions { Self.failure($0) }
        guard let encoder = lib.JxlEncoderCreate!(nil) else { throw Self.failure("libjxl could not create an encoder") }
        defer { lib.JxlEncoderDestroy!(encoder) }
        _ = lib.JxlEncoderSetParallelRunner!(encoder, alcedo_jxl_serial_runner, nil)
        let hasAlpha = image.hasAlpha
        let animated = image.frames.count > 1
        var basic = JxlBasicInfo()
        lib.JxlEncoderInitBasicInfo!(&basic)
        basic.xsize = UInt32(image.width)
        basic.ysize = UInt32(image.height)
        basic.bits_per_sample = 8
        basic.exponent_bits_per_sample = 0
        basic.num_color_channels = 3
        basic.num_extra_channels = hasAlpha ? 1 : 0
        basic.alpha_bits = hasAlpha ? 8 : 0
        basic.uses_original_profile = options.lossless ? 1 : 0
        if animated {
            basic.have_animation = 1
            basic.animation.tps_numerator = 1000
            basic.animation.tps_denominator = 1
            basic.animation.num_loops = UInt32(clamping: image.loopCount)
        }
        try check(lib.JxlEncoderSetBasicInfo!(encoder, &basic), encoder, lib, "the basic info")
        if let profile = image.colorMetadata.pixelProfile {
            let status = profile.data.withUnsafeBytes {
                lib.JxlEncoderSetICCProfile!(encoder, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count)
            }
            try check(status, encoder, lib, "the ICC profile")
        } else {
            var srgb = JxlColorEncoding()
            lib.JxlColorEncodingSetToSRGB!(&srgb, 0)
            try check(lib.JxlEncoderSetColorEncoding!(encoder, &srgb), encoder, lib, "the colour encoding")
        }
        if options.writesMetadata, let metadata = image.metadata, metadata.exif != nil || metadata.xmp != nil {
            try addBoxes(metadata, encoder, lib)
        }
        guard let settings = lib.JxlEncoderFrameSettingsCreate!(encoder, nil) else { throw Self.failure("libjxl could not create frame settings") }
        try check(lib.JxlEncoderFrameSettingsSetOption!(settings, JXL_ENC_FRAME_SETTING_EFFORT, Int64(effort)), encoder, lib, "the effort")
        if options.lossless {
            try check(lib.JxlEncoderSetFrameLossless!(settings, 1), encoder, lib, "lossless mode")
        } else {
            try check(lib.JxlEncoderSetFrameDistance!(settings, Self.distance(forQuality: options.quality)), encoder, lib, "the distance")
        }
        var format = JxlPixelFormat(num_channels: hasAlpha ? 4 : 3, data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN, align: 0)
        for (index, frame) in image.frames.enumerated() {
            if animated {
                var header = JxlFrameHeader()
                lib.JxlEncoderInitFrameHeader!(&header)
                header.duration = UInt32(max(1, (frame.duration * 1000).rounded()))
                try check(lib.JxlEncoderSetFrameHeader!(settings, &header), encoder, lib, "frame \(index)'s header")
            }
            let status: JxlEncoderStatus
            if hasAlpha {
                status = frame.pixels.withUnsafeBytes { lib.JxlEncoderAddImageFrame!(settings, &format, $0.baseAddress, $0.count) }
            } else {
                let rgb = Self.droppingAlpha(frame.pixels)
                status = rgb.withUnsafeBytes { lib.JxlEncoderAddImageFrame!(settings, &format, $0.baseAddress, $0.count) }
            }
            try check(status, encoder, lib, "frame \(index)")
        }
        lib.JxlEncoderCloseInput!(encoder)
        return try drain(encoder, lib)
    }

    private func drain(_ encoder: OpaquePointer, _ lib: alcedo_jxl_api) throws(AlcedoError) -> Data {
        var output = Data(count: 64 << 10)
        var written = 0
        while true {
            var available = output.count - written
            let status = output.withUnsafeMutableBytes { raw -> JxlEncoderStatus in
                var next: UnsafeMutablePointer<UInt8>? = raw.baseAddress!.assumingMemoryBound(to: UInt8.self) + written
                let status = lib.JxlEncoderProcessOutput!(encoder, &next, &available)
                written = next! - raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
                return status
            }
            switch status {
            case JXL_ENC_SUCCESS:
                output.count = written
                return output
            case JXL_ENC_NEED_MORE_OUTPUT:
                output.count *= 2
            default:
                try check(status, encoder, lib, "the output")
            }
        }
    }

    private func check(_ status: JxlEncoderStatus, _ encoder: OpaquePointer, _ lib: alcedo_jxl_api, _ what: String) throws(AlcedoError) {
        guard status != JXL_ENC_SUCCESS else { return }
        let code = lib.JxlEncoderGetError!(encoder)
        let reason: String
        switch code {
        case JXL_ENC_ERR_OOM: reason = "out of memory"
        case JXL_ENC_ERR_BAD_INPUT: reason = "bad input"
        case JXL_ENC_ERR_NOT_SUPPORTED: reason = "not supported"
        case JXL_ENC_ERR_API_USAGE: reason = "API misuse"
        default: reason = "error \(code.rawValue)"
        }
        throw Self.failure("libjxl refused \(what): \(reason)")
    }

    /// The `Exif` (after a zero offset to its TIFF header) and `xml ` boxes, uncompressed,
    /// before the codestream; the file becomes a container.
    private func addBoxes(_ metadata: EmbeddedMetadata, _ encoder: OpaquePointer, _ lib: alcedo_jxl_api) throws(AlcedoError) {
        try check(lib.JxlEncoderUseBoxes!(encoder), encoder, lib, "the metadata boxes")
        let boxes = [("Exif", metadata.exif.map { Data(count: 4) + $0 }), ("xml ", metadata.xmp)]
        for case let (type, contents?) in boxes {
            let status = contents.withUnsafeBytes {
                lib.JxlEncoderAddBox!(encoder, type, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count, 0)
            }
            try check(status, encoder, lib, "the \(type.trimmingSpaces()) box")
        }
        lib.JxlEncoderCloseBoxes!(encoder)
    }

    /// RGB8 rows from RGBA8 ones.
    static func droppingAlpha(_ pixels: [UInt8]) -> [UInt8] {
        let count = pixels.count / 4
        return [UInt8](unsafeUninitializedCapacity: count * 3) { out, initialized in
            pixels.withUnsafeBufferPointer { input in
                for i in 0..<count {
                    out[i * 3] = input[i * 4]
                    out[i * 3 + 1] = input[i * 4 + 1]
                    out[i * 3 + 2] = input[i * 4 + 2]
                }
            }
            initialized = count * 3
        }
    }

    private static func failure(_ message: String) -> AlcedoError {
        .encodingError(reason: .libraryFailure(format: .jxl, message: message))
    }
}
