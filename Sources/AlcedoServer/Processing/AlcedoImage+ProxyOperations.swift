import Alcedo

/// The pixel operations imgproxy's options need beyond Alcedo's processors, on every frame.
extension AlcedoImage {
    /// Every frame turned by `orientation` (as an EXIF orientation would turn stored pixels).
    func oriented(_ orientation: ImageOrientation) -> AlcedoImage {
        guard orientation != .up else { return self }
        var newWidth = width, newHeight = height
        let turned = frames.map { frame -> Frame in
            let result = orientation.apply(to: frame.pixels, width: width, height: height)
            newWidth = result.width
            newHeight = result.height
            return Frame(pixels: result.pixels, duration: frame.duration)
        }
        return replacingFrames(turned, width: newWidth, height: newHeight)
    }

    /// The rectangle at (`x`, `y`) of `size`, which must lie inside the image.
    func cropped(x: Int, y: Int, size: PixelSize) -> AlcedoImage {
        guard size != self.pixelSize || x != 0 || y != 0 else { return self }
        let rowBytes = size.width * 4, sourceRowBytes = width * 4
        let cut = frames.map { frame -> Frame in
            var pixels = [UInt8](repeating: 0, count: rowBytes * size.height)
            frame.pixels.withUnsafeBufferPointer { source in
                pixels.withUnsafeMutableBufferPointer { destination in
                    for row in 0..<size.height {
                        let from = (y + row) * sourceRowBytes + x * 4
                        destination.baseAddress!.advanced(by: row * rowBytes)
                            .update(from: source.baseAddress!.advanced(by: from), count: rowBytes)
                    }
                }
            }
            return Frame(pixels: pixels, duration: frame.duration)
        }
        return replacingFrames(cut, width: size.width, height: size.height)
    }

    /// The image on a canvas of `size` filled with `background` (or `backdrop`'s pixels, RGBA of
    /// `size`), its top-left corner at `origin` (which may be negative or push the image past the
    /// canvas: only the overlap is copied, replacing the canvas's pixels).
    func embedded(in size: PixelSize, at origin: (x: Int, y: Int), background: RGBA, backdrop: [UInt8]? = nil) -> AlcedoImage {
        let canvasRowBytes = size.width * 4
        let fromX = max(0, -origin.x), toX = min(width, size.width - origin.x)
        let fromY = max(0, -origin.y), toY = min(height, size.height - origin.y)
        let fill = [background.red, background.green, background.blue, background.alpha]
        let grown = frames.map { frame -> Frame in
            var pixels = backdrop ?? [UInt8](repeating: 0, count: canvasRowBytes * size.height)
            if backdrop == nil, fill != [0, 0, 0, 0] {
                for index in stride(from: 0, to: pixels.count, by: 4) {
                    pixels[index] = fill[0]; pixels[index + 1] = fill[1]; pixels[index + 2] = fill[2]; pixels[index + 3] = fill[3]
                }
            }
            guard toX > fromX, toY > fromY else { return Frame(pixels: pixels, duration: frame.duration) }
            frame.pixels.withUnsafeBufferPointer { source in
                pixels.withUnsafeMutableBufferPointer { destination in
                    for row in fromY..<toY {
                        destination.baseAddress!.advanced(by: (origin.y + row) * canvasRowBytes + (origin.x + fromX) * 4)
                            .update(from: source.baseAddress!.advanced(by: (row * width + fromX) * 4), count: (toX - fromX) * 4)
                    }
                }
            }
            return Frame(pixels: pixels, duration: frame.duration)
        }
        return replacingFrames(grown, width: size.width, height: size.height)
    }

    /// The mean of the red, green and blue values of the first frame's pixels (truncated), opaque:
    /// thumbor's `fill(auto)` colour.
    var meanColor: RGBA {
        let pixels = frames[0].pixels
        var sums = (0, 0, 0)
        var index = 0
        while index + 3 < pixels.count {
            sums.0 += Int(pixels[index]); sums.1 += Int(pixels[index + 1]); sums.2 += Int(pixels[index + 2])
            index += 4
        }
        let area = max(1, width * height)
        return RGBA(red: UInt8(sums.0 / area), green: UInt8(sums.1 / area), blue: UInt8(sums.2 / area))
    }

    /// Composited over an opaque `background`: every pixel becomes opaque.
    func flattened(over background: RGBA) -> AlcedoImage {
        blended(toward: background, makingOpaque: true) { pixels, index in pixels[index + 3] }
    }

    /// Composited over a canvas of `background` (the "over" operator): an opaque background
    /// flattens the image (``flattened(over:)``); a transparent one leaves it as it is; one in
    /// between leaves each pixel as transparent as both together.
    func composited(over background: RGBA) -> AlcedoImage {
        if background.alpha == 255 { return flattened(over: background) }
        guard background.alpha > 0 else { return self }
        let below = Double(background.alpha) / 255
        let paint = (Double(background.red), Double(background.green), Double(background.blue))
        return updatingPixels { p in
            var index = 0
            while index < p.count {
                let above = Double(p[index + 3]) / 255
                if above < 1 {
                    let alpha = above + below * (1 - above), under = below * (1 - above)
                    p[index] = UInt8(((Double(p[index]) * above + paint.0 * under) / alpha).rounded())
                    p[index + 1] = UInt8(((Double(p[index + 1]) * above + paint.1 * under) / alpha).rounded())
                    p[index + 2] = UInt8(((Double(p[index + 2]) * above + paint.2 * under) / alpha).rounded())
                    p[index + 3] = UInt8((alpha * 255).rounded())
                }
                index += 4
            }
        }
    }

    /// Every pixel whose alpha is at least `threshold` made opaque, its colour kept as it is
    /// (not composited onto anything); the others left as they are. A threshold of 0 drops the
    /// alpha channel, as Pillow's RGBA-to-RGB conversion does.
    func opaque(fromAlpha threshold: UInt8) -> AlcedoImage {
        return updatingPixels { p in
            var index = 3
            while index < p.count {
                if p[index] >= threshold { p[index] = 255 }
                index += 4
            }
        }
    }

    /// Each pixel's colour blended toward `color` by how much of it `coverage` (a byte a pixel,
    /// 255: all of it) leaves out; every pixel keeps its alpha.
    func painted(_ color: RGBA, outside coverage: [UInt8]) -> AlcedoImage {
        blended(toward: color, makingOpaque: false) { _, index in coverage[index >> 2] }
    }

    /// Each pixel's alpha scaled by `coverage` (a byte a pixel, 255: kept whole).
    func masked(by coverage: [UInt8]) -> AlcedoImage {
        return updatingPixels { p in
            for (pixel, kept) in coverage.enumerated() where kept != 255 {
                p[pixel * 4 + 3] = UInt8((Int(p[pixel * 4 + 3]) * Int(kept) + 127) / 255)
            }
        }
    }

    /// Every frame's colours blended toward `color`, each pixel keeping `kept(pixels, index)`
    /// of 255 of its own; alpha set to 255 when `makingOpaque`, else kept.
    private func blended(toward color: RGBA, makingOpaque: Bool,
                         kept: (UnsafeMutableBufferPointer<UInt8>, Int) -> UInt8) -> AlcedoImage {
        let paint = (Int(color.red), Int(color.green), Int(color.blue))
        return updatingPixels { p in
            var index = 0
            while index < p.count {
                let own = Int(kept(p, index))
                if own != 255 {
                    let inverse = 255 - own
                    p[index] = UInt8((Int(p[index]) * own + paint.0 * inverse + 127) / 255)
                    p[index + 1] = UInt8((Int(p[index + 1]) * own + paint.1 * inverse + 127) / 255)
                    p[index + 2] = UInt8((Int(p[index + 2]) * own + paint.2 * inverse + 127) / 255)
                    if makingOpaque { p[index + 3] = 255 }
                }
                index += 4
            }
        }
    }

    /// A copy whose every frame's pixels `update` changed in place (the size, durations and
    /// the rest kept).
    private func updatingPixels(_ update: (UnsafeMutableBufferPointer<UInt8>) -> Void) -> AlcedoImage {
        replacingFrames(frames.map { frame -> Frame in
            var pixels = frame.pixels
            pixels.withUnsafeMutableBufferPointer { update($0) }
            return Frame(pixels: pixels, duration: frame.duration)
        })
    }

    /// An unsharp mask: each colour channel moved away from its Gaussian blur of `sigma`
    /// by the difference (amount 1); alpha is kept.
    func sharpened(sigma: Double) throws(AlcedoError) -> AlcedoImage {
        let blurred = try BlurImageProcessor(blurRadius: sigma).process(self)
        var sharp: [Frame] = []
        sharp.reserveCapacity(frames.count)
        for (frame, soft) in zip(frames, blurred.frames) {
            var pixels = frame.pixels
            pixels.withUnsafeMutableBufferPointer { p in
                soft.pixels.withUnsafeBufferPointer { b in
                    var index = 0
                    while index < p.count {
                        for channel in 0..<3 {
                            let value = 2 * Int(p[index + channel]) - Int(b[index + channel])
                            p[index + channel] = UInt8(clamping: value)
                        }
                        index += 4
                    }
                }
            }
            sharp.append(Frame(pixels: pixels, duration: frame.duration))
        }
        return replacingFrames(sharp)
    }
}
