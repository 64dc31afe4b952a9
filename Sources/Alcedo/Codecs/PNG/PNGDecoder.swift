import CPNG
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decodes PNG files into RGBA8, straight alpha.
///
/// Every colour type and bit depth is read: gray, gray + alpha, RGB, RGBA, palette (with
/// `tRNS` alpha), 1 to 16 bits, interlaced or not. 16-bit samples are reduced to 8 bits with
/// rounding. The chunks are walked by `PNGChunkValidator`; the image data is inflated with
/// zlib and unfiltered row by row by `PNGRasterDecoder`, straight into the image's storage
/// (libpng's simplified API is not used for reading: it cannot stop early, read row by row,
/// or decode interlaced 16-bit files correctly in the libpng 1.6.39 security update Debian 12
/// ships, whose `png_image_read_direct_scaled` mixes rows of earlier Adam7 passes).
///
/// ## Bounded work
/// - The working memory is two rows, whatever the bit depth, interlaced or not, checked
///   against ``DecodingLimits/maxWorkingMemory`` before anything is allocated.
/// - Inflation stops once the last row is complete: the bytes inflated are bounded by what the
///   header needs. Extra image data after the last row (more `IDAT` data than the rows take)
///   is **ignored**, as browsers and Pillow ignore it, and is never inflated; only a stream
///   end marker right after the last row is read, to check the zlib checksum.
/// - ``DecodingLimits/decodingTimeout`` is checked between rows and between APNG frames.
///
/// ## Strictness
/// Every chunk is walked first (`PNGChunkValidator`): a CRC mismatch in any chunk, a file that
/// stops before `IEND`, a malformed `IHDR`, a known ancillary chunk with an impossible length,
/// and (for palette images) a pixel index past the end of `PLTE` are errors, as are zlib
/// errors (a bad code or checksum), an unknown filter type, and image data that ends before
/// the last row (`.truncated`). Bytes after `IEND` are ignored.
///
/// ## Gamma
/// Samples of a file with a `gAMA` chunk (and no `sRGB` chunk) are converted to sRGB with a
/// 2.2 power law (`out = in^(1 / (gamma * 2.2))`), as browsers do for tagged files; gammas
/// within 5% of sRGB's are left alone. Files with an `sRGB` chunk or without colour
/// information are taken as sRGB and keep their sample values, **including 16-bit files**.
/// Alpha is never converted.
///
/// ## Colour
/// Under ``DecodingOptions/colorManagement`` (default: to sRGB) an `iCCP` profile is applied;
/// a file with an `sRGB` chunk is sRGB; a colour file with `gAMA` and `cHRM` (primaries or
/// white point other than sRGB's) but neither `iCCP` nor `sRGB` is converted from its
/// primaries, white point and gamma, in one step from the stored samples (the gamma step
/// above is then skipped; palette files keep it and are converted after it).
///
/// ## Animated PNG
/// APNG frames are decoded here too (see `PNGAnimation`), each inflated in place from its
/// chunks with the colour chunks read once for the whole file: every frame is composited on the canvas with its blend
/// (source, over) and dispose (none, background, previous) operations, its delay normalised
/// by ``AlcedoImage/normalizedFrameDuration(_:)``, and ``AlcedoImage/loopCount`` is the
/// `acTL` play count (0: forever). ``AlcedoImage/sourceFormat`` is `.apng`. With
/// ``DecodingOptions/firstFrameOnly``, or when the animation chunks are inconsistent (sequence
/// numbers out of order, a frame outside the canvas, a frame count that does not match
/// `acTL`) or a frame's data cannot be decoded, the file decodes as its default image, a
/// still, as APNG-unaware readers show it. Limit errors are never waived.
///
/// EXIF orientation in an `eXIf` chunk is applied to every frame when
/// ``DecodingOptions/appliesOrientation`` is set (the default) and recorded in
/// ``AlcedoImage/orientation`` either way, as for JPEG.
///
/// ## Decode-time scaling
/// With ``DecodingOptions/targetSize``, a still PNG (or the default image of an APNG) shrinks
/// while it decodes by the largest integer factor that keeps it at least twice the size the
/// target needs, each block of pixels averaged (premultiplied alpha) as rows arrive: a
/// 10000x10000 file decoded for a 256x256 thumbnail never holds more than about 520x520
/// pixels. Animated frames are decoded at full size.
public struct PNGDecoder: ImageDecoding {
    /// `.png` (the registry also hands APNG files to this decoder).
    public var format: ImageFormat { .png }

    /// Creates a PNG decoder.
    public init() {}

    /// Reads the header with libpng: size and whether the file carries alpha (an alpha channel
    /// or a `tRNS` chunk); chunks after the header are not checked, except that each chunk
    /// before the image data must fit in `data` (libpng allocates what a chunk declares). For an APNG, the chunks are
    /// walked (no pixel is decoded) for the frame count, the plays and the frame delays.
    public func info(for data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> ImageInfo {
        guard !data.isEmpty else { throw .decodingError(reason: .emptyData) }
        let sourceFormat = ImageFormat.sniff(data) == .apng ? ImageFormat.apng : .png
        let result: Result<ImageInfo, AlcedoError> = data.withUnsafeBytes { raw in
            do throws(AlcedoError) {
                try PNGChunkValidator.checkLengthsBeforeImageData(raw, format: sourceFormat)
            } catch {
                return .failure(error)
            }
            var image = PNGLibrary.makeImage()
            defer { png_image_free(&image) }
            guard png_image_begin_read_from_memory(&image, raw.baseAddress, raw.count) != 0 else {
                return .failure(PNGLibrary.decodingError(image, format: sourceFormat, headerStage: true))
            }
            var info = ImageInfo(format: sourceFormat, width: Int(image.width), height: Int(image.height),
                                 hasAlpha: image.format & 0x01 != 0)
            info.colorProfile = EmbeddedProfileReader.pngPlan(raw, mode: options.colorManagement, format: sourceFormat)
                .metadata.sourceProfile
            info.orientation = ContainerExifReader.pngOrientation(raw) ?? .up
            if options.appliesOrientation && info.orientation.swapsDimensions { swap(&info.width, &info.height) }
            if sourceFormat == .apng, let structure = try? PNGChunkValidator.validate(raw, format: .apng),
               let animation = PNGAnimation(structure, bytes: raw), animation.frames.count > 1 {
                info.frameCount = animation.frames.count
                info.loopCount = animation.plays
                info.frameDurations = animation.frames.map { AlcedoImage.normalizedFrameDuration($0.delay) }
            }
            return .success(info)
        }
        return try result.get()
    }

    /// Decodes the image (the default image of an APNG).
    /// - Throws: `.decodingError` with `.emptyData`, `.invalidHeader`, `.truncated`, `.corrupt`,
    ///   `.tooManyPixels`, `.tooManyFrames`, `.animationTooLarge`, `.workingMemoryTooLarge`
    ///   (checked from the header before any pixel buffer is allocated) or `.timedOut`.
    public func decode(_ data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> AlcedoImage {
        guard !data.isEmpty else { throw .decodingError(reason: .emptyData) }
        let result: Result<AlcedoImage, AlcedoError> = data.withUnsafeBytes { raw in
            Result { () throws(AlcedoError) -> AlcedoImage in try decode(raw, options: options) }
        }
        let image = try result.get()
        let orientation = data.withUnsafeBytes { ContainerExifReader.pngOrientation($0) } ?? .up
        return options.appliesOrientation ? image.applyingOrientation(orientation) : image.recordingOrientation(orientation)
    }

    private func decode(_ bytes: UnsafeRawBufferPointer, options: DecodingOptions) throws(AlcedoError) -> AlcedoImage {
        let structure = try PNGChunkValidator.validate(bytes, format: .png)
        let sourceFormat: ImageFormat = structure.isAnimated ? .apng : .png
        let deadline = options.limits.startDeadline(format: sourceFormat)
        // The colour chunks are read once, for the default image and every frame.
        let conversion = PNGSampleConversion(structure: structure, bytes: bytes)
        let plan = EmbeddedProfileReader.pngPlan(bytes, mode: options.colorManagement, format: sourceFormat)
        if structure.isAnimated && !options.firstFrameOnly, let animation = PNGAnimation(structure, bytes: bytes) {
            try options.limits.check(width: structure.width, height: structure.height, format: .apng)
            do throws(AlcedoError) {
                let frames = try animation.decode(structure, bytes: bytes, conversion: conversion, limits: options.limits,
                                                  deadline: deadline)
                if frames.count > 1 {
                    return plan.apply(to: AlcedoImage(width: structure.width, height: structure.height, frames: frames,
                                                      loopCount: animation.plays, sourceFormat: .apng))
                } else if let only = frames.first {
                    return plan.apply(to: AlcedoImage(width: structure.width, height: structure.height, pixels: only.pixels,
                                                      sourceFormat: .apng))
                }
            } catch {
                // A frame that cannot be decoded makes the file a still; limits are not waived.
                switch error.decodingReason {
                case .tooManyPixels?, .tooManyFrames?, .animationTooLarge?, .workingMemoryTooLarge?, .timedOut?:
                    throw error
                default:
                    break
                }
            }
        }
        let data = structure.chunks.filter { $0.type == PNGChunk.IDAT }.map(\.data)
        let factor = options.boxShrinkFactor(width: structure.width, height: structure.height)
        var stillPlan = plan
        var stillConversion = conversion
        if options.colorManagement != .ignore && EmbeddedProfileReader.pngUsesChromaticities(bytes) {
            // Converted from the stored samples in one step: the gamma is part of the transform.
            stillPlan = EmbeddedProfileReader.pngPlan(bytes, mode: options.colorManagement, format: sourceFormat, rawSamples: true)
            stillConversion = PNGSampleConversion(structure: structure, bytes: bytes, appliesGamma: false)
        }
        var pixels = try PNGDecoder.decodePixels(bytes, data: data, width: structure.width, height: structure.height,
                                                 interlaced: structure.interlaced, conversion: stillConversion,
                                                 limits: options.limits, deadline: deadline, format: sourceFormat,
                                                 shrinkFactor: factor)
        stillPlan.apply(to: &pixels)
        return AlcedoImage(width: (structure.width + factor - 1) / factor, height: (structure.height + factor - 1) / factor,
                           pixels: pixels, sourceFormat: sourceFormat, colorMetadata: stillPlan.metadata)
    }

    /// Decodes a `width` x `height` raster whose zlib stream lies in the byte ranges `data`
    /// into `width * height * 4` bytes of RGBA, checking the pixel limit first.
    static func decodePixels(_ bytes: UnsafeRawBufferPointer, data: [Range<Int>], width: Int, height: Int, interlaced: Bool,
                             conversion: PNGSampleConversion, limits: DecodingLimits, deadline: DecodingDeadline,
                             format: ImageFormat, shrinkFactor: Int = 1) throws(AlcedoError) -> [UInt8] {
        try limits.check(width: width, height: height, format: format)
        var raster = PNGRasterDecoder(width: width, height: height, interlaced: interlaced, conversion: conversion, format: format)
        raster.shrinkFactor = shrinkFactor
        // Checked before the output is allocated, so a refused file costs nothing.
        try limits.checkWorkingMemory(raster.workingMemory + raster.shrinkMemory,
                                      what: "two rows of \(width) \(conversion.bitDepth)-bit pixels", format: format)
        let outputCount = shrinkFactor > 1 ? raster.shrunkWidth * raster.shrunkHeight * 4 : width * height * 4
        var failure: AlcedoError?
        let pixels = [UInt8](unsafeUninitializedCapacity: outputCount) { buffer, initialized in
            initialized = 0
            guard let base = buffer.baseAddress else { return }
            do throws(AlcedoError) {
                _ = try raster.decode(bytes, data: data, into: base, limits: limits, deadline: deadline)
                initialized = buffer.count
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return pixels
    }
}
