#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decodes Windows and OS/2 bitmaps (`.bmp`) into RGBA8, straight alpha, in Swift.
///
/// - **Headers**: OS/2 v1 (`BITMAPCOREHEADER`, 12 bytes), OS/2 v2 (16 and 64 bytes, without
///   its Huffman and RLE24 compressions), `BITMAPINFOHEADER` (40) and its V2, V3, V4 and V5
///   successors (52, 56, 108, 124 bytes); rows bottom-up or top-down (a negative height).
/// - **Pixels**: 1, 2, 4 and 8-bit palettes; 16-bit 5-5-5 (the default) and any BITFIELDS
///   masks, alpha included (5-6-5, 1-5-5-5, 4-4-4-4…); 24-bit BGR; 32-bit BGRX, BGRA and any
///   BITFIELDS masks. Samples narrower than 8 bits are widened with rounding.
/// - **Alpha**: read from the alpha mask of V3+ headers and ALPHABITFIELDS, and from the
///   fourth byte of 32-bit `BI_RGB` pixels, unless every pixel's alpha is 0 (writers that do
///   not use alpha leave it 0): such a file is opaque, as browsers show it.
/// - **RLE8 and RLE4**, with end-of-line, end-of-bitmap, delta and absolute runs: pixels the
///   codes skip are transparent (as browsers show them). RLE files decode at full size.
/// - **Embedded PNG or JPEG** (`BI_PNG`, `BI_JPEG`) are decoded by the PNG and JPEG decoders.
/// - **Colour**: a V5 header's embedded ICC profile goes through ``DecodingOptions/colorManagement``;
///   other files are taken as sRGB.
///
/// ## Strictness
/// A palette index past the palette, an RLE run or delta past the end of its row or of the
/// picture, pixel data that end before the last row (whatever the file header's size field
/// says), masks that are not one run of bits, and impossible headers are errors. A file size
/// field larger than the data is not an error by itself: the pixel data must be complete.
/// With ``DecodingOptions/allowTruncated`` the rows present are decoded and the rest is
/// transparent.
///
/// ## Limits and scaling
/// The pixel limit is checked from the header before anything is allocated; the only buffer
/// is the output. With ``DecodingOptions/targetSize``, uncompressed bitmaps shrink while they
/// decode by the largest integer factor that keeps them at least twice the size the target
/// needs (premultiplied box average), as PNG does.
public struct BMPDecoder: ImageDecoding {
    /// `.bmp`.
    public var format: ImageFormat { .bmp }

    /// Creates a BMP decoder.
    public init() {}

    /// Reads the headers: size, alpha, bit depth (bits a pixel), compression and the
    /// embedded ICC profile.
    public func info(for data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> ImageInfo {
        let result: Result<ImageInfo, AlcedoError> = data.withUnsafeBytes { raw in
            Result { () throws(AlcedoError) -> ImageInfo in
                let header = try Self.header(raw)
                var info = ImageInfo(format: .bmp, width: header.width, height: header.height,
                                     hasAlpha: header.hasAlphaChannel || header.compression == .rle8 || header.compression == .rle4)
                info.bitDepth = header.bitCount
                info.compression = header.compression.name
                info.colorModel = header.bitCount <= 8 ? "palette" : (header.hasAlphaChannel ? "rgba" : "rgb")
                if options.colorManagement != .ignore, let icc = header.iccProfile {
                    info.colorProfile = ImageColorProfile(iccData: icc)
                }
                if header.compression == .png || header.compression == .jpeg {
                    let embedded = Data(raw[header.pixelOffset...])
                    let inner = header.compression == .png ? try PNGDecoder().info(for: embedded, options: options)
                        : try JPEGDecoder().info(for: embedded, options: options)
                    info.width = inner.width
                    info.height = inner.height
                    info.hasAlpha = inner.hasAlpha
                }
                return info
            }
        }
        return try result.get()
    }

    /// Decodes the bitmap.
    /// - Throws: `.decodingError` with `.emptyData`, `.invalidHeader`, `.truncated`, `.corrupt`,
    ///   `.unsupportedFeature`, `.tooManyPixels`, `.workingMemoryTooLarge` or `.timedOut`.
    public func decode(_ data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> AlcedoImage {
        let result: Result<AlcedoImage, AlcedoError> = data.withUnsafeBytes { raw in
            Result { () throws(AlcedoError) -> AlcedoImage in
                let header = try Self.header(raw)
                if header.compression == .png || header.compression == .jpeg {
                    return try Self.decodeEmbedded(raw, header: header, options: options)
                }
                let deadline = options.limits.startDeadline(format: .bmp)
                let factor = header.compression == .rle8 || header.compression == .rle4
                    ? 1 : options.boxShrinkFactor(width: header.width, height: header.height)
                let output = try BMPRaster(header: header, format: .bmp)
                    .decode(raw, limits: options.limits, deadline: deadline, allowTruncated: options.allowTruncated, shrinkFactor: factor)
                let plan = ColorPlan.forRGBA(iccData: header.iccProfile, mode: options.colorManagement, format: .bmp)
                var pixels = output.pixels
                plan.apply(to: &pixels)
                return AlcedoImage(width: output.width, height: output.height, pixels: pixels, sourceFormat: .bmp,
                                   colorMetadata: plan.metadata)
            }
        }
        return try result.get()
    }

    /// The file header (`BM`, size, pixel offset) and the DIB header after it.
    static func header(_ raw: UnsafeRawBufferPointer) throws(AlcedoError) -> BMPHeader {
        guard !raw.isEmpty else { throw .decodingError(reason: .emptyData) }
        guard raw.count >= 18, raw[0] == UInt8(ascii: "B"), raw[1] == UInt8(ascii: "M") else {
            throw .decodingError(reason: raw.count < 18 && raw.count >= 2 && raw[0] == UInt8(ascii: "B") && raw[1] == UInt8(ascii: "M")
                ? .truncated(format: .bmp, message: "the file ends inside the file header")
                : .invalidHeader(format: .bmp, message: "no BM signature"))
        }
        let reader = LittleEndianReader(raw)
        return try BMPHeader.parse(raw, dibOffset: 14, fileHeaderPixelOffset: Int(reader.u32(10)), format: .bmp)
    }

    /// A `BI_PNG` or `BI_JPEG` bitmap: the embedded file decoded by its own decoder.
    private static func decodeEmbedded(_ raw: UnsafeRawBufferPointer, header: BMPHeader,
                                       options: DecodingOptions) throws(AlcedoError) -> AlcedoImage {
        var end = raw.count
        if header.imageSize > 0 { end = min(end, header.pixelOffset + header.imageSize) }
        let embedded = Data(raw[header.pixelOffset..<end])
        let inner = header.compression == .png ? try PNGDecoder().decode(embedded, options: options)
            : try JPEGDecoder().decode(embedded, options: options)
        return AlcedoImage(width: inner.width, height: inner.height, frames: [AlcedoImage.Frame(pixels: inner.pixels)],
                           sourceFormat: .bmp, orientation: inner.orientation, colorMetadata: inner.colorMetadata)
    }
}
