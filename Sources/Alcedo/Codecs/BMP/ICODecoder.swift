#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decodes Windows icons (`.ico`) and cursors (`.cur`, sniffed as ``ImageFormat/ico`` too)
/// into RGBA8, straight alpha.
///
/// - **Entries**: PNG entries are decoded by ``PNGDecoder``; bitmap entries (a DIB header
///   without a file header, the colour bitmap, then a 1-bit AND mask) by the BMP code, the
///   AND mask giving the transparency of bitmaps without alpha (a 32-bit bitmap whose alpha
///   bytes are all 0 uses the mask too).
/// - **Which entry**: the largest (then the deepest) by default. With
///   ``DecodingOptions/preferredIconSize`` the entry closest to that size; else with
///   ``DecodingOptions/targetSize`` the smallest entry that still covers the target, so a
///   favicon proxy asking for 32x32 decodes the 32x32 entry, not the 256x256 one.
///   ``info(for:options:)`` lists every entry in ``ImageInfo/entries``.
/// - **Sizes** come from each entry's own header, not from the directory's bytes: an entry
///   that lies about its size in the directory is decoded at its real size, and the pixel
///   limit is checked against the real size before anything is allocated. An entry whose
///   bytes lie past the end of the file is never read; when the chosen entry cannot be
///   decoded, its error is thrown (other entries are not tried silently).
public struct ICODecoder: ImageDecoding {
    /// `.ico` (cursors too).
    public var format: ImageFormat { .ico }

    /// Creates an icon decoder.
    public init() {}

    /// Reads the directory and every entry's header: ``ImageInfo/entries`` lists them, and the
    /// size, alpha and bit depth are those of the entry ``decode(_:options:)`` would pick.
    public func info(for data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> ImageInfo {
        let result: Result<ImageInfo, AlcedoError> = data.withUnsafeBytes { raw in
            Result { () throws(AlcedoError) -> ImageInfo in
                let directory = try ICODirectory.parse(raw)
                let index = try Self.chosen(directory, options: options)
                let entry = directory.entries[index].description!
                var info = ImageInfo(format: .ico, width: entry.width, height: entry.height, hasAlpha: true)
                info.bitDepth = entry.bitDepth
                info.compression = entry.encoding == .png ? "png" : "bmp"
                info.colorModel = directory.isCursor ? "cursor" : "icon"
                info.entries = directory.entries.compactMap(\.description)
                return info
            }
        }
        return try result.get()
    }

    /// Decodes the chosen entry (see the type's notes).
    /// - Throws: `.decodingError` with `.emptyData`, `.invalidHeader`, `.truncated`, `.corrupt`,
    ///   `.tooManyPixels`, `.timedOut`, or the PNG decoder's errors for a PNG entry.
    public func decode(_ data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> AlcedoImage {
        let result: Result<AlcedoImage, AlcedoError> = data.withUnsafeBytes { raw in
            Result { () throws(AlcedoError) -> AlcedoImage in
                let directory = try ICODirectory.parse(raw)
                let entry = directory.entries[try Self.chosen(directory, options: options)]
                let bytes = UnsafeRawBufferPointer(rebasing: raw[entry.range])
                // The entry is decoded at its own size: the caller resamples to the target.
                var entryOptions = options
                entryOptions.targetSize = nil
                if ICODirectory.isPNG(bytes) {
                    let image = try PNGDecoder().decode(Data(bytes), options: entryOptions)
                    return AlcedoImage(width: image.width, height: image.height, frames: [AlcedoImage.Frame(pixels: image.pixels)],
                                       sourceFormat: .ico, orientation: image.orientation, colorMetadata: image.colorMetadata)
                }
                let header = try BMPHeader.parse(bytes, dibOffset: 0, fileHeaderPixelOffset: nil, iconBitmap: true, format: .ico)
                guard header.compression == .none || header.compression == .bitfields || header.compression == .alphaBitfields else {
                    throw .decodingError(reason: .unsupportedFeature(format: .ico, message: "\(header.compression.name) compression in an icon bitmap"))
                }
                let raster = BMPRaster(header: header, format: .ico, andMaskOffset: header.pixelOffset + header.rowStride * header.height)
                let output = try raster.decode(bytes, limits: options.limits, deadline: options.limits.startDeadline(format: .ico),
                                               allowTruncated: options.allowTruncated, shrinkFactor: 1)
                return AlcedoImage(width: output.width, height: output.height, pixels: output.pixels, sourceFormat: .ico)
            }
        }
        return try result.get()
    }

    private static func chosen(_ directory: ICODirectory, options: DecodingOptions) throws(AlcedoError) -> Int {
        guard let index = directory.choose(preferred: options.preferredIconSize, target: options.targetSize, mode: options.contentMode) else {
            // No entry has a readable header: the first entry's problem says why.
            throw directory.entries.first?.problem
                ?? .decodingError(reason: .invalidHeader(format: .ico, message: "no entry can be read"))
        }
        return index
    }
}
