import CTIFF
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

/// Decodes TIFF files (classic and BigTIFF, either byte order) with libtiff, read from memory
/// or, band by band, from an open file (``decodeRows(fileDescriptor:options:start:rows:)``).
///
/// - **Layouts**: strips and tiles; samples interleaved or in separate planes; every
///   compression the system's libtiff offers (none, LZW and Deflate with or without the
///   horizontal predictor, PackBits, JPEG, CCITT RLE/G3/G4 for bilevel images, and ZSTD,
///   LZMA, WebP, JBIG where libtiff was built with them).
/// - **Pixels**: gray (min-is-black, min-is-white), gray + alpha, palette, RGB and RGBA
///   (associated alpha is un-premultiplied; unspecified extra samples are taken as straight
///   alpha), CMYK (+ alpha), 1, 2, 4, 8, 16 and 32 bits a sample (reduced to 8 with
///   rounding), and 16-, 32- and 64-bit floating-point samples (0 to 1, clamped; taken as
///   encoded values, as ImageMagick writes them). CIE L*a*b* (CIELab and ICCLab, 8 and 16
///   bits) becomes sRGB through the WhitePoint tag (D50 without one) and a Bradford adaptation.
///   YCbCr JPEG is converted by libjpeg. Other photometric interpretations (YCbCr without JPEG,
///   ITU L*a*b*, LogLuv) go through libtiff's RGBA interface. Signed integer samples are refused (`.unsupportedFeature`).
/// - **Colour**: an ICC profile (tag 34675) goes through ``DecodingOptions/colorManagement``;
///   CMYK goes through its CMYK profile or, without one, through the generic CMYK profile
///   JPEG uses (under ``ColorManagement/ignore``: the naive formula).
/// - **Orientation**: the Orientation tag is applied like EXIF's (recorded either way).
/// - **Metadata**: with ``DecodingOptions/readsMetadata``, the page's XMP (tag 700) and IPTC
///   (RichTIFFIPTC, 33723) go to ``AlcedoImage/metadata``, as libvips reads them; its EXIF
///   sub-IFD is not read.
/// - **Pages**: the directory ``DecodingOptions/page`` (default the first); ``info(for:options:)``
///   counts them in ``ImageInfo/pageCount``.
///
/// ## Bounded work
/// The declared size is checked against ``DecodingLimits/maxPixelCount`` and the decoded size
/// of one strip or tile (all its planes) against ``DecodingLimits/maxWorkingMemory`` before
/// anything is allocated; no single allocation inside libtiff may exceed the working-memory
/// limit either. Each strip's or tile's stored bytes are checked to lie inside the data before
/// it is read: an offset past the data is `.corrupt`, one whose bytes run past the end
/// `.truncated` (with ``DecodingOptions/allowTruncated`` such strips stay transparent).
/// ``DecodingLimits/decodingTimeout`` is checked between strips and tiles. libtiff's errors
/// and warnings are captured per file (never printed); its first error becomes the message.
///
/// ## Decode-time scaling
/// With ``DecodingOptions/targetSize``, pages Alcedo converts itself shrink while they decode
/// by the largest integer factor that keeps them at least twice the size the target needs
/// (premultiplied box average, as PNG); the full-size picture is never held.
public struct TIFFDecoder: ImageDecoding {
    /// `.tiff`.
    public var format: ImageFormat { .tiff }

    /// Creates a TIFF decoder.
    public init() {}

    /// Reads the directory of ``DecodingOptions/page``: size (upright), alpha, bit depth,
    /// compression, colour model, orientation, ICC profile and the page count.
    public func info(for data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> ImageInfo {
        let result: Result<ImageInfo, AlcedoError> = data.withUnsafeBytes { raw in
            Result { () throws(AlcedoError) -> ImageInfo in
                try TIFFReadSession.with(raw, maxSingleAllocation: options.limits.maxWorkingMemory) { session throws(AlcedoError) in
                    try session.select(page: options.page)
                    let page = try TIFFPage(session)
                    var info = ImageInfo(format: .tiff, width: page.width, height: page.height,
                                         orientation: page.orientation, hasAlpha: page.alpha != .none)
                    if options.appliesOrientation && page.orientation.swapsDimensions { swap(&info.width, &info.height) }
                    info.pageCount = session.pageCount
                    info.bitDepth = page.bitsPerSample
                    info.compression = TIFFCompressionName.name(page.compression)
                    info.colorModel = page.colorModelName
                    if options.colorManagement != .ignore, let icc = page.iccProfile {
                        info.colorProfile = ImageColorProfile(iccData: icc)
                    }
                    return info
                }
            }
        }
        return try result.get()
    }

    /// Decodes page ``DecodingOptions/page``.
    /// - Throws: `.decodingError` with `.emptyData`, `.invalidHeader`, `.truncated`, `.corrupt`,
    ///   `.unsupportedFeature`, `.pageOutOfRange`, `.tooManyPixels`, `.workingMemoryTooLarge`
    ///   or `.timedOut`.
    public func decode(_ data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> AlcedoImage {
        let result: Result<AlcedoImage, AlcedoError> = data.withUnsafeBytes { raw in
            Result { () throws(AlcedoError) -> AlcedoImage in
                try TIFFReadSession.with(raw, maxSingleAllocation: options.limits.maxWorkingMemory) { session throws(AlcedoError) in
                    try session.select(page: options.page)
                    var image = try Self.decodePage(session, options: options)
                    if options.readsMetadata { image.metadata = session.metadata }
                    return image
                }
            }
        }
        let image = try result.get()
        return options.appliesOrientation ? image.applyingOrientation(image.orientation) : image
    }

    /// Decodes page ``DecodingOptions/page`` of the TIFF file open at `fileDescriptor` in
    /// bands of rows, from the top, without holding the file or the picture whole: libtiff
    /// reads each strip or tile from the file as it is needed (`pread`, from offset 0 whatever
    /// the descriptor's offset; it is left open), and each band (a strip, or a row of tiles)
    /// is converted to RGBA8 and its colour as ``decode(_:options:)`` converts it. At full size:
    /// ``DecodingOptions/targetSize`` is not applied. The limits and the decoding deadline
    /// apply as in ``decode(_:options:)``, one band counted with the strip or tile.
    ///
    /// - Parameters:
    ///   - start: called once, before the first band, with the size of the rows to come.
    ///   - rows: called with each band (`rowCount` rows of `width * 4` bytes) and the index of
    ///     its first row; return `false` to stop decoding there.
    /// - Returns: `false`, having called neither closure, when the rows cannot come this way:
    ///   the page states an orientation other than top-left and
    ///   ``DecodingOptions/appliesOrientation`` is set, or its colour model goes through
    ///   libtiff's whole-picture RGBA interface. Use ``decode(_:options:)`` then. `true`
    ///   otherwise, also when `rows` stopped the decode.
    /// - Throws: what ``decode(_:options:)`` throws; a file that cannot be read counts as
    ///   truncated.
    public func decodeRows(
        fileDescriptor: Int32, options: DecodingOptions = .default,
        start: (PixelSize) -> Void,
        rows: (_ band: UnsafeBufferPointer<UInt8>, _ firstRow: Int, _ rowCount: Int) -> Bool
    ) throws(AlcedoError) -> Bool {
        var status = stat()
        guard fstat(fileDescriptor, &status) == 0 else {
            throw .decodingError(reason: .invalidHeader(format: .tiff, message: "the file's size cannot be read: \(String(cString: strerror(errno)))"))
        }
        return try TIFFReadSession.with(fileDescriptor: fileDescriptor, size: Int(status.st_size),
                                        maxSingleAllocation: options.limits.maxWorkingMemory) { session throws(AlcedoError) -> Bool in
            try session.select(page: options.page)
            let page = try Self.preparePage(session, options: options)
            guard page.model != .other, !options.appliesOrientation || page.orientation == .up else { return false }
            let reader = TIFFRasterReader(session: session, page: page, options: options,
                                          deadline: options.limits.startDeadline(format: .tiff))
            try reader.decodeRows(start: start, rows: rows)
            return true
        }
    }

    /// Decodes the current page as stored (orientation recorded, not applied).
    private static func decodePage(_ session: TIFFReadSession, options: DecodingOptions) throws(AlcedoError) -> AlcedoImage {
        let page = try preparePage(session, options: options)
        let deadline = options.limits.startDeadline(format: .tiff)
        var image: AlcedoImage
        if page.model == .other {
            image = try decodeThroughRGBA(session, page: page, options: options)
        } else {
            image = try TIFFRasterReader(session: session, page: page, options: options, deadline: deadline).decode()
        }
        image = image.recordingOrientation(page.orientation)
        return image
    }

    /// The current page's directory, checked against the limits and what this libtiff and
    /// Alcedo can read; its model is `.other` when it goes through libtiff's RGBA interface.
    private static func preparePage(_ session: TIFFReadSession, options: DecodingOptions) throws(AlcedoError) -> TIFFPage {
        var page = try TIFFPage(session)
        try options.limits.check(width: page.width, height: page.height, format: .tiff)
        guard session.lib.TIFFIsCODECConfigured!(page.compression) != 0 else {
            throw .decodingError(reason: .unsupportedFeature(format: .tiff, message:
                "\(TIFFCompressionName.name(page.compression)) compression is not available in this libtiff"))
        }
        // Floating-point samples only through Alcedo's own converter (libtiff's RGBA interface reads none).
        guard page.sampleFormat != Int(SAMPLEFORMAT_INT), page.sampleFormat != TIFFPage.floatingPoint || page.convertsSamples else {
            throw .decodingError(reason: .unsupportedFeature(format: .tiff, message:
                page.sampleFormat == Int(SAMPLEFORMAT_INT) ? "signed samples" : "\(page.bitsPerSample)-bit floating-point samples for \(page.colorModelName)"))
        }
        if Int32(page.photometric) == PHOTOMETRIC_YCBCR && Int32(page.compression) == COMPRESSION_JPEG {
            _ = alcedo_tiff_set_u16(session.handle, UInt32(TIFFTAG_JPEGCOLORMODE), UInt16(JPEGCOLORMODE_RGB))
        }
        if !page.convertsSamples { page.model = .other }
        return page
    }

    /// libtiff's RGBA interface (associated alpha out, un-premultiplied here), at full size.
    private static func decodeThroughRGBA(_ session: TIFFReadSession, page: TIFFPage,
                                          options: DecodingOptions) throws(AlcedoError) -> AlcedoImage {
        let width = page.width, height = page.height
        var message = [CChar](repeating: 0, count: 1024)
        var ok = false
        var pixels = [UInt8](unsafeUninitializedCapacity: width * height * 4) { buffer, initialized in
            buffer.initialize(repeating: 0)
            initialized = buffer.count
            ok = UnsafeMutableRawPointer(buffer.baseAddress!).withMemoryRebound(to: UInt32.self, capacity: width * height) { raster in
                alcedo_tiff_read_rgba(session.handle, raster, UInt32(width), UInt32(height), &message) != 0
            }
        }
        guard ok else {
            let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if text.lowercased().contains(literal: "sorry") || text.lowercased().contains(literal: "not supported") || text.lowercased().contains(literal: "can not handle") {
                throw .decodingError(reason: .unsupportedFeature(format: .tiff, message: text))
            }
            throw session.error(text.isEmpty ? "libtiff could not convert the page to RGBA" : text)
        }
        if page.alpha != .none { PixelUnpremultiplier.unpremultiply(&pixels) }
        let plan = ColorPlan.forRGBA(iccData: Int32(page.photometric) == PHOTOMETRIC_YCBCR ? page.iccProfile : nil,
                                     mode: options.colorManagement, format: .tiff)
        plan.apply(to: &pixels)
        return AlcedoImage(width: width, height: height, pixels: pixels, sourceFormat: .tiff, colorMetadata: plan.metadata)
    }
}

/// Un-premultiplies RGBA8 in place (associated alpha to straight).
enum PixelUnpremultiplier {
    static func unpremultiply(_ pixels: inout [UInt8]) {
        pixels.withUnsafeMutableBufferPointer { p in
            var i = 0
            while i + 3 < p.count {
                let a = UInt32(p[i + 3])
                if a != 255 {
                    for c in 0..<3 { p[i + c] = a == 0 ? 0 : UInt8(min(255, (UInt32(p[i + c]) * 255 + a / 2) / a)) }
                }
                i += 4
            }
        }
    }
}
