import CWebP
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes images as WebP with libwebp: lossy or lossless, alpha kept, animations with every
/// frame's duration and the loop count.
///
/// - A still image (one frame) goes through `WebPEncode`. A lossy animation stores each frame
///   as the smallest rectangle that changed since the frame before (`WebPFrameRectangles`),
///   encoded on its own with `WebPEncode` straight from RGBA to YUV (no alpha plane where the
///   rectangle is opaque), the frames side by side on as many cores as
///   ``Resampler/maximumConcurrency`` lets one operation use, and assembled with libwebpmux.
///   A lossless animation goes through libwebp's animation encoder (its blending candidates
///   save bytes there). Either way, consecutive identical frames are merged into one with the
///   durations added; what is shown does not change.
/// - ``EncodingOptions/quality`` (1...100) drives lossy compression; it is validated even when
///   ``EncodingOptions/lossless`` is set, where it is ignored.
/// - Lossless output keeps every pixel exactly, including the colour of fully transparent
///   pixels (libwebp's `exact` mode).
/// - Frame durations are written in whole milliseconds (rounded, at most 16,777,215 ms, the
///   format's limit) and the loop count is clamped to the format's 0...65,535 (0: forever).
/// - Metadata (EXIF, ICC, XMP) is not written.
public struct WebPEncoder: ImageEncoding {
    /// Always ``ImageFormat/webp``.
    public var format: ImageFormat { .webp }

    /// libwebp's content presets (imgproxy's `IMGPROXY_WEBP_PRESET`): each tunes the lossy
    /// coder's filter strength, sharpness and segments for a kind of picture.
    public enum Preset: Int, Sendable, Hashable, CaseIterable {
        /// libwebp's defaults (the default).
        case `default` = 0
        /// Digital pictures, such as portraits or indoor shots.
        case picture = 1
        /// Outdoor photographs with natural lighting.
        case photo = 2
        /// Hand or line drawings with high-contrast details.
        case drawing = 3
        /// Small colourful images.
        case icon = 4
        /// Text-like content.
        case text = 5

        /// The preset imgproxy names `name` (`default`, `picture`, `photo`, `drawing`, `icon`,
        /// `text`), or `nil`.
        public init?(name: String) {
            guard let preset = Self.allCases.first(where: { "\($0)" == name.lowercased() }) else { return nil }
            self = preset
        }
    }

    /// The content preset for lossy pictures (default ``Preset/default``).
    public var preset: Preset = .default

    /// libwebp's speed/size trade-off, 0 (fastest) to 6 (smallest files); default 4, libwebp's
    /// own default. Values outside 0...6 are clamped when encoding. Lossy still pictures over
    /// about 17.9 MP use at most 2, which keeps libwebp's working memory near 1.5 bytes a pixel
    /// instead of up to 15.
    public var method: Int

    /// The most working memory libwebp may take for one picture's lossless parts, in bytes
    /// (default 256 MiB, as ``DecodingLimits/maxWorkingMemory``): the lossless coder, which
    /// codes a lossy picture's transparency and all of a lossless one, needs about 6.5 bytes a
    /// pixel for an alpha plane and 14 for a lossless picture (hash chains, transform buffers).
    /// A lossless animation adds its encoder's canvases and candidate frames, 16 to 24 bytes a
    /// pixel of the canvas; a lossy one needs, per frame encoded at a time, 4 to 17.5 bytes a
    /// pixel (11 to 24 with transparency). A picture that would need more is refused with
    /// `.imageNotEncodable` before libwebp allocates anything: by default a lossy picture with
    /// transparency over about 41 MP, a lossless one over about 19 MP, a lossless animation over
    /// about 11 to 16 MP of canvas. Opaque lossy still pictures have no such bound.
    public var maxWorkingMemory: Int

    /// Creates a WebP encoder.
    /// - Parameters:
    ///   - method: libwebp's speed/size trade-off, clamped to 0...6 (default 4).
    ///   - maxWorkingMemory: the bound on the lossless coder's working memory (default 256 MiB).
    ///   - preset: libwebp's content preset for lossy pictures (default ``Preset/default``).
    public init(method: Int = 4, maxWorkingMemory: Int = 256 << 20, preset: Preset = .default) {
        self.method = min(6, max(0, method))
        self.maxWorkingMemory = maxWorkingMemory
        self.preset = preset
    }

    /// The animation encoder's working memory for a `width` x `height` canvas: its canvases
    /// (the previous one, a copy of the current one, the previous one disposed) and the
    /// candidate sub-frames it encodes, about 24 bytes a pixel with libwebp's token buffer
    /// (methods 3 to 6) and 16 without. Measured with libwebp 1.2 on Debian 12.
    static func animationWorkingMemory(width: Int, height: Int, method: Int) -> Int {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels < Int.max / 32 else { return .max }
        return pixels * (method <= 2 ? 16 : 24)
    }

    /// The working memory of a lossy animation of `width` x `height` frames encoded by `workers`
    /// at a time: per worker, one frame's YUV(A) picture (2.5 bytes a pixel) and libwebp's lossy
    /// coder (about 1.5 bytes a pixel in one pass at methods 0 to 2, up to 15 with the token
    /// buffer of methods 3 to 6) and, with transparency, the alpha plane's lossless coder (6.5).
    static func lossyAnimationWorkingMemory(width: Int, height: Int, method: Int, hasAlpha: Bool, workers: Int) -> Int {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels < Int.max / 64 / max(1, workers) else { return .max }
        let tenthsPerPixel = 25 + (method <= 2 ? 15 : 150) + (hasAlpha ? 65 : 0)
        return pixels * tenthsPerPixel / 10 * max(1, workers)
    }

    /// How many frames of a lossy animation are encoded at a time: one per core that
    /// ``Resampler/maximumConcurrency`` lets one operation use, at most one per frame.
    static func frameWorkers(frameCount: Int) -> Int {
        let all = ProcessInfo.processInfo.activeProcessorCount
        let limit = Resampler.maximumConcurrency
        return max(1, min(frameCount, limit > 0 ? min(limit, all) : all))
    }

    /// The lossless coder's working memory for a `width` x `height` picture (see
    /// ``maxWorkingMemory``): 14 bytes a pixel lossless, 6.5 for a lossy picture's alpha
    /// plane, none for an opaque lossy one. Measured with libwebp 1.2 on Debian 12.
    static func losslessWorkingMemory(width: Int, height: Int, lossless: Bool, hasAlpha: Bool) -> Int {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels < Int.max / 16 else { return .max }
        if lossless { return pixels * 14 }
        return hasAlpha ? pixels * 13 / 2 : 0
    }

    /// Encodes `image` as WebP: one frame as a still image, several as an animation.
    /// - Parameters:
    ///   - image: the image to encode, every frame with its duration.
    ///   - options: quality and lossless mode (default ``EncodingOptions/default``: lossy, quality 90).
    /// - Throws: `.invalidQuality` when the quality is outside 1...100, `.imageNotEncodable` when
    ///   a side is over 16,383 pixels (the format's limit) or the lossless coder would pass
    ///   ``maxWorkingMemory``, `.libraryFailure` when libwebp fails.
    public func encode(_ image: AlcedoImage, options: EncodingOptions = .default) throws(AlcedoError) -> Data {
        try options.validate()
        guard image.width <= Int(WEBP_MAX_DIMENSION), image.height <= Int(WEBP_MAX_DIMENSION) else {
            throw .encodingError(reason: .imageNotEncodable(
                format: .webp, message: "\(image.width)x\(image.height) is over the format's limit of \(WEBP_MAX_DIMENSION) pixels a side"))
        }
        var config = try makeConfig(options)
        if config.lossless == 0 { config.method = Self.lossyMethod(config.method, width: image.width, height: image.height) }
        let animated = image.frames.count > 1
        var needed = Self.losslessWorkingMemory(width: image.width, height: image.height, lossless: options.lossless,
                                                hasAlpha: image.hasAlpha)
        let workers = animated && !options.lossless ? Self.frameWorkers(frameCount: image.frames.count) : 1
        if animated && options.lossless {
            let canvas = Self.animationWorkingMemory(width: image.width, height: image.height, method: Int(config.method))
            needed = needed > Int.max - canvas ? .max : needed + canvas
        } else if animated {
            needed = Self.lossyAnimationWorkingMemory(width: image.width, height: image.height, method: Int(config.method),
                                                      hasAlpha: image.hasAlpha, workers: workers)
        }
        guard needed <= maxWorkingMemory else {
            let what = animated ? "animation" : options.lossless ? "lossless" : "lossy with transparency"
            throw .encodingError(reason: .imageNotEncodable(
                format: .webp, message: "a \(image.width)x\(image.height) \(what) needs about \(needed >> 20) MiB of libwebp "
                    + "working memory, over the \(maxWorkingMemory >> 20) MiB limit"))
        }
        let encoded = !animated ? try Self.encodeStill(image, config: &config)
            : options.lossless ? try Self.encodeAnimation(image, config: &config)
            : try Self.encodeLossyAnimation(image, config: config, workers: workers)
        return ICCProfileEmbedding.embed(image.colorMetadata.pixelProfile, in: encoded, format: .webp,
                                         width: image.width, height: image.height, hasAlpha: image.hasAlpha)
    }

    /// libwebp's configuration for `options`.
    private func makeConfig(_ options: EncodingOptions) throws(AlcedoError) -> WebPConfig {
        var config = WebPConfig()
        let initialized = preset == .default ? alcedo_webp_config_init(&config)
            : alcedo_webp_config_preset(&config, Int32(preset.rawValue), Float(options.quality))
        guard initialized != 0 else { throw Self.failure("libwebp does not match the headers Alcedo was built with") }
        config.method = Int32(min(6, max(0, method)))
        config.thread_level = 0
        if options.lossless {
            // Quality keeps libwebp's default of 75: for lossless it is effort, not fidelity.
            config.lossless = 1
            config.exact = 1
        } else {
            config.quality = Float(options.quality)
        }
        guard WebPValidateConfig(&config) != 0 else { throw Self.failure("libwebp rejected the configuration") }
        return config
    }

    /// The working memory above which the lossy encoder gives up its token buffer (256 MiB, as
    /// the JPEG encoder's bound on optimised Huffman tables).
    static let tokenBufferLimit = 256 << 20

    /// The lossy method used for a `width` x `height` picture: `method`, but at most 2 when
    /// libwebp's token buffer (methods 3 to 6 keep every coefficient token of the picture until
    /// the end, up to about 15 bytes a pixel on noisy input) could pass ``tokenBufferLimit``.
    /// Method 2 encodes in one pass with about 1.5 bytes a pixel of working memory, for files
    /// about 2% larger.
    static func lossyMethod(_ method: Int32, width: Int, height: Int) -> Int32 {
        width * height * 15 > tokenBufferLimit ? min(method, 2) : method
    }

    private static func encodeStill(_ image: AlcedoImage, config: inout WebPConfig) throws(AlcedoError) -> Data {
        let writer = UnsafeMutablePointer<WebPMemoryWriter>.allocate(capacity: 1)
        writer.initialize(to: WebPMemoryWriter())
        WebPMemoryWriterInit(writer)
        defer {
            WebPMemoryWriterClear(writer)
            writer.deallocate()
        }
        // Lossy input is imported straight to YUV(A), 1.5 to 2.5 bytes a pixel, instead of an
        // ARGB copy of 4 bytes a pixel that libwebp would then convert to the same YUV(A).
        let argb = config.lossless != 0
        return try withPicture(image.pixels, width: image.width, height: image.height, argb: argb) { picture throws(AlcedoError) -> Data in
            picture.pointee.writer = WebPMemoryWrite
            picture.pointee.custom_ptr = UnsafeMutableRawPointer(writer)
            guard WebPEncode(&config, picture) != 0 else { throw failure(picture.pointee.error_code) }
            guard let bytes = writer.pointee.mem, writer.pointee.size > 0 else { throw failure("libwebp wrote nothing") }
            return Data(bytes: bytes, count: writer.pointee.size)
        }
    }

    private static func encodeAnimation(_ image: AlcedoImage, config: inout WebPConfig) throws(AlcedoError) -> Data {
        var encoderOptions = WebPAnimEncoderOptions()
        guard alcedo_webp_anim_encoder_options_init(&encoderOptions) != 0 else {
            throw failure("libwebp does not match the headers Alcedo was built with")
        }
        encoderOptions.anim_params.loop_count = Int32(min(65_535, max(0, image.loopCount)))
        encoderOptions.allow_mixed = 0
        guard let encoder = alcedo_webp_anim_encoder_new(Int32(image.width), Int32(image.height), &encoderOptions) else {
            throw failure("libwebp could not create the animation encoder")
        }
        defer { WebPAnimEncoderDelete(encoder) }

        var timestamp = 0
        for (index, frame) in image.frames.enumerated() {
            try withPicture(frame.pixels, width: image.width, height: image.height) { picture throws(AlcedoError) in
                guard WebPAnimEncoderAdd(encoder, picture, Int32(timestamp), &config) != 0 else {
                    throw failure("frame \(index + 1): \(animationError(encoder, picture: picture))")
                }
            }
            let milliseconds = (frame.duration * 1000).rounded()
            timestamp += milliseconds.isFinite ? Int(min(16_777_215, max(0, milliseconds))) : 0
            guard timestamp <= Int(Int32.max) else {
                throw .encodingError(reason: .imageNotEncodable(format: .webp, message: "the animation is longer than \(Int32.max) ms"))
            }
        }
        // A last call without a frame gives the last frame its duration.
        guard WebPAnimEncoderAdd(encoder, nil, Int32(timestamp), nil) != 0 else {
            throw failure(animationError(encoder, picture: nil))
        }
        var output = WebPData()
        alcedo_webp_data_init(&output)
        defer { alcedo_webp_data_clear(&output) }
        guard WebPAnimEncoderAssemble(encoder, &output) != 0 else { throw failure(animationError(encoder, picture: nil)) }
        guard let bytes = output.bytes, output.size > 0 else { throw failure("libwebp wrote nothing") }
        return Data(bytes: bytes, count: output.size)
    }

    /// A lossy animation: every changed rectangle encoded on its own (`workers` at a time), then
    /// assembled as frames that replace what they cover (no blending, no disposal).
    private static func encodeLossyAnimation(_ image: AlcedoImage, config: WebPConfig, workers: Int) throws(AlcedoError) -> Data {
        let rectangles = WebPFrameRectangles(frames: image.frames, width: image.width, height: image.height).entries
        let encoded = UnsafeMutableBufferPointer<Swift.Result<[UInt8], AlcedoError>>.allocate(capacity: rectangles.count)
        encoded.initialize(repeating: .success([]))
        defer { encoded.deinitialize().deallocate() }
        let frames = image.frames, width = image.width
        // Each iteration writes only its own slot, and concurrentPerform returns after all of them.
        nonisolated(unsafe) let slots = encoded
        let encodeOne: @Sendable (Int) -> Void = { index in
            let entry = rectangles[index]
            var frameConfig = config
            slots[index] = Swift.Result { () throws(AlcedoError) -> [UInt8] in
                try encodeRectangle(frames[entry.frame].pixels, canvasWidth: width, entry, config: &frameConfig)
            }
        }
        if workers > 1 && rectangles.count > 1 {
            // Frames are handed out in turn, so at most `workers` are encoded at a time.
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                for index in stride(from: worker, to: rectangles.count, by: workers) { encodeOne(index) }
            }
        } else {
            for index in rectangles.indices { encodeOne(index) }
        }

        guard let mux = alcedo_webp_mux_new() else { throw failure("libwebpmux could not create a container") }
        defer { WebPMuxDelete(mux) }
        for (index, entry) in rectangles.enumerated() {
            let bytes = try encoded[index].get()
            let status = bytes.withUnsafeBufferPointer { buffer -> WebPMuxError in
                var frame = WebPMuxFrameInfo()
                frame.bitstream = WebPData(bytes: buffer.baseAddress, size: buffer.count)
                frame.x_offset = Int32(entry.x)
                frame.y_offset = Int32(entry.y)
                frame.duration = Int32(entry.duration)
                frame.id = WEBP_CHUNK_ANMF
                frame.dispose_method = WEBP_MUX_DISPOSE_NONE
                frame.blend_method = WEBP_MUX_NO_BLEND
                return WebPMuxPushFrame(mux, &frame, 1)
            }
            guard status == WEBP_MUX_OK else { throw failure("libwebpmux refused frame \(entry.frame + 1) (error \(status.rawValue))") }
        }
        var parameters = WebPMuxAnimParams(bgcolor: 0xFFFF_FFFF, loop_count: Int32(min(65_535, max(0, image.loopCount))))
        guard WebPMuxSetAnimationParams(mux, &parameters) == WEBP_MUX_OK,
              WebPMuxSetCanvasSize(mux, Int32(image.width), Int32(image.height)) == WEBP_MUX_OK else {
            throw failure("libwebpmux refused the animation's parameters")
        }
        var output = WebPData()
        alcedo_webp_data_init(&output)
        defer { alcedo_webp_data_clear(&output) }
        guard WebPMuxAssemble(mux, &output) == WEBP_MUX_OK, let bytes = output.bytes, output.size > 0 else {
            throw failure("libwebpmux could not assemble the animation")
        }
        return Data(bytes: bytes, count: output.size)
    }

    /// One rectangle of a frame (`canvasWidth` pixels a row) as a lossy still WebP file.
    private static func encodeRectangle(_ pixels: [UInt8], canvasWidth: Int, _ entry: WebPFrameRectangles.Entry,
                                        config: inout WebPConfig) throws(AlcedoError) -> [UInt8] {
        let writer = UnsafeMutablePointer<WebPMemoryWriter>.allocate(capacity: 1)
        writer.initialize(to: WebPMemoryWriter())
        WebPMemoryWriterInit(writer)
        let picture = UnsafeMutablePointer<WebPPicture>.allocate(capacity: 1)
        picture.initialize(to: WebPPicture())
        defer {
            WebPPictureFree(picture)
            picture.deallocate()
            WebPMemoryWriterClear(writer)
            writer.deallocate()
        }
        guard alcedo_webp_picture_init(picture) != 0 else { throw failure("libwebp does not match the headers Alcedo was built with") }
        picture.pointee.use_argb = 0
        picture.pointee.width = Int32(entry.width)
        picture.pointee.height = Int32(entry.height)
        // Straight to YUV(A); libwebp leaves out the alpha plane when the rectangle is opaque.
        let imported = pixels.withUnsafeBufferPointer { buffer in
            WebPPictureImportRGBA(picture, buffer.baseAddress! + (entry.y * canvasWidth + entry.x) * 4, Int32(canvasWidth * 4))
        }
        guard imported != 0 else { throw failure(picture.pointee.error_code) }
        picture.pointee.writer = WebPMemoryWrite
        picture.pointee.custom_ptr = UnsafeMutableRawPointer(writer)
        guard WebPEncode(&config, picture) != 0 else { throw failure(picture.pointee.error_code) }
        guard let bytes = writer.pointee.mem, writer.pointee.size > 0 else { throw failure("libwebp wrote nothing") }
        return [UInt8](UnsafeBufferPointer(start: bytes, count: writer.pointee.size))
    }

    /// Calls `body` with a picture holding `pixels` (RGBA8, straight alpha), freed afterwards:
    /// as ARGB when `argb` (lossless and animations need it, the default), else as YUV(A).
    private static func withPicture<T>(_ pixels: [UInt8], width: Int, height: Int, argb: Bool = true,
                                       _ body: (UnsafeMutablePointer<WebPPicture>) throws(AlcedoError) -> T) throws(AlcedoError) -> T {
        let picture = UnsafeMutablePointer<WebPPicture>.allocate(capacity: 1)
        picture.initialize(to: WebPPicture())
        defer {
            WebPPictureFree(picture)
            picture.deallocate()
        }
        guard alcedo_webp_picture_init(picture) != 0 else { throw failure("libwebp does not match the headers Alcedo was built with") }
        picture.pointee.use_argb = argb ? 1 : 0
        picture.pointee.width = Int32(width)
        picture.pointee.height = Int32(height)
        let imported = pixels.withUnsafeBufferPointer { buffer in
            WebPPictureImportRGBA(picture, buffer.baseAddress, Int32(width * 4))
        }
        guard imported != 0 else { throw failure(picture.pointee.error_code) }
        return try body(picture)
    }

    /// The animation encoder's message for its last failure, or the picture's error code.
    private static func animationError(_ encoder: OpaquePointer, picture: UnsafeMutablePointer<WebPPicture>?) -> String {
        if let message = WebPAnimEncoderGetError(encoder), message.pointee != 0 {
            return String(cString: message)
        }
        return picture.map { describe($0.pointee.error_code) } ?? "the animation encoder failed"
    }

    private static func failure(_ message: String) -> AlcedoError {
        .encodingError(reason: .libraryFailure(format: .webp, message: message))
    }

    private static func failure(_ code: WebPEncodingError) -> AlcedoError {
        switch code {
        case VP8_ENC_ERROR_BAD_DIMENSION, VP8_ENC_ERROR_FILE_TOO_BIG:
            return .encodingError(reason: .imageNotEncodable(format: .webp, message: describe(code)))
        default:
            return failure(describe(code))
        }
    }

    private static func describe(_ code: WebPEncodingError) -> String {
        switch code {
        case VP8_ENC_ERROR_OUT_OF_MEMORY, VP8_ENC_ERROR_BITSTREAM_OUT_OF_MEMORY: return "out of memory"
        case VP8_ENC_ERROR_NULL_PARAMETER: return "a required parameter is missing"
        case VP8_ENC_ERROR_INVALID_CONFIGURATION: return "invalid configuration"
        case VP8_ENC_ERROR_BAD_DIMENSION: return "the picture's width or height is not encodable"
        case VP8_ENC_ERROR_PARTITION0_OVERFLOW: return "the first partition is over 512 KiB (try a lower quality)"
        case VP8_ENC_ERROR_PARTITION_OVERFLOW: return "a partition is over 16 MiB (try a lower quality)"
        case VP8_ENC_ERROR_BAD_WRITE: return "the encoded bytes could not be written"
        case VP8_ENC_ERROR_FILE_TOO_BIG: return "the file would be over 4 GiB"
        case VP8_ENC_ERROR_USER_ABORT: return "encoding was aborted"
        default: return "libwebp error \(code.rawValue)"
        }
    }
}
