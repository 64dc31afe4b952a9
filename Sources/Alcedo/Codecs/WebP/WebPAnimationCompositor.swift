import CWebP

/// Composites the frames of an animated WebP onto one canvas, as libwebp's `WebPAnimDecoder`
/// does (same key-frame rule, same disposal, same non-premultiplied blend, bit for bit), but
/// with one canvas instead of three: each frame is decoded into a buffer of its own size and
/// blended from there, and disposal clears a rectangle of the canvas after the frame is taken.
///
/// Memory: the canvas (which becomes the last frame kept, so it is no extra cost) plus one
/// buffer of the largest frame's size.
///
/// Scaled: for a thumbnail, the canvas can be smaller than the animation's
/// (``init(width:height:scaledWidth:scaledHeight:)``). Each frame is then decoded by libwebp
/// straight to its rectangle's scaled size and drawn there, so neither a full-size canvas nor a
/// full-size frame is ever allocated. Rectangle edges are rounded to the nearest scaled pixel,
/// so frames that touch at full size touch when scaled; the pixels then match a full-size
/// composite resampled, up to the resampling's rounding at frame edges, not bit for bit.
struct WebPAnimationCompositor: ~Copyable {
    /// How the previous frame left the canvas: its rectangle at full size (for libwebp's
    /// key-frame rule) and on the canvas (for disposal).
    private struct Previous {
        var width = 0, height = 0
        var area = Area(x: 0, y: 0, width: 0, height: 0)
        var disposesToBackground = false
        var wasKeyFrame = false
    }

    /// A rectangle on the canvas.
    struct Area: Equatable {
        var x: Int, y: Int, width: Int, height: Int
    }

    /// The animation's canvas size.
    let width: Int
    let height: Int
    /// The size of ``canvas``: the animation's, or smaller when scaled.
    let canvasWidth: Int
    let canvasHeight: Int
    /// The composited canvas, RGBA8 straight alpha; transparent black where nothing was drawn.
    private(set) var canvas: [UInt8]
    private var frameBuffer: [UInt8] = []
    private var previous: Previous?

    /// A transparent canvas of `width` x `height`.
    init(width: Int, height: Int) {
        self.init(width: width, height: height, scaledWidth: width, scaledHeight: height)
    }

    /// A transparent canvas of `scaledWidth` x `scaledHeight` for an animation of `width` x
    /// `height` (each scaled side at most the full one).
    init(width: Int, height: Int, scaledWidth: Int, scaledHeight: Int) {
        self.width = width
        self.height = height
        canvasWidth = min(width, max(1, scaledWidth))
        canvasHeight = min(height, max(1, scaledHeight))
        canvas = [UInt8](repeating: 0, count: canvasWidth * canvasHeight * 4)
    }

    /// Where a frame at (`x`, `y`) of `frameWidth` x `frameHeight` lands on the canvas: edges
    /// rounded to the nearest scaled pixel, at least one pixel each way.
    func area(x: Int, y: Int, frameWidth: Int, frameHeight: Int) -> Area {
        guard canvasWidth != width || canvasHeight != height else {
            return Area(x: x, y: y, width: frameWidth, height: frameHeight)
        }
        func edges(_ start: Int, _ length: Int, full: Int, scaled: Int) -> (Int, Int) {
            let scale = Double(scaled) / Double(full)
            let low = min(scaled - 1, Int((Double(start) * scale).rounded()))
            let high = min(scaled, max(low + 1, Int((Double(start + length) * scale).rounded())))
            return (low, high - low)
        }
        let (left, areaWidth) = edges(x, frameWidth, full: width, scaled: canvasWidth)
        let (top, areaHeight) = edges(y, frameHeight, full: height, scaled: canvasHeight)
        return Area(x: left, y: top, width: areaWidth, height: areaHeight)
    }

    /// Decodes frame `iterator` and draws it onto the canvas (after disposing the previous
    /// frame as it asked).
    /// - Throws: the decoding error of the frame's bitstream, with `subject` naming the frame.
    mutating func draw(_ iterator: WebPIterator, subject: String) throws(AlcedoError) {
        let frameX = Int(iterator.x_offset), frameY = Int(iterator.y_offset)
        let frameWidth = Int(iterator.width), frameHeight = Int(iterator.height)
        guard frameWidth > 0, frameHeight > 0, frameX >= 0, frameY >= 0,
              frameX + frameWidth <= width, frameY + frameHeight <= height else {
            throw WebPStatus.corrupt("\(subject) lies outside the canvas")
        }
        guard iterator.complete != 0, let start = iterator.fragment.bytes, iterator.fragment.size > 0 else {
            throw .decodingError(reason: .truncated(format: .webp, message: "\(subject): the data ends inside the frame"))
        }
        let area = self.area(x: frameX, y: frameY, frameWidth: frameWidth, frameHeight: frameHeight)
        try decodeFrame(start, count: iterator.fragment.size, width: frameWidth, height: frameHeight,
                        scaledTo: (area.width, area.height), subject: subject)

        let isFullFrame = frameWidth == width && frameHeight == height
        let blends = iterator.blend_method == WEBP_MUX_BLEND
        let isKeyFrame: Bool
        if let previous {
            isKeyFrame = ((iterator.has_alpha == 0 || !blends) && isFullFrame)
                || (previous.disposesToBackground
                    && ((previous.width == width && previous.height == height) || previous.wasKeyFrame))
            if previous.disposesToBackground { clear(previous.area) }
        } else {
            isKeyFrame = true
        }
        if isKeyFrame { clear(Area(x: 0, y: 0, width: canvasWidth, height: canvasHeight)) }

        let disposedRect = previous.flatMap { $0.disposesToBackground ? $0.area : nil }
        let rowPixels = canvasWidth
        frameBuffer.withUnsafeBufferPointer { source in
            canvas.withUnsafeMutableBufferPointer { target in
                guard let src = source.baseAddress, let dst = target.baseAddress else { return }
                for row in 0..<area.height {
                    let y = area.y + row
                    let from = UnsafeRawPointer(src + row * area.width * 4)
                    let to = UnsafeMutableRawPointer(dst + (y * rowPixels + area.x) * 4)
                    guard blends && !isKeyFrame else {
                        to.copyMemory(from: from, byteCount: area.width * 4)
                        continue
                    }
                    // libwebp leaves the pixels inside a rectangle just disposed unblended
                    // (they were transparent), and blends every other pixel of the frame.
                    var rawStart = area.width, rawEnd = area.width
                    if let disposed = disposedRect, y >= disposed.y, y < disposed.y + disposed.height {
                        rawStart = min(max(disposed.x - area.x, 0), area.width)
                        rawEnd = min(max(disposed.x + disposed.width - area.x, 0), area.width)
                    }
                    for x in 0..<area.width {
                        let pixel = from.loadUnaligned(fromByteOffset: x * 4, as: UInt32.self)
                        if x >= rawStart && x < rawEnd {
                            to.storeBytes(of: pixel, toByteOffset: x * 4, as: UInt32.self)
                        } else if pixel >> 24 != 0xFF {
                            let under = to.loadUnaligned(fromByteOffset: x * 4, as: UInt32.self)
                            to.storeBytes(of: Self.blend(pixel, over: under), toByteOffset: x * 4, as: UInt32.self)
                        } else {
                            to.storeBytes(of: pixel, toByteOffset: x * 4, as: UInt32.self)
                        }
                    }
                }
            }
        }
        previous = Previous(width: frameWidth, height: frameHeight, area: area,
                            disposesToBackground: iterator.dispose_method == WEBP_MUX_DISPOSE_BACKGROUND,
                            wasKeyFrame: isKeyFrame)
    }

    /// Hands the canvas over (the compositor is done).
    consuming func takeCanvas() -> [UInt8] { canvas }

    /// Decodes one frame's bitstream into ``frameBuffer`` (RGBA8, straight alpha), scaled by
    /// libwebp to `scaledTo` when that differs from the frame's size.
    private mutating func decodeFrame(_ start: UnsafePointer<UInt8>, count: Int, width frameWidth: Int, height frameHeight: Int,
                                      scaledTo size: (width: Int, height: Int), subject: String) throws(AlcedoError) {
        let byteCount = size.width * size.height * 4
        if frameBuffer.count < byteCount {
            frameBuffer = []
            frameBuffer = [UInt8](unsafeUninitializedCapacity: byteCount) { _, initialized in initialized = byteCount }
        }
        var config = WebPDecoderConfig()
        guard alcedo_webp_init_decoder_config(&config) != 0 else {
            throw .decodingError(reason: .unsupportedFeature(format: .webp, message: "the installed libwebp does not match the headers Alcedo was built with"))
        }
        if size != (frameWidth, frameHeight) {
            config.options.use_scaling = 1
            config.options.scaled_width = Int32(size.width)
            config.options.scaled_height = Int32(size.height)
        }
        let status = frameBuffer.withUnsafeMutableBufferPointer { buffer -> VP8StatusCode in
            guard let base = buffer.baseAddress else { return VP8_STATUS_OUT_OF_MEMORY }
            config.output.colorspace = MODE_RGBA
            config.output.is_external_memory = 1
            config.output.u.RGBA.rgba = base
            config.output.u.RGBA.stride = Int32(size.width * 4)
            config.output.u.RGBA.size = byteCount
            let status = WebPDecode(start, count, &config)
            if status == VP8_STATUS_OK && (Int(config.output.width) != size.width || Int(config.output.height) != size.height) {
                return VP8_STATUS_BITSTREAM_ERROR
            }
            return status
        }
        WebPFreeDecBuffer(&config.output)
        guard status == VP8_STATUS_OK else { throw WebPStatus.error(status, at: .pixels, subject: subject) }
    }

    /// Clears a rectangle of the canvas to transparent black.
    private mutating func clear(_ area: Area) {
        let rowPixels = canvasWidth
        canvas.withUnsafeMutableBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            for row in area.y..<(area.y + area.height) {
                (base + (row * rowPixels + area.x) * 4).initializeMemory(as: UInt8.self, repeating: 0, count: area.width * 4)
            }
        }
    }

    /// libwebp's non-premultiplied "source over destination" of two RGBA8 pixels read as
    /// little-endian words (red in the low byte, alpha in the high byte), to the bit.
    @inline(__always)
    static func blend(_ source: UInt32, over destination: UInt32) -> UInt32 {
        let sourceAlpha = source >> 24
        guard sourceAlpha != 0 else { return destination }
        let destinationAlpha = destination >> 24
        let destinationFactor = (destinationAlpha * (256 - sourceAlpha)) >> 8
        let blendAlpha = sourceAlpha + destinationFactor
        let scale = (UInt32(1) << 24) / blendAlpha
        func channel(_ shift: UInt32) -> UInt32 {
            let s = (source >> shift) & 0xFF
            let d = (destination >> shift) & 0xFF
            let unscaled = s * sourceAlpha + d * destinationFactor
            return UInt32((UInt64(unscaled) * UInt64(scale)) >> 24)
        }
        return channel(0) | channel(8) << 8 | channel(16) << 16 | blendAlpha << 24
    }
}
