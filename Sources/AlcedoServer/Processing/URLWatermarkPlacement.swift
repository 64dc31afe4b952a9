import Alcedo

/// Draws a ``ProcessingOptions/URLWatermark`` as thumbor 7.8's `watermark` filter does:
///
/// - its alpha lowered by `255 * alpha / 100` (truncated), each value clamped at 0;
/// - with a width or height ratio, resized to fit that percentage of the image (the other side
///   following the watermark's aspect ratio), rounded as Python rounds;
/// - `Np` coordinates become `round(side * N / 100)` pixels; a negative coordinate puts the
///   watermark's far edge that far from the right or bottom (`-0` is the edge itself); `center`
///   centres it (truncated); `repeat` lays copies along the axis, spaced evenly (at least
///   10 pixels apart when fewer than two fit, at most 6 per axis when both repeat and over 100 fit);
/// - merged source-over onto every frame; what falls outside is dropped.
enum URLWatermarkPlacement {
    static func apply(_ mark: ProcessingOptions.URLWatermark, image overlay: AlcedoImage, over image: AlcedoImage) -> AlcedoImage {
        var overlay = overlay.isAnimated ? overlay.frame(at: 0) : overlay
        if mark.widthRatio != nil || mark.heightRatio != nil {
            let size = watermarkSize(image: image.pixelSize, watermark: overlay.pixelSize, widthRatio: mark.widthRatio,
                                     heightRatio: mark.heightRatio)
            if size != overlay.pixelSize, size.width > 0, size.height > 0 { overlay = overlay.resized(to: size) }
        }
        var pixels = overlay.frames[0].pixels
        let delta = 255 * mark.alpha / 100
        if delta != 0 {
            var index = 3
            while index < pixels.count {
                pixels[index] = UInt8(max(0, min(255, Int(pixels[index]) - delta)))
                index += 4
            }
        }
        let size = overlay.pixelSize
        var result = image
        let origins = origins(mark, image: image.pixelSize, watermark: size)
        for x in origins.x {
            for y in origins.y {
                result = WatermarkImage.composite(pixels, size: size, at: (x, y), over: result, opacity: 1)
            }
        }
        return result
    }

    /// thumbor's `calc_watermark_size`: the ratios are percentages of the image's sides.
    static func watermarkSize(image: PixelSize, watermark: PixelSize, widthRatio: Int?, heightRatio: Int?) -> PixelSize {
        let w = Double(watermark.width), h = Double(watermark.height)
        var maxWidth = widthRatio.map { Double(image.width) * Double($0) / 100 } ?? 0
        var maxHeight = heightRatio.map { Double(image.height) * Double($0) / 100 } ?? 0
        if maxWidth == 0 { maxWidth = w * maxHeight / h }
        if maxHeight == 0 { maxHeight = h * maxWidth / w }
        guard maxWidth > 0, maxHeight > 0 else { return watermark }
        if w / maxWidth >= h / maxHeight {
            return PixelSize(width: Int(maxWidth.rounded(.toNearestOrEven)), height: Int((h * maxWidth / w).rounded(.toNearestOrEven)))
        }
        return PixelSize(width: Int((w * maxHeight / h).rounded(.toNearestOrEven)), height: Int(maxHeight.rounded(.toNearestOrEven)))
    }

    /// The origins along each axis for a watermark of `mark` on an image of `image`.
    static func origins(_ mark: ProcessingOptions.URLWatermark, image: PixelSize, watermark: PixelSize) -> (x: [Int], y: [Int]) {
        var repeatX = repeats(side: image.width, mark: watermark.width)
        var repeatY = repeats(side: image.height, mark: watermark.height)
        if mark.x == .repeat, mark.y == .repeat, repeatX.count * repeatY.count > 100 {
            let countX = min(6, repeatX.count), countY = min(6, repeatY.count)
            repeatX = (countX, image.width - countX * watermark.width)
            repeatY = (countY, image.height - countY * watermark.height)
        }
        return (positions(mark.x, side: image.width, mark: watermark.width, repeats: repeatX),
                positions(mark.y, side: image.height, mark: watermark.height, repeats: repeatY))
    }

    /// thumbor's copies along an axis and the room left between them.
    private static func repeats(side: Int, mark: Int) -> (count: Int, spare: Int) {
        guard mark > 0 else { return (0, 0) }
        if Double(side) / Double(mark) < 2 { return (Int((Double(side) / Double(mark)).rounded(.up)), 10) }
        return (side / mark, side % mark)
    }

    /// The origins along one axis of a side `side` for a watermark of `mark` pixels.
    private static func positions(_ coordinate: ProcessingOptions.WatermarkCoordinate, side: Int, mark: Int,
                                  repeats: (count: Int, spare: Int)) -> [Int] {
        switch coordinate {
        case .center:
            return [Int((Double(side - mark) / 2).rounded(.towardZero))]
        case .pixels(let value, let fromEnd):
            return [fromEnd ? side - mark - value : value]
        case .percent(let percent, let fromEnd):
            let value = Int((Double(side) * Double(percent) / 100 + 1e-5).rounded(.toNearestOrEven))
            return [fromEnd ? side - mark - value : value]
        case .repeat:
            // Python's floor division; a spare below 0 spaces the copies closer.
            let divisor = max(repeats.count, 2) - 1
            let space = Int((Double(repeats.spare) / Double(divisor)).rounded(.down))
            return (0..<max(0, repeats.count)).map { $0 * (space + mark) }
        }
    }
}
