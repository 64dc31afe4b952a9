import CWebP

extension WebPDecoder {
    /// Decodes an animated WebP: limits first (canvas and frame count from the container), then
    /// libwebp's animation decoder, which blends and disposes and hands back the full canvas.
    static func decodeAnimation(_ bytes: UnsafeRawBufferPointer, options: DecodingOptions) throws(AlcedoError) -> AlcedoImage {
        let container = try WebPContainer(bytes: bytes)
        let width = container.canvasWidth
        let height = container.canvasHeight
        try options.limits.check(width: width, height: height, format: .webp)
        guard container.frameCount > 0 else {
            throw .decodingError(reason: .invalidHeader(format: .webp, message: "an animation without frames"))
        }
        let frameCount = options.firstFrameOnly ? 1 : container.frameCount
        try options.limits.check(frameCount: frameCount, width: width, height: height, format: .webp)

        if options.firstFrameOnly, let still = try decodeFirstFrameAlone(container, bytes: bytes, options: options) {
            return still
        }

        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw .decodingError(reason: .emptyData)
        }
        var decoderOptions = WebPAnimDecoderOptions()
        guard alcedo_webp_anim_decoder_options_init(&decoderOptions) != 0 else {
            throw .decodingError(reason: .unsupportedFeature(format: .webp, message: "the installed libwebp does not match the headers Alcedo was built with"))
        }
        decoderOptions.color_mode = MODE_RGBA
        decoderOptions.use_threads = 0
        var webPData = WebPData(bytes: base, size: bytes.count)
        guard let decoder = alcedo_webp_anim_decoder_new(&webPData, &decoderOptions) else {
            throw WebPStatus.corrupt("libwebp's animation decoder rejected the file")
        }
        defer { WebPAnimDecoderDelete(decoder) }
        var info = WebPAnimInfo()
        guard WebPAnimDecoderGetInfo(decoder, &info) != 0,
              Int(info.canvas_width) == width, Int(info.canvas_height) == height else {
            throw WebPStatus.corrupt("libwebp's animation decoder disagrees with the container about the canvas")
        }

        let frameBytes = width * height * 4
        var frames: [AlcedoImage.Frame] = []
        frames.reserveCapacity(frameCount)
        var previousTimestamp = 0
        for index in 0..<frameCount {
            var canvas: UnsafeMutablePointer<UInt8>?
            var timestamp: Int32 = 0
            guard WebPAnimDecoderGetNext(decoder, &canvas, &timestamp) != 0, let canvas else {
                throw frameError(container, index: index)
            }
            // The canvas belongs to the decoder and is overwritten by the next frame.
            let pixels = [UInt8](UnsafeBufferPointer(start: canvas, count: frameBytes))
            let milliseconds = Int(timestamp) - previousTimestamp
            previousTimestamp = Int(timestamp)
            let duration = options.firstFrameOnly ? 0 : AlcedoImage.normalizedFrameDuration(Double(milliseconds) / 1000)
            frames.append(AlcedoImage.Frame(pixels: pixels, duration: duration))
        }
        return AlcedoImage(width: width, height: height, frames: frames,
                           loopCount: options.firstFrameOnly ? 0 : Int(info.loop_count), sourceFormat: .webp)
    }

    /// The first frame as a still image, decoded on its own (with decoder-side scaling) when it
    /// covers the whole canvas: a first frame is drawn on a cleared canvas without blending, so
    /// its decode is the composited frame. `nil` when the frame is smaller than the canvas.
    private static func decodeFirstFrameAlone(_ container: borrowing WebPContainer, bytes: UnsafeRawBufferPointer,
                                              options: DecodingOptions) throws(AlcedoError) -> AlcedoImage? {
        let canvasWidth = container.canvasWidth
        let canvasHeight = container.canvasHeight
        let decoded = try container.withFrame(at: 0) { frame throws(AlcedoError) -> (pixels: [UInt8], width: Int, height: Int)? in
            guard frame.complete != 0, frame.x_offset == 0, frame.y_offset == 0,
                  Int(frame.width) == canvasWidth, Int(frame.height) == canvasHeight,
                  let start = frame.fragment.bytes, frame.fragment.size > 0 else { return nil }
            let fragment = UnsafeRawBufferPointer(start: start, count: frame.fragment.size)
            let features = try features(of: start, count: fragment.count)
            guard Int(features.width) == canvasWidth, Int(features.height) == canvasHeight else { return nil }
            return try decodePixels(fragment, width: canvasWidth, height: canvasHeight, options: options)
        }
        guard let decoded = decoded ?? nil else { return nil }
        return AlcedoImage(width: decoded.width, height: decoded.height, pixels: decoded.pixels, sourceFormat: .webp)
    }

    /// Why frame `index` could not be decoded: the animation decoder only says that it failed,
    /// so the frame's own chunks are decoded again to learn libwebp's status.
    private static func frameError(_ container: borrowing WebPContainer, index: Int) -> AlcedoError {
        let subject = "frame \(index + 1) of \(container.frameCount)"
        let error = container.withFrame(at: index) { frame -> AlcedoError in
            guard frame.complete != 0 else {
                return .decodingError(reason: .truncated(format: .webp, message: "\(subject): the data ends inside the frame"))
            }
            guard let start = frame.fragment.bytes else {
                return WebPStatus.corrupt("\(subject): the frame has no image data")
            }
            var config = WebPDecoderConfig()
            guard alcedo_webp_init_decoder_config(&config) != 0 else {
                return WebPStatus.corrupt("\(subject) could not be decoded")
            }
            config.output.colorspace = MODE_RGBA
            let status = WebPDecode(start, frame.fragment.size, &config)
            WebPFreeDecBuffer(&config.output)
            guard status == VP8_STATUS_OK else { return WebPStatus.error(status, at: .pixels, subject: subject) }
            return WebPStatus.corrupt("\(subject) could not be composited onto the canvas")
        }
        return error ?? WebPStatus.corrupt("\(subject) is missing from the container")
    }
}
