import CAVIF
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decodes AVIF (still and animated) with libavif (dav1d or libaom underneath).
///
/// - **Pixels**: 8, 10 and 12-bit images, 4:4:4, 4:2:2, 4:2:0 and monochrome, are converted
///   by libavif to RGBA8 (deeper samples rounded to 8 bits), straight alpha (a premultiplied
///   alpha plane is unpremultiplied); without an alpha plane alpha is 255. Chroma is upsampled
///   as `avifdec` does (libavif's automatic choice), so the pixels match `avifdec`'s output.
/// - **Transforms**: `irot` and `imir` are applied when ``DecodingOptions/appliesOrientation``
///   is set (the default), rotation first then mirroring, as HEIF orders them;
///   ``AlcedoImage/orientation`` records the equivalent EXIF orientation. `clap`, `pasp` and
///   `clli` are ignored.
/// - **Colour**: an ICC profile in `colr` goes through ``DecodingOptions/colorManagement``.
///   `nclx` colour information other than sRGB/BT.709 is not converted.
/// - **Metadata**: with ``DecodingOptions/readsMetadata``, the `Exif` and XMP items go to
///   ``AlcedoImage/metadata`` (libavif reads them while parsing; otherwise it skips them).
/// - **Animation**: every frame of an image sequence, each with its duration; libavif 0.11
///   does not read the repetition count, so ``AlcedoImage/loopCount`` is 0 (forever).
/// - **Limits**: size and frame count are checked from the container before any frame is
///   decoded (libavif's own limits, 268 MP and 12 hours of frames, apply too).
///   ``DecodingOptions/targetSize`` is ignored: AV1 has no scaled decode.
public struct AVIFDecoder: ImageDecoding {
    /// Always ``ImageFormat/avif``.
    public var format: ImageFormat { .avif }

    /// Creates an AVIF decoder.
    public init() {}

    /// Reads size, frame count, durations, alpha, transforms, the colour profile, the planes'
    /// bit depth (``ImageInfo/bitDepth``, bits a sample) and chroma layout
    /// (``ImageInfo/colorModel``: `"yuv444"`, `"yuv422"`, `"yuv420"` or `"yuv400"`) without
    /// decoding a frame.
    public func info(for data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> ImageInfo {
        try AVIFSession.with(data, limits: options.limits) { session throws(AlcedoError) in
            let header = session.header(options: options)
            var info = ImageInfo(format: .avif, width: header.width, height: header.height, frameCount: header.frameCount,
                                 frameDurations: header.durations, orientation: header.orientation, hasAlpha: header.hasAlpha)
            if options.colorManagement != .ignore { info.colorProfile = header.icc.flatMap { ImageColorProfile(iccData: $0) } }
            if header.depth > 0 { info.bitDepth = header.depth }
            info.colorModel = header.planeLayout
            return info
        }
    }

    /// Decodes every frame (the first only with ``DecodingOptions/firstFrameOnly``).
    /// - Throws: `.decodingError` with `.emptyData`, `.invalidHeader`, `.corrupt`,
    ///   `.truncated`, `.tooManyPixels`, `.tooManyFrames` or `.animationTooLarge`.
    public func decode(_ data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> AlcedoImage {
        // enforce_thumbnail: a thumbnail the file stores, through libheif, as libvips reads it.
        if options.prefersEmbeddedThumbnail, let thumbnail = HEIFDecoder.embeddedThumbnail(data, format: .avif, options: options) {
            return thumbnail
        }
        return try AVIFSession.with(data, limits: options.limits, readsMetadata: options.readsMetadata) { session throws(AlcedoError) in
            let header = session.header(options: options)
            try options.limits.check(width: header.storedWidth, height: header.storedHeight, format: .avif)
            let frameCount = options.firstFrameOnly ? 1 : header.frameCount
            try options.limits.check(frameCount: frameCount, width: header.storedWidth, height: header.storedHeight, format: .avif)
            let plan = ColorPlan.forRGBA(iccData: header.icc, mode: options.colorManagement, format: .avif)
            var frames: [AlcedoImage.Frame] = []
            frames.reserveCapacity(frameCount)
            for index in 0..<frameCount {
                var pixels = try session.nextFrame(index: index)
                plan.apply(to: &pixels)
                if options.appliesOrientation && header.orientation != .up {
                    pixels = header.orientation.apply(to: pixels, width: header.storedWidth, height: header.storedHeight).pixels
                }
                frames.append(AlcedoImage.Frame(pixels: pixels, duration: frameCount > 1 ? header.durations[index] : 0))
            }
            var image = AlcedoImage(width: header.width, height: header.height, frames: frames, loopCount: 0,
                                    sourceFormat: .avif, orientation: header.orientation, colorMetadata: plan.metadata)
            if options.readsMetadata { image.metadata = session.metadata }
            return image
        }
    }
}

/// libavif, loaded on first use (see `CAVIF.h`): a process that never reads or writes AVIF
/// does not pay for loading it and the AV1 libraries it brings.
enum AVIFLibrary {
    private static let table: Result<alcedo_avif_api, DynamicLibraryFailure> = {
        guard let table = alcedo_avif_load() else {
            return .failure(DynamicLibraryFailure(message: alcedo_avif_load_error().map { String(cString: $0) } ?? "libavif could not be loaded"))
        }
        return .success(table.pointee)
    }()

    /// The function table, or the error `failure` makes of the reason libavif could not be loaded.
    static func functions(orThrow failure: (String) -> AlcedoError) throws(AlcedoError) -> alcedo_avif_api {
        switch table {
        case .success(let functions): return functions
        case .failure(let reason): throw failure(reason.message)
        }
    }
}

/// One libavif decoder over the bytes of a file, alive for the duration of a closure.
struct AVIFSession {
    private let decoder: UnsafeMutablePointer<avifDecoder>
    private let lib: alcedo_avif_api

    struct Header {
        let storedWidth: Int
        let storedHeight: Int
        /// The size after the transforms (when applied).
        let width: Int
        let height: Int
        let frameCount: Int
        let durations: [Double]
        let hasAlpha: Bool
        let icc: Data?
        /// The EXIF orientation equivalent to `irot` then `imir`.
        let orientation: ImageOrientation
        /// Bits a sample of the coded planes (8, 10 or 12), from the `av1C` box.
        let depth: Int
        /// How the coded planes sample colour: `"yuv444"`, `"yuv422"`, `"yuv420"` or
        /// `"yuv400"` (monochrome); `nil` when the header does not say.
        let planeLayout: String?
    }

    /// Runs `body` over the parsed file; libavif reads the `Exif` and XMP items only when
    /// `readsMetadata` is set (default `false`).
    static func with<T>(_ data: Data, limits: DecodingLimits, readsMetadata: Bool = false,
                        _ body: (AVIFSession) throws(AlcedoError) -> T) throws(AlcedoError) -> T {
        guard !data.isEmpty else { throw .decodingError(reason: .emptyData) }
        let lib = try AVIFLibrary.functions { .decodingError(reason: .unsupportedFeature(format: .avif, message: $0)) }
        guard let decoder = lib.avifDecoderCreate!() else {
            throw .decodingError(reason: .corrupt(format: .avif, message: "libavif could not create a decoder"))
        }
        defer { lib.avifDecoderDestroy!(decoder) }
        decoder.pointee.maxThreads = 1
        decoder.pointee.strictFlags = avifStrictFlags(AVIF_STRICT_DISABLED.rawValue)
        decoder.pointee.ignoreExif = readsMetadata ? 0 : 1
        decoder.pointee.ignoreXMP = readsMetadata ? 0 : 1
        // libavif's own limits stay at their defaults (or above Alcedo's): Alcedo's are checked
        // after parsing, so that going over them is `.tooManyPixels` / `.tooManyFrames`.
        decoder.pointee.imageSizeLimit = max(decoder.pointee.imageSizeLimit, UInt32(clamping: limits.maxPixelCount))
        decoder.pointee.imageCountLimit = max(decoder.pointee.imageCountLimit, UInt32(clamping: limits.maxFrameCount))
        let result = data.withUnsafeBytes { raw -> Result<T, AlcedoError> in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return .failure(.decodingError(reason: .emptyData)) }
            var status = lib.avifDecoderSetIOMemory!(decoder, base, raw.count)
            if status == AVIF_RESULT_OK { status = lib.avifDecoderParse!(decoder) }
            guard status == AVIF_RESULT_OK else { return .failure(AVIFSession.error(status, decoder: decoder, lib: lib, inHeader: true)) }
            do throws(AlcedoError) {
                return .success(try body(AVIFSession(decoder: decoder, lib: lib)))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    func header(options: DecodingOptions) -> Header {
        let image = decoder.pointee.image!.pointee
        let width = Int(image.width), height = Int(image.height)
        var steps: [ImageOrientation] = []
        if image.transformFlags & UInt32(AVIF_TRANSFORM_IROT.rawValue) != 0 {
            // irot turns anti-clockwise by angle x 90°.
            switch image.irot.angle & 3 {
            case 1: steps.append(.left)
            case 2: steps.append(.down)
            case 3: steps.append(.right)
            default: break
            }
        }
        if image.transformFlags & UInt32(AVIF_TRANSFORM_IMIR.rawValue) != 0 {
            steps.append(image.imir.mode == 0 ? .downMirrored : .upMirrored)
        }
        let orientation = ImageOrientation.combining(steps)
        let swaps = options.appliesOrientation && orientation.swapsDimensions
        let count = max(1, Int(decoder.pointee.imageCount))
        var durations: [Double] = []
        if count > 1 {
            for index in 0..<count {
                var timing = avifImageTiming()
                let ok = lib.avifDecoderNthImageTiming!(decoder, UInt32(index), &timing) == AVIF_RESULT_OK
                durations.append(AlcedoImage.normalizedFrameDuration(ok ? timing.duration : nil))
            }
        } else {
            durations = [0]
        }
        let icc = image.icc.size > 0 && image.icc.size <= EmbeddedProfileReader.maxProfileBytes
            ? Data(bytes: image.icc.data, count: image.icc.size) : nil
        return Header(storedWidth: width, storedHeight: height, width: swaps ? height : width, height: swaps ? width : height,
                      frameCount: count, durations: durations, hasAlpha: decoder.pointee.alphaPresent != 0, icc: icc,
                      orientation: orientation, depth: Int(image.depth), planeLayout: Self.planeLayout(image.yuvFormat))
    }

    /// The `Exif` item (libavif drops its offset field; an `Exif\0\0` prefix is dropped here)
    /// and the XMP item, each up to ``EmbeddedMetadata/maxBlockBytes``; empty unless the
    /// session reads metadata.
    var metadata: EmbeddedMetadata {
        let image = decoder.pointee.image!.pointee
        func block(_ data: avifRWData) -> UnsafeRawBufferPointer? {
            guard let bytes = data.data, data.size > 0, data.size <= EmbeddedMetadata.maxBlockBytes else { return nil }
            return UnsafeRawBufferPointer(start: bytes, count: data.size)
        }
        return EmbeddedMetadata(exif: block(image.exif).flatMap(EmbeddedMetadata.exif(startingAt:)),
                                xmp: block(image.xmp).map { Data($0) })
    }

    /// The metadata of the AVIF file `data` (empty when libavif cannot parse it).
    static func metadata(_ data: Data) -> EmbeddedMetadata {
        (try? with(data, limits: .default, readsMetadata: true) { $0.metadata }) ?? EmbeddedMetadata()
    }

    /// The name of a libavif pixel format (``ImageInfo/colorModel``'s words for AVIF).
    static func planeLayout(_ format: avifPixelFormat) -> String? {
        switch format {
        case AVIF_PIXEL_FORMAT_YUV444: return "yuv444"
        case AVIF_PIXEL_FORMAT_YUV422: return "yuv422"
        case AVIF_PIXEL_FORMAT_YUV420: return "yuv420"
        case AVIF_PIXEL_FORMAT_YUV400: return "yuv400"
        default: return nil
        }
    }

    /// Decodes the next frame into RGBA8.
    func nextFrame(index: Int) throws(AlcedoError) -> [UInt8] {
        let status = lib.avifDecoderNextImage!(decoder)
        guard status == AVIF_RESULT_OK, let image = decoder.pointee.image else {
            throw Self.error(status, decoder: decoder, lib: lib, inHeader: false, frame: index)
        }
        let width = Int(image.pointee.width), height = Int(image.pointee.height)
        var rgb = avifRGBImage()
        lib.avifRGBImageSetDefaults!(&rgb, image)
        rgb.format = AVIF_RGB_FORMAT_RGBA
        rgb.depth = 8
        rgb.alphaPremultiplied = 0
        rgb.rowBytes = UInt32(width * 4)
        var conversion = AVIF_RESULT_OK
        let pixels = [UInt8](unsafeUninitializedCapacity: width * height * 4) { buffer, initialized in
            rgb.pixels = buffer.baseAddress
            conversion = lib.avifImageYUVToRGB!(image, &rgb)
            initialized = conversion == AVIF_RESULT_OK ? buffer.count : 0
        }
        guard conversion == AVIF_RESULT_OK else { throw Self.error(conversion, decoder: decoder, lib: lib, inHeader: false, frame: index) }
        return pixels
    }

    static func error(_ status: avifResult, decoder: UnsafeMutablePointer<avifDecoder>, lib: alcedo_avif_api, inHeader: Bool, frame: Int? = nil) -> AlcedoError {
        var message = lib.avifResultToString!(status).map { String(cString: $0) } ?? "libavif error \(status.rawValue)"
        let detail = withUnsafeBytes(of: decoder.pointee.diag.error) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if !detail.isEmpty { message += ": " + detail }
        if let frame { message = "frame \(frame): " + message }
        switch status {
        case AVIF_RESULT_TRUNCATED_DATA:
            return .decodingError(reason: .truncated(format: .avif, message: message))
        case AVIF_RESULT_NOT_IMPLEMENTED, AVIF_RESULT_NO_CODEC_AVAILABLE:
            return .decodingError(reason: .unsupportedFeature(format: .avif, message: message))
        default:
            return .decodingError(reason: inHeader ? .invalidHeader(format: .avif, message: message)
                                                   : .corrupt(format: .avif, message: message))
        }
    }
}

extension ImageOrientation {
    /// The one orientation that does what `steps` do one after the other (`.up` for none).
    static func combining(_ steps: [ImageOrientation]) -> ImageOrientation {
        guard steps.count > 1 else { return steps.first ?? .up }
        // Follow a 2x3 test picture through the steps and find the orientation that agrees.
        let probe: [UInt8] = (0..<6).flatMap { index -> [UInt8] in [UInt8(index), 0, 0, 255] }
        var turned: (pixels: [UInt8], width: Int, height: Int) = (probe, 2, 3)
        for step in steps { turned = step.apply(to: turned.pixels, width: turned.width, height: turned.height) }
        return ImageOrientation.allCases.first { $0.apply(to: probe, width: 2, height: 3).pixels == turned.pixels } ?? .up
    }
}
