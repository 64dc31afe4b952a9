import CWebP

extension WebPDecoder {
    /// Decodes an animated WebP: limits first (canvas and frame count from the container), then
    /// each frame composited onto one canvas (``WebPAnimationCompositor``: libwebp's blending and
    /// disposal, with one canvas-sized buffer instead of the three of `WebPAnimDecoder`).
    ///
    /// Memory: the frames kept (each a copy of the canvas; the canvas itself becomes the last
    /// one, so it is counted in ``DecodingLimits/maxTotalBytes`` with them) plus one buffer of
    /// the largest frame, counted against ``DecodingLimits/maxWorkingMemory``. With a target
    /// size all of them are scaled down to it (frames decoded scaled by libwebp). With
    /// ``DecodingOptions/firstFrameOnly``, or a single frame, only the canvas is allocated.
    static func decodeAnimation(_ bytes: UnsafeRawBufferPointer, options: DecodingOptions) throws(AlcedoError) -> AlcedoImage {
        let deadline = options.limits.startDeadline(format: .webp)
        let container = try WebPContainer(bytes: bytes)
        let width = container.canvasWidth
        let height = container.canvasHeight
        try options.limits.check(width: width, height: height, format: .webp)
        guard container.frameCount > 0 else {
            throw .decodingError(reason: .invalidHeader(format: .webp, message: "an animation without frames"))
        }
        // One frame is a still picture: the first-frame paths below allocate no more than it needs.
        let onePicture = options.firstFrameOnly || container.frameCount == 1
        let frameCount = onePicture ? 1 : container.frameCount
        // With a target size, frames are composited on a canvas scaled down to it: each kept
        // frame, the canvas and the frame buffer are the scaled size, never the full one.
        let scaled = scaledSize(width: width, height: height, options: options) ?? (width: width, height: height)
        try options.limits.check(frameCount: frameCount, width: scaled.width, height: scaled.height, format: .webp)

        if onePicture {
            if let still = try decodeFirstFrameAlone(container, bytes: bytes, options: options) { return still }
            if let scaled = try decodeFirstFrameScaled(container, options: options) { return scaled }
        }
        var compositor = WebPAnimationCompositor(width: width, height: height,
                                                 scaledWidth: scaled.width, scaledHeight: scaled.height)
        // The frame buffer: as large as the largest frame drawn. The frames' own pixels, which
        // libwebp decodes whole even when it scales them, count against the byte limit too: a
        // scaled canvas bounds the memory, this bounds the work.
        var largestFrame = 0
        var decodedBytes = 0
        for index in 0..<frameCount {
            guard let header = container.frame(at: index) else { throw missingFrame(container, index: index) }
            let area = compositor.area(x: header.x, y: header.y, frameWidth: header.width, frameHeight: header.height)
            largestFrame = max(largestFrame, area.width * area.height * 4)
            decodedBytes += header.width * header.height * 4
            if decodedBytes > options.limits.maxTotalBytes {
                throw .decodingError(reason: .animationTooLarge(format: .webp, bytes: decodedBytes, limit: options.limits.maxTotalBytes))
            }
        }
        try options.limits.checkWorkingMemory(largestFrame, what: "the frame buffer of an animation", format: .webp)

        var frames: [AlcedoImage.Frame] = []
        frames.reserveCapacity(frameCount)
        for index in 0..<frameCount {
            try deadline.check()
            let subject = "frame \(index + 1) of \(container.frameCount)"
            let duration = try container.withFrame(at: index) { iterator throws(AlcedoError) -> Int in
                try compositor.draw(iterator, subject: subject)
                return Int(iterator.duration)
            }
            guard let duration else { throw missingFrame(container, index: index) }
            let seconds = onePicture ? 0 : AlcedoImage.normalizedFrameDuration(Double(duration) / 1000)
            // The last frame takes the canvas itself; the others a copy of it.
            let pixels = index == frameCount - 1 ? [] : compositor.canvas
            frames.append(AlcedoImage.Frame(pixels: pixels, duration: seconds))
        }
        frames[frameCount - 1].pixels = compositor.takeCanvas()
        return AlcedoImage(width: scaled.width, height: scaled.height, frames: frames,
                           loopCount: onePicture ? 0 : container.loopCount, sourceFormat: .webp)
    }

    /// The error for a frame the container lists but the demuxer cannot hand out.
    private static func missingFrame(_ container: borrowing WebPContainer, index: Int) -> AlcedoError {
        WebPStatus.corrupt("frame \(index + 1) of \(container.frameCount) is missing from the container")
    }

    /// The first frame, drawn on a transparent canvas scaled down to the target size, when a
    /// target size is set and the canvas is larger: only that scaled canvas is allocated (a
    /// tiny frame on a huge canvas costs the scaled canvas, not the full one). The frame is
    /// decoded by libwebp at its scaled size and placed at its scaled offset. `nil` when no
    /// scaling applies.
    private static func decodeFirstFrameScaled(_ container: borrowing WebPContainer,
                                               options: DecodingOptions) throws(AlcedoError) -> AlcedoImage? {
        let canvasWidth = container.canvasWidth
        let canvasHeight = container.canvasHeight
        guard let scaled = scaledSize(width: canvasWidth, height: canvasHeight, options: options) else { return nil }
        let sx = Double(scaled.width) / Double(canvasWidth)
        let sy = Double(scaled.height) / Double(canvasHeight)
        let result = try container.withFrame(at: 0) { iterator throws(AlcedoError) -> [UInt8] in
            guard iterator.complete != 0, let start = iterator.fragment.bytes, iterator.fragment.size > 0 else {
                throw .decodingError(reason: .truncated(format: .webp, message: "frame 1: the data ends inside the frame"))
            }
            let left = min(scaled.width - 1, Int((Double(iterator.x_offset) * sx).rounded(.down)))
            let top = min(scaled.height - 1, Int((Double(iterator.y_offset) * sy).rounded(.down)))
            let right = min(scaled.width, max(left + 1, Int((Double(Int(iterator.x_offset) + Int(iterator.width)) * sx).rounded(.up))))
            let bottom = min(scaled.height, max(top + 1, Int((Double(Int(iterator.y_offset) + Int(iterator.height)) * sy).rounded(.up))))
            let size = (width: min(right - left, Int(iterator.width)), height: min(bottom - top, Int(iterator.height)))
            let fragment = UnsafeRawBufferPointer(start: start, count: iterator.fragment.size)
            let frame = try decodePixels(fragment, width: Int(iterator.width), height: Int(iterator.height),
                                         options: options, exactSize: size)
            var canvas = [UInt8](repeating: 0, count: scaled.width * scaled.height * 4)
            canvas.withUnsafeMutableBytes { target in
                frame.pixels.withUnsafeBytes { source in
                    let rowBytes = frame.width * 4
                    for row in 0..<frame.height {
                        let to = target.baseAddress! + ((top + row) * scaled.width + left) * 4
                        to.copyMemory(from: source.baseAddress! + row * rowBytes, byteCount: rowBytes)
                    }
                }
            }
            return canvas
        }
        guard let result else { return nil }
        return AlcedoImage(width: scaled.width, height: scaled.height, pixels: result, sourceFormat: .webp)
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

}
