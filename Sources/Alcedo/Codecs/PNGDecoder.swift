import CPNG
import Foundation

/// Decodes PNG files with libpng's simplified API into RGBA8, straight alpha.
///
/// Every colour type and bit depth is read: gray, gray + alpha, RGB, RGBA, palette (with
/// `tRNS` alpha), 1 to 16 bits, interlaced or not. 16-bit samples are reduced to 8 bits with
/// rounding. The pixels are decoded straight into the image's storage.
///
/// ## Strictness
/// Before libpng runs, every chunk is walked (`PNGChunkValidator`): a CRC mismatch in any
/// chunk, a file that stops before `IEND`, a malformed `IHDR`, a known ancillary chunk with an
/// impossible length, and (for palette images) a pixel index past the end of `PLTE` are
/// errors, as are zlib errors reported by libpng. Bytes after `IEND` are ignored.
///
/// ## Gamma
/// The file's gamma is applied as libpng's simplified API applies it by default, and as
/// browsers do for tagged files: samples of a file with a `gAMA` chunk (and no `sRGB` chunk)
/// are converted to sRGB with a 2.2 power law (`out = in^(1 / (gamma * 2.2))`); gammas within
/// 5% of sRGB's are left alone. Files with an `sRGB` chunk or without colour information are
/// taken as sRGB and keep their sample values, **including 16-bit files**: libpng would
/// otherwise take untagged 16-bit samples as linear and brighten them, which no browser does.
/// ## Colour
/// Under ``DecodingOptions/colorManagement`` (default: to sRGB) an `iCCP` profile is applied;
/// a file with an `sRGB` chunk is sRGB; a colour file with `gAMA` and `cHRM` (primaries or
/// white point other than sRGB's) but neither `iCCP` nor `sRGB` is converted from its
/// primaries, white point and gamma, in one step from the stored samples (libpng's gamma step
/// above is then skipped; palette files keep it and are converted after it).
///
/// ## Animated PNG
/// libpng as shipped by Linux distributions has no APNG support, so APNG frames are decoded
/// here (see `PNGAnimation`): every frame is composited on the canvas with its blend
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
/// ``AlcedoImage/orientation`` either way, as for JPEG. ``DecodingOptions/targetSize`` is
/// ignored: PNG has no decode-time scaling.
public struct PNGDecoder: ImageDecoding {
    /// `.png` (the registry also hands APNG files to this decoder).
    public var format: ImageFormat { .png }

    /// Creates a PNG decoder.
    public init() {}

    /// Reads the header with libpng: size and whether the file carries alpha (an alpha channel
    /// or a `tRNS` chunk); chunks after the header are not checked. For an APNG, the chunks are
    /// walked (no pixel is decoded) for the frame count, the plays and the frame delays.
    public func info(for data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> ImageInfo {
        guard !data.isEmpty else { throw .decodingError(reason: .emptyData) }
        let sourceFormat = ImageFormat.sniff(data) == .apng ? ImageFormat.apng : .png
        let result: Result<ImageInfo, AlcedoError> = data.withUnsafeBytes { raw in
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
    /// - Throws: `.decodingError` with `.emptyData`, `.invalidHeader`, `.truncated`, `.corrupt`
    ///   or `.tooManyPixels` (checked from the header before any pixel buffer is allocated).
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
        let plan = EmbeddedProfileReader.pngPlan(bytes, mode: options.colorManagement, format: sourceFormat)
        if structure.isAnimated && !options.firstFrameOnly, let animation = PNGAnimation(structure, bytes: bytes) {
            try options.limits.check(width: structure.width, height: structure.height, format: .apng)
            do throws(AlcedoError) {
                let frames = try animation.decode(structure, bytes: bytes, limits: options.limits)
                if frames.count > 1 {
                    return plan.apply(to: AlcedoImage(width: structure.width, height: structure.height, frames: frames,
                                                      loopCount: animation.plays, sourceFormat: .apng))
                } else if let only = frames.first {
                    return plan.apply(to: AlcedoImage(width: structure.width, height: structure.height, pixels: only.pixels,
                                                      sourceFormat: .apng))
                }
            } catch {
                // A frame that cannot be decoded makes the file a still; limits are not waived.
                switch error {
                case .decodingError(.tooManyPixels), .decodingError(.tooManyFrames), .decodingError(.animationTooLarge):
                    throw error
                default:
                    break
                }
            }
        }
        var pixels: [UInt8]
        var stillPlan = plan
        if options.colorManagement != .ignore && EmbeddedProfileReader.pngUsesChromaticities(bytes) {
            stillPlan = EmbeddedProfileReader.pngPlan(bytes, mode: options.colorManagement, format: sourceFormat, rawSamples: true)
            pixels = try EmbeddedProfileReader.withoutGamma(bytes) { (raw) throws(AlcedoError) -> [UInt8] in
                try PNGDecoder.decodePixels(raw, structure: structure, limits: options.limits, format: sourceFormat)
            }
        } else {
            pixels = try PNGDecoder.decodePixels(bytes, structure: structure, limits: options.limits, format: sourceFormat)
        }
        stillPlan.apply(to: &pixels)
        return AlcedoImage(width: structure.width, height: structure.height, pixels: pixels, sourceFormat: sourceFormat,
                           colorMetadata: stillPlan.metadata)
    }

    /// Decodes the pixels of a validated PNG stream into `width * height * 4` bytes of RGBA.
    static func decodePixels(_ bytes: UnsafeRawBufferPointer, structure: PNGStructure, limits: DecodingLimits,
                             format: ImageFormat) throws(AlcedoError) -> [UInt8] {
        var image = PNGLibrary.makeImage()
        defer { png_image_free(&image) }
        guard png_image_begin_read_from_memory(&image, bytes.baseAddress, bytes.count) != 0 else {
            throw PNGLibrary.decodingError(image, format: format, headerStage: true)
        }
        let width = Int(image.width), height = Int(image.height)
        try limits.check(width: width, height: height, format: format)
        image.flags |= ALCEDO_PNG_IMAGE_FLAG_16BIT_sRGB

        if structure.isPaletted {
            return try decodePaletted(bytes, image: &image, structure: structure, format: format)
        }
        image.format = ALCEDO_PNG_FORMAT_RGBA
        var failure: AlcedoError?
        let pixels = [UInt8](unsafeUninitializedCapacity: width * height * 4) { buffer, initialized in
            if png_image_finish_read(&image, nil, buffer.baseAddress, 0, nil) != 0 {
                initialized = buffer.count
            } else {
                failure = PNGLibrary.decodingError(image, format: format, headerStage: false)
                initialized = 0
            }
        }
        if let failure { throw failure }
        return pixels
    }

    /// Palette images: libpng writes the indices, which are checked against the `PLTE` size and
    /// expanded through ``PNGPaletteTable``.
    private static func decodePaletted(_ bytes: UnsafeRawBufferPointer, image: inout png_image, structure: PNGStructure,
                                       format: ImageFormat) throws(AlcedoError) -> [UInt8] {
        let table = try PNGPaletteTable.colors(of: structure, in: bytes, format: format)
        let entries = table.count / 4
        let pixelCount = Int(image.width) * Int(image.height)
        image.format = ALCEDO_PNG_FORMAT_RGBA_COLORMAP
        var failure: AlcedoError?
        let indices = [UInt8](unsafeUninitializedCapacity: pixelCount) { buffer, initialized in
            var libraryColorMap = [UInt8](repeating: 0, count: 256 * 4)
            if png_image_finish_read(&image, nil, buffer.baseAddress, 0, &libraryColorMap) != 0 {
                initialized = buffer.count
            } else {
                failure = PNGLibrary.decodingError(image, format: format, headerStage: false)
                initialized = 0
            }
        }
        if let failure { throw failure }
        var badIndex: UInt8?
        let pixels = [UInt8](unsafeUninitializedCapacity: pixelCount * 4) { buffer, initialized in
            initialized = 0
            table.withUnsafeBufferPointer { colors in
                indices.withUnsafeBufferPointer { source in
                    var out = 0
                    for index in source {
                        let entry = Int(index)
                        guard entry < entries else { badIndex = index; return }
                        let from = entry * 4
                        buffer[out] = colors[from]
                        buffer[out + 1] = colors[from + 1]
                        buffer[out + 2] = colors[from + 2]
                        buffer[out + 3] = colors[from + 3]
                        out += 4
                    }
                    initialized = out
                }
            }
        }
        if let badIndex {
            throw .decodingError(reason: .corrupt(format: format, message: "palette index \(badIndex) is past the \(entries) entries of PLTE"))
        }
        return pixels
    }
}
