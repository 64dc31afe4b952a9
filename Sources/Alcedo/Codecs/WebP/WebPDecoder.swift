import CWebP
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decodes WebP with libwebp: lossy (`VP8 `), lossless (`VP8L`), with alpha (`ALPH`) and animated.
///
/// - **Still images** decode straight into the image's final pixel storage (no intermediate
///   copy), as RGBA8 with straight alpha. When ``DecodingOptions/targetSize`` is set, libwebp
///   scales while decoding to the smallest size that still covers
///   ``DecodingOptions/minimumScale(forWidth:height:)`` (rounded up, never larger than the
///   picture); the caller resamples to the exact size.
/// - **Animations** are composited as libwebp's animation decoder does, bit for bit (blending
///   and disposal done, each frame a full canvas), but onto one canvas plus one buffer of the
///   largest frame, which is counted against ``DecodingLimits/maxWorkingMemory``. Frame durations come from the frame timestamps, normalised by
///   ``AlcedoImage/normalizedFrameDuration(_:)`` (0 to 10 ms become 100 ms); the loop count is the
///   file's (0: forever). Animations decode at full size even with a target size: the pipeline
///   resamples every frame. With ``DecodingOptions/firstFrameOnly`` only the first frame is
///   decoded and the result is a still image (duration 0, loop count 0); when that frame covers
///   the whole canvas it is decoded on its own, so it gets the decoder-side scaling too, and
///   otherwise, with a target size, it is drawn at its scaled size and offset on a canvas scaled
///   down likewise: a tiny frame on a huge canvas costs the scaled canvas only.
/// - **Limits**: the size (and, for animations, the frame count from the container) is checked
///   against ``DecodingOptions/limits`` before any pixel buffer is allocated. With
///   ``DecodingOptions/firstFrameOnly`` the frame limit is checked for the one frame decoded.
/// - **Truncated files**: an error (`.truncated`) by default. With
///   ``DecodingOptions/allowTruncated`` a still image returns the rows libwebp could decode and
///   the missing rows are transparent black; a truncated animation is always an error.
/// - **EXIF orientation** from the `EXIF` chunk is applied when
///   ``DecodingOptions/appliesOrientation`` is set (the default) and recorded in
///   ``AlcedoImage/orientation`` either way, as for JPEG; decoder-side scaling works on the
///   stored picture with the target turned accordingly.
/// - **Colour**: an `ICCP` profile goes through ``DecodingOptions/colorManagement`` (default:
///   converted to sRGB after decoder-side scaling).
///
/// Every libwebp failure is an ``AlcedoError/decodingError(reason:)``: `.truncated` for
/// `VP8_STATUS_NOT_ENOUGH_DATA`, `.invalidHeader` for a malformed container or header,
/// `.corrupt` for a bad compressed stream, `.unsupportedFeature` for
/// `VP8_STATUS_UNSUPPORTED_FEATURE`.
public struct WebPDecoder: ImageDecoding {
    /// Always ``ImageFormat/webp``.
    public var format: ImageFormat { .webp }

    /// Creates a WebP decoder. It holds no state; one value can serve every thread.
    public init() {}

    /// Reads size, alpha and, for animations, frame count, loop count and frame durations from
    /// the container without decoding pixels. Limits are not checked here.
    /// - Parameters:
    ///   - data: the bytes of a WebP file.
    ///   - options: only ``DecodingOptions/colorManagement`` is read (default ``DecodingOptions/default``).
    public func info(for data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> ImageInfo {
        try Self.withBytes(of: data) { bytes throws(AlcedoError) -> ImageInfo in
            let features = try Self.features(of: bytes)
            let hasAlpha = features.has_alpha != 0
            let profile = options.colorManagement == .ignore ? nil
                : EmbeddedProfileReader.webpICCProfile(bytes).flatMap { ImageColorProfile(iccData: $0) }
            let orientation = ContainerExifReader.webpOrientation(bytes) ?? .up
            guard features.has_animation != 0 else {
                var info = ImageInfo(format: .webp, width: Int(features.width), height: Int(features.height),
                                     orientation: orientation, hasAlpha: hasAlpha)
                info.colorProfile = profile
                if options.appliesOrientation && orientation.swapsDimensions { swap(&info.width, &info.height) }
                return info
            }
            let container = try WebPContainer(bytes: bytes)
            let durations = container.frameDurations().map {
                AlcedoImage.normalizedFrameDuration(Double($0) / 1000)
            }
            var info = ImageInfo(format: .webp, width: container.canvasWidth, height: container.canvasHeight,
                                 frameCount: container.frameCount, loopCount: container.loopCount,
                                 frameDurations: durations.isEmpty ? [0] : durations, orientation: orientation, hasAlpha: hasAlpha)
            info.colorProfile = profile
            if options.appliesOrientation && orientation.swapsDimensions { swap(&info.width, &info.height) }
            return info
        }
    }

    /// Decodes a still or animated WebP into RGBA8 with straight alpha.
    /// - Parameters:
    ///   - data: the bytes of a WebP file.
    ///   - options: target size, first-frame-only, truncation and limits
    ///     (default ``DecodingOptions/default``: full size, every frame, default limits).
    public func decode(_ data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> AlcedoImage {
        let orientation = data.withUnsafeBytes { ContainerExifReader.webpOrientation($0) } ?? .up
        var stored = options
        if options.appliesOrientation && orientation.swapsDimensions, let target = options.targetSize {
            // Scaling happens on the stored picture: the target turns with it.
            stored.targetSize = PixelSize(width: target.height, height: target.width)
        }
        let image = try decodeStored(data, options: stored)
        return options.appliesOrientation ? image.applyingOrientation(orientation) : image.recordingOrientation(orientation)
    }

    /// Decodes the picture as stored (no EXIF orientation).
    private func decodeStored(_ data: Data, options: DecodingOptions) throws(AlcedoError) -> AlcedoImage {
        try Self.withBytes(of: data) { bytes throws(AlcedoError) -> AlcedoImage in
            let features = try Self.features(of: bytes)
            let plan = options.colorManagement == .ignore ? ColorPlan.none
                : ColorPlan.forRGBA(iccData: EmbeddedProfileReader.webpICCProfile(bytes), mode: options.colorManagement, format: .webp)
            if features.has_animation != 0 {
                return plan.apply(to: try Self.decodeAnimation(bytes, options: options))
            }
            if !options.allowTruncated {
                // The header alone satisfies WebPGetFeatures; walking the chunks finds a missing
                // or cut image chunk before the pixel buffer is allocated.
                _ = try WebPContainer(bytes: bytes)
            }
            var decoded = try Self.decodePixels(bytes, width: Int(features.width), height: Int(features.height), options: options)
            plan.apply(to: &decoded.pixels)
            return AlcedoImage(width: decoded.width, height: decoded.height, pixels: decoded.pixels, sourceFormat: .webp,
                               colorMetadata: plan.metadata)
        }
    }
}

extension WebPDecoder {
    /// Calls `body` with the bytes of `data`, keeping the typed error.
    static func withBytes<T>(of data: Data, _ body: (UnsafeRawBufferPointer) throws(AlcedoError) -> T) throws(AlcedoError) -> T {
        guard !data.isEmpty else { throw .decodingError(reason: .emptyData) }
        let result = data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Result<T, AlcedoError> in
            do throws(AlcedoError) { return .success(try body(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// The `RIFF····WEBP` signature, then libwebp's `WebPGetFeatures`.
    ///
    /// libwebp also accepts a bare `VP8 `/`VP8L` bitstream without the RIFF container; a file
    /// must have the container, so that bytes of another kind are never taken for WebP.
    static func features(of bytes: UnsafeRawBufferPointer) throws(AlcedoError) -> WebPBitstreamFeatures {
        let signature = Array("RIFF????WEBP".utf8)
        for index in 0..<min(bytes.count, signature.count) where index < 4 || index >= 8 {
            guard bytes[index] == signature[index] else {
                throw .decodingError(reason: .invalidHeader(format: .webp, message: "not a RIFF WebP file (no \"RIFF....WEBP\" signature)"))
            }
        }
        guard bytes.count >= signature.count, let base = bytes.baseAddress else {
            throw .decodingError(reason: .truncated(format: .webp, message: "\(bytes.count) bytes end inside the RIFF header"))
        }
        return try features(of: base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
    }

    /// libwebp's `WebPGetFeatures` on `count` bytes at `base` (a file or one animation frame).
    static func features(of base: UnsafePointer<UInt8>, count: Int) throws(AlcedoError) -> WebPBitstreamFeatures {
        var features = WebPBitstreamFeatures()
        let status = alcedo_webp_get_features(base, count, &features)
        guard status == VP8_STATUS_OK else { throw WebPStatus.error(status, at: .header) }
        return features
    }

    /// The size to ask libwebp for: `width` x `height` scaled by the options' minimum scale,
    /// rounded up, or `nil` when no scaling is wanted.
    static func scaledSize(width: Int, height: Int, options: DecodingOptions) -> (width: Int, height: Int)? {
        let scale = options.minimumScale(forWidth: width, height: height)
        guard scale < 1 else { return nil }
        // Rounded up, so the result always covers the target. The tolerance absorbs the
        // floating-point error of `target / side * side`; a true fraction is at least
        // 1 / 2^24 away from an integer (WebP sides are below 2^24).
        func side(_ length: Int) -> Int {
            min(length, max(1, Int((Double(length) * scale - 1e-7).rounded(.up))))
        }
        let size = (width: side(width), height: side(height))
        return size == (width, height) ? nil : size
    }

    /// Decodes one still picture (a whole file, or the chunks of one animation frame) of
    /// `width` x `height` straight into the returned array, scaled as the options ask, or to
    /// `exactSize` when given.
    static func decodePixels(_ bytes: UnsafeRawBufferPointer, width: Int, height: Int, options: DecodingOptions,
                             exactSize: (width: Int, height: Int)? = nil) throws(AlcedoError) -> (pixels: [UInt8], width: Int, height: Int) {
        try options.limits.check(width: width, height: height, format: .webp)
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw .decodingError(reason: .emptyData)
        }
        // libwebp keeps a pointer to the configuration in the incremental decoder, so it must
        // not move: it lives on the heap for the whole decode.
        let config = UnsafeMutablePointer<WebPDecoderConfig>.allocate(capacity: 1)
        config.initialize(to: WebPDecoderConfig())
        defer { config.deallocate() }
        guard alcedo_webp_init_decoder_config(config) != 0 else {
            throw .decodingError(reason: .unsupportedFeature(format: .webp, message: "the installed libwebp does not match the headers Alcedo was built with"))
        }
        let output = exactSize ?? scaledSize(width: width, height: height, options: options) ?? (width: width, height: height)
        if output != (width, height) {
            config.pointee.options.use_scaling = 1
            config.pointee.options.scaled_width = Int32(output.width)
            config.pointee.options.scaled_height = Int32(output.height)
        }
        config.pointee.output.colorspace = MODE_RGBA
        config.pointee.output.is_external_memory = 1

        let rowBytes = output.width * 4
        let byteCount = rowBytes * output.height
        var status = VP8_STATUS_OK
        let pixels = [UInt8](unsafeUninitializedCapacity: byteCount) { buffer, initializedCount in
            guard let pointer = buffer.baseAddress else { status = VP8_STATUS_OUT_OF_MEMORY; return }
            func attachBuffer() {
                config.pointee.output.u.RGBA.rgba = pointer
                config.pointee.output.u.RGBA.stride = Int32(rowBytes)
                config.pointee.output.u.RGBA.size = byteCount
            }
            attachBuffer()
            status = WebPDecode(base, bytes.count, config)
            WebPFreeDecBuffer(&config.pointee.output)
            if status == VP8_STATUS_NOT_ENOUGH_DATA && options.allowTruncated {
                attachBuffer()
                let rows = decodeAvailableRows(base, count: bytes.count, config: config, height: output.height)
                if rows > 0 {
                    // Rows libwebp could not reach are transparent black.
                    (pointer + rows * rowBytes).initialize(repeating: 0, count: byteCount - rows * rowBytes)
                    status = VP8_STATUS_OK
                }
            }
            initializedCount = status == VP8_STATUS_OK ? byteCount : 0
        }
        guard status == VP8_STATUS_OK else { throw WebPStatus.error(status, at: .pixels) }
        return (pixels, output.width, output.height)
    }

    /// Runs libwebp's incremental decoder over data that ends early, into the external buffer
    /// set in `config`, and returns how many whole rows it wrote (0 when none).
    private static func decodeAvailableRows(_ base: UnsafePointer<UInt8>, count: Int,
                                            config: UnsafeMutablePointer<WebPDecoderConfig>, height: Int) -> Int {
        guard let decoder = WebPIDecode(nil, 0, config) else { return 0 }
        defer { WebPIDelete(decoder) }
        let status = WebPIUpdate(decoder, base, count)
        guard status == VP8_STATUS_SUSPENDED || status == VP8_STATUS_OK else { return 0 }
        var lastRow: Int32 = 0
        guard WebPIDecGetRGB(decoder, &lastRow, nil, nil, nil) != nil else { return 0 }
        return max(0, min(Int(lastRow), height))
    }
}
