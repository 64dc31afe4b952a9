import CJXL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decodes JPEG XL (bare codestreams and the container, still and animated) with libjxl 0.7.
///
/// - **Pixels**: every bit depth libjxl reads (8 and 16-bit integer, float) is converted by
///   libjxl to RGBA8 with rounding; gray images come back as RGB with R = G = B; without
///   alpha, alpha is 255. Premultiplied alpha is unpremultiplied.
/// - **JPEG recompression**: a file made by `cjxl` from a JPEG (with its `jbrd` box) decodes
///   to pixels like any other; the original JPEG bytes are not rebuilt.
/// - **Orientation**: the codestream's orientation is applied when
///   ``DecodingOptions/appliesOrientation`` is set (the default); ``AlcedoImage/orientation``
///   records it.
/// - **Colour**: the pixels come in the space libjxl hands back: the file's own for a
///   lossless or recompressed-JPEG file and for a lossy (XYB) file whose space is an
///   enumerated one (sRGB, Display P3, Rec. 2020…), linear sRGB for a lossy file that carried
///   an ICC profile (libjxl 0.7 has no colour management inside). That space's ICC profile
///   (embedded, or made by libjxl from the colour encoding) goes through
///   ``DecodingOptions/colorManagement``; sRGB needs no transform. ``ImageInfo/colorProfile``
///   is the file's original profile.
/// - **Animation**: every displayed frame, composited by libjxl (blending and layers done),
///   with its duration from the animation's ticks; the loop count from the header (0: forever).
/// - **Scaling**: with ``DecodingOptions/targetSize`` at most an eighth of the picture on each
///   side (under ``DecodingOptions/contentMode``), an opaque still lossy (VarDCT) file decodes
///   only its DC pass (one value per 8x8 block, all the detail such a target can show) and libjxl
///   renders that, upsampled, into the full-size output; the AC passes are never read. libjxl
///   0.7 renders progressive passes only at full size (its 1/8 DC output buffer is deprecated and
///   never filled), so the output keeps the file's size and memory; measured on a 12 MP file
///   (Benchmarks/Codecs), a 400x300 thumbnail costs about 0.8x the CPU of a full decode. Lossless
///   (modular) files, files with alpha, animations and larger targets decode in full.
/// - **Metadata**: with ``DecodingOptions/readsMetadata``, the container's `Exif` and `xml `
///   boxes (compressed `brob` ones too) go to ``AlcedoImage/metadata`` (see `JXLMetadata`).
///   The EXIF orientation is not applied: the codestream's orientation rules, as libjxl says.
/// - **Truncation**: a file that ends early is `.truncated`; with
///   ``DecodingOptions/allowTruncated`` an animation returns the frames that were whole (a
///   still has none to return).
/// - **Limits**: the size from the header and every frame before its buffer is allocated;
///   libjxl's own working memory (about 16 bytes a pixel for a lossless file, 4 for a lossy
///   one) against ``DecodingLimits/maxWorkingMemory``; and the CPU-time budget
///   (``DecodingLimits/decodingTimeout``) inside libjxl's work, which stops within one
///   256x256 group of the deadline.
public struct JXLDecoder: ImageDecoding {
    /// Always ``ImageFormat/jxl``.
    public var format: ImageFormat { .jxl }

    /// Creates a JPEG XL decoder.
    public init() {}

    /// Reads the header and, for an animation, the frame table (frame headers only, no
    /// pixels): size, frames, durations, loop count, alpha, orientation, bit depth, the kind of
    /// compression and the colour profile.
    /// - Throws: `.decodingError` with `.emptyData`, `.invalidHeader`, `.truncated` or `.timedOut`.
    public func info(for data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> ImageInfo {
        try JXLDecodeSession.readInfo(data, options: options)
    }

    /// Decodes every frame (the first only with ``DecodingOptions/firstFrameOnly``).
    /// - Throws: `.decodingError` with `.emptyData`, `.invalidHeader`, `.corrupt`, `.truncated`,
    ///   `.tooManyPixels`, `.tooManyFrames`, `.animationTooLarge`, `.workingMemoryTooLarge` or `.timedOut`.
    public func decode(_ data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> AlcedoImage {
        let decoded = try JXLDecodeSession.decode(data, options: options)
        guard var image = decoded else {
            throw .decodingError(reason: .truncated(format: .jxl, message: "the file ends before its first frame"))
        }
        if options.readsMetadata { image.metadata = JXLMetadata.read(data) }
        return image
    }
}

/// One pass of libjxl's decoder over a file: the header (and frame table) for `info`, or the
/// frames for `decode`.
private struct JXLDecodeSession {
    let lib: alcedo_jxl_api
    let decoder: OpaquePointer
    let options: DecodingOptions
    let budget: JXLBudget

    static let rgba8 = JxlPixelFormat(num_channels: 4, data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN, align: 0)

    static func readInfo(_ data: Data, options: DecodingOptions) throws(AlcedoError) -> ImageInfo {
        var info: ImageInfo?
        try withSession(data, options: options) { session throws(AlcedoError) in
            info = try session.readInfo(countingFrames: true, isRecompressedJPEG: JXLContainer.hasJPEGReconstruction(data))
        }
        return info!
    }

    static func decode(_ data: Data, options: DecodingOptions) throws(AlcedoError) -> AlcedoImage? {
        var image: AlcedoImage?
        try withSession(data, options: options) { session throws(AlcedoError) in
            image = try session.decodeFrames()
        }
        return image
    }

    private static func withSession(_ data: Data, options: DecodingOptions,
                                    _ body: (JXLDecodeSession) throws(AlcedoError) -> Void) throws(AlcedoError) {
        guard !data.isEmpty else { throw .decodingError(reason: .emptyData) }
        let lib = try JXLLibrary.functions { .decodingError(reason: .unsupportedFeature(format: .jxl, message: $0)) }
        guard let decoder = lib.JxlDecoderCreate!(nil) else {
            throw .decodingError(reason: .corrupt(format: .jxl, message: "libjxl could not create a decoder"))
        }
        defer { lib.JxlDecoderDestroy!(decoder) }
        let budget = JXLBudget(limit: options.limits.decodingTimeout)
        _ = lib.JxlDecoderSetParallelRunner!(decoder, alcedo_jxl_serial_runner, budget.pointer)
        _ = lib.JxlDecoderSetKeepOrientation!(decoder, options.appliesOrientation ? 0 : 1)
        _ = lib.JxlDecoderSetUnpremultiplyAlpha!(decoder, 1)
        let result = data.withUnsafeBytes { raw -> Result<Void, AlcedoError> in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return .failure(.decodingError(reason: .emptyData)) }
            guard lib.JxlDecoderSetInput!(decoder, base, raw.count) == JXL_DEC_SUCCESS else {
                return .failure(.decodingError(reason: .corrupt(format: .jxl, message: "libjxl refused the input")))
            }
            // The input is not closed: a file that ends early then says NEED_MORE_INPUT
            // (a truncation) rather than a bare error.
            do throws(AlcedoError) {
                try body(JXLDecodeSession(lib: lib, decoder: decoder, options: options, budget: budget))
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    private func subscribe(_ events: [JxlDecoderStatus]) throws(AlcedoError) {
        let mask = events.reduce(Int32(0)) { $0 | Int32($1.rawValue) }
        guard lib.JxlDecoderSubscribeEvents!(decoder, mask) == JXL_DEC_SUCCESS else {
            throw .decodingError(reason: .corrupt(format: .jxl, message: "libjxl refused the event subscription"))
        }
    }

    /// The error for a status that ends decoding.
    private func failure(_ status: JxlDecoderStatus, haveHeader: Bool, frame: Int? = nil) -> AlcedoError {
        if budget.expired { return .decodingError(reason: .timedOut(format: .jxl, limit: options.limits.decodingTimeout)) }
        let place = frame.map { "frame \($0): " } ?? ""
        switch status {
        case JXL_DEC_NEED_MORE_INPUT:
            return .decodingError(reason: .truncated(format: .jxl, message: place + "the file ends before the \(haveHeader ? "image" : "header") does"))
        case JXL_DEC_ERROR where !haveHeader:
            return .decodingError(reason: .invalidHeader(format: .jxl, message: "libjxl could not read the header"))
        case JXL_DEC_ERROR:
            return .decodingError(reason: .corrupt(format: .jxl, message: place + "libjxl could not decode the codestream"))
        default:
            return .decodingError(reason: .corrupt(format: .jxl, message: place + "libjxl stopped with status \(status.rawValue)"))
        }
    }

    /// Facts from the basic info event.
    private struct Header {
        var basic: JxlBasicInfo
        /// The size of the output (oriented when orientation is applied).
        var width: Int { Int(swaps ? basic.ysize : basic.xsize) }
        var height: Int { Int(swaps ? basic.xsize : basic.ysize) }
        var orientation: ImageOrientation { ImageOrientation(rawValue: Int(basic.orientation.rawValue)) ?? .up }
        var swaps = false
        var tickSeconds: Double {
            basic.animation.tps_numerator == 0 ? 0 : Double(basic.animation.tps_denominator) / Double(basic.animation.tps_numerator)
        }
        var isLossless: Bool { basic.uses_original_profile != 0 }
    }

    private func readBasicInfo() throws(AlcedoError) -> Header {
        var basic = JxlBasicInfo()
        guard lib.JxlDecoderGetBasicInfo!(decoder, &basic) == JXL_DEC_SUCCESS else {
            throw .decodingError(reason: .invalidHeader(format: .jxl, message: "libjxl could not read the basic info"))
        }
        var header = Header(basic: basic)
        header.swaps = options.appliesOrientation && header.orientation.swapsDimensions
        return header
    }

    /// The ICC profile of `target` (`nil`: sRGB or sRGB gray, which need nothing, or none
    /// to speak of). libjxl makes a profile for an enumerated colour encoding (Display P3,
    /// Rec. 2020, …); the data target of a lossy (XYB) file is its original space when that
    /// space is enumerated, linear sRGB when it was an ICC profile.
    private func profile(_ target: JxlColorProfileTarget) -> Data? {
        var encoded = JxlColorEncoding()
        if lib.JxlDecoderGetColorAsEncodedProfile!(decoder, nil, target, &encoded) == JXL_DEC_SUCCESS,
           encoded.white_point == JXL_WHITE_POINT_D65, encoded.transfer_function == JXL_TRANSFER_FUNCTION_SRGB,
           encoded.color_space == JXL_COLOR_SPACE_GRAY || (encoded.color_space == JXL_COLOR_SPACE_RGB && encoded.primaries == JXL_PRIMARIES_SRGB) {
            return nil
        }
        var size = 0
        guard lib.JxlDecoderGetICCProfileSize!(decoder, nil, target, &size) == JXL_DEC_SUCCESS,
              size > 0, size <= EmbeddedProfileReader.maxProfileBytes else { return nil }
        var icc = Data(count: size)
        let status = icc.withUnsafeMutableBytes {
            lib.JxlDecoderGetColorAsICCProfile!(decoder, nil, target, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), size)
        }
        return status == JXL_DEC_SUCCESS ? icc : nil
    }

    /// libjxl's working memory for a frame: modular (lossless) files keep every channel as
    /// 32-bit integers; VarDCT files keep about one float plane's worth in groups and DC.
    /// Files in their original colour space (lossless, recompressed JPEG) count as modular.
    private func workingMemory(_ header: Header) -> Int {
        let pixels = Int(header.basic.xsize) * Int(header.basic.ysize)
        let channels = Int(header.basic.num_color_channels) + Int(header.basic.num_extra_channels)
        let (bytes, overflow) = pixels.multipliedReportingOverflow(by: header.isLossless ? 4 * channels : 4)
        return overflow ? -1 : bytes
    }

    func readInfo(countingFrames: Bool, isRecompressedJPEG: Bool) throws(AlcedoError) -> ImageInfo {
        try subscribe([JXL_DEC_BASIC_INFO, JXL_DEC_COLOR_ENCODING, JXL_DEC_FRAME])
        var header: Header?
        var durations: [Double] = []
        var profile: ImageColorProfile?
        while true {
            let status = lib.JxlDecoderProcessInput!(decoder)
            switch status {
            case JXL_DEC_BASIC_INFO:
                header = try readBasicInfo()
            case JXL_DEC_COLOR_ENCODING:
                if options.colorManagement != .ignore {
                    profile = self.profile(JXL_COLOR_PROFILE_TARGET_ORIGINAL).flatMap { ImageColorProfile(iccData: $0) }
                }
            case JXL_DEC_FRAME:
                guard let header else { throw failure(JXL_DEC_ERROR, haveHeader: false) }
                if header.basic.have_animation == 0 || !countingFrames {
                    return makeInfo(header, durations: [0], profile: profile, recompressed: isRecompressedJPEG)
                }
                var frame = JxlFrameHeader()
                _ = lib.JxlDecoderGetFrameHeader!(decoder, &frame)
                durations.append(AlcedoImage.normalizedFrameDuration(Double(frame.duration) * header.tickSeconds))
                if durations.count > options.limits.maxFrameCount {
                    return makeInfo(header, durations: durations, profile: profile, recompressed: isRecompressedJPEG)
                }
            case JXL_DEC_SUCCESS:
                guard let header else { throw failure(JXL_DEC_ERROR, haveHeader: false) }
                return makeInfo(header, durations: durations.isEmpty ? [0] : durations, profile: profile, recompressed: isRecompressedJPEG)
            default:
                throw failure(status, haveHeader: header != nil)
            }
        }
    }

    private func makeInfo(_ header: Header, durations: [Double], profile: ImageColorProfile?, recompressed: Bool) -> ImageInfo {
        let frames = durations.count
        var info = ImageInfo(format: .jxl, width: header.width, height: header.height, frameCount: frames,
                             loopCount: frames > 1 ? Int(header.basic.animation.num_loops) : 0,
                             frameDurations: frames > 1 ? durations : [0], orientation: header.orientation,
                             hasAlpha: header.basic.alpha_bits > 0)
        info.colorProfile = profile
        info.bitDepth = Int(header.basic.bits_per_sample)
        info.compression = recompressed ? "recompressed JPEG" : (header.isLossless ? "lossless" : "lossy (XYB)")
        return info
    }

    func decodeFrames() throws(AlcedoError) -> AlcedoImage? {
        // With a target, libjxl stops at the end of the DC pass (JXL_DEC_FRAME_PROGRESSION), where
        // decodeFrame decides whether that detail is enough.
        let mayStopAtDC = options.targetSize != nil
        try subscribe([JXL_DEC_BASIC_INFO, JXL_DEC_COLOR_ENCODING, JXL_DEC_FRAME, JXL_DEC_FULL_IMAGE]
                      + (mayStopAtDC ? [JXL_DEC_FRAME_PROGRESSION] : []))
        if mayStopAtDC { _ = lib.JxlDecoderSetProgressiveDetail!(decoder, kDC) }
        var header: Header?
        var plan = ColorPlan.none
        var frames: [AlcedoImage.Frame] = []
        var duration = 0.0
        while true {
            let status = lib.JxlDecoderProcessInput!(decoder)
            switch status {
            case JXL_DEC_BASIC_INFO:
                let basic = try readBasicInfo()
                try options.limits.check(width: basic.width, height: basic.height, format: .jxl)
                try options.limits.checkWorkingMemory(workingMemory(basic), what: "libjxl's frame buffers", format: .jxl)
                header = basic
            case JXL_DEC_COLOR_ENCODING:
                if options.colorManagement != .ignore {
                    plan = ColorPlan.forRGBA(iccData: profile(JXL_COLOR_PROFILE_TARGET_DATA), mode: options.colorManagement, format: .jxl)
                }
            case JXL_DEC_FRAME:
                guard let header else { throw failure(JXL_DEC_ERROR, haveHeader: false) }
                if options.firstFrameOnly && !frames.isEmpty { return finish(header, frames: frames, plan: plan) }
                try options.limits.check(frameCount: frames.count + 1, width: header.width, height: header.height, format: .jxl)
                var frameHeader = JxlFrameHeader()
                _ = lib.JxlDecoderGetFrameHeader!(decoder, &frameHeader)
                duration = Double(frameHeader.duration) * header.tickSeconds
            case JXL_DEC_NEED_IMAGE_OUT_BUFFER:
                guard let header else { throw failure(JXL_DEC_ERROR, haveHeader: false) }
                var (pixels, fromDC) = try decodeFrame(header, index: frames.count)
                plan.apply(to: &pixels)
                let animated = header.basic.have_animation != 0
                frames.append(AlcedoImage.Frame(pixels: pixels, duration: animated ? AlcedoImage.normalizedFrameDuration(duration) : 0))
                // A still image rendered from its DC pass is done: the rest of the file is detail.
                if fromDC { return finish(header, frames: frames, plan: plan) }
            case JXL_DEC_SUCCESS:
                guard let header, !frames.isEmpty else { return nil }
                return finish(header, frames: frames, plan: plan)
            default:
                if status == JXL_DEC_NEED_MORE_INPUT, options.allowTruncated, let header, !frames.isEmpty {
                    return finish(header, frames: frames, plan: plan)
                }
                throw failure(status, haveHeader: header != nil, frame: frames.count)
            }
        }
    }

    /// Whether the DC pass (1/`ratio` of the picture's detail) is all the target needs: a still,
    /// opaque picture whose target is at most 1/`ratio` of it on the side that decides.
    private func dcSuffices(_ header: Header, ratio: Int) -> Bool {
        guard ratio > 1, header.basic.have_animation == 0, header.basic.alpha_bits == 0,
              header.basic.num_extra_channels == 0 else { return false }
        return options.minimumScale(forWidth: header.width, height: header.height) * Double(ratio) <= 1
    }

    /// Hands libjxl the frame's final storage and runs it until the frame is whole, or until
    /// its DC pass when that is all ``DecodingOptions/targetSize`` needs (`fromDC`).
    private func decodeFrame(_ header: Header, index: Int) throws(AlcedoError) -> (pixels: [UInt8], fromDC: Bool) {
        var format = Self.rgba8
        var needed = 0
        guard lib.JxlDecoderImageOutBufferSize!(decoder, &format, &needed) == JXL_DEC_SUCCESS,
              needed == header.width * header.height * 4 else {
            throw .decodingError(reason: .corrupt(format: .jxl, message: "frame \(index): libjxl asks for an output buffer of \(needed) bytes"))
        }
        var outcome: Result<Void, AlcedoError> = .success(())
        var fromDC = false
        let pixels = [UInt8](unsafeUninitializedCapacity: needed) { buffer, initialized in
            initialized = 0
            guard lib.JxlDecoderSetImageOutBuffer!(decoder, &format, buffer.baseAddress, needed) == JXL_DEC_SUCCESS else {
                outcome = .failure(.decodingError(reason: .corrupt(format: .jxl, message: "frame \(index): libjxl refused the output buffer")))
                return
            }
            while true {
                let status = lib.JxlDecoderProcessInput!(decoder)
                if status == JXL_DEC_FULL_IMAGE { initialized = needed; return }
                if status == JXL_DEC_FRAME_PROGRESSION {
                    // libjxl renders the passes read so far into the whole buffer; if it cannot,
                    // decoding goes on to the full image.
                    let ratio = Int(lib.JxlDecoderGetIntendedDownsamplingRatio!(decoder))
                    if dcSuffices(header, ratio: ratio), lib.JxlDecoderFlushImage!(decoder) == JXL_DEC_SUCCESS {
                        fromDC = true
                        initialized = needed
                        return
                    }
                    continue
                }
                outcome = .failure(failure(status, haveHeader: true, frame: index))
                return
            }
        }
        try outcome.get()
        return (pixels, fromDC)
    }

    private func finish(_ header: Header, frames: [AlcedoImage.Frame], plan: ColorPlan) -> AlcedoImage {
        AlcedoImage(width: header.width, height: header.height, frames: frames,
                    loopCount: frames.count > 1 ? Int(header.basic.animation.num_loops) : 0, sourceFormat: .jxl,
                    orientation: header.orientation, colorMetadata: plan.metadata)
    }
}
