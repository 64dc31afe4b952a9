import Alcedo

/// The sizes and scales of imgproxy 4's processing for one source size, computed as imgproxy
/// computes them (its `calcScale`, `calcSizes` and `limitScale`): the crop before the resize,
/// the horizontal and vertical scales, the device-pixel-ratio scale that offsets and paddings
/// follow, the target size, the crop after the resize, and the aspect-ratio extension.
///
/// All sizes are in pixels of the oriented image (after auto-rotation, `rotate` and `flip`);
/// a size of 0 means "not set".
struct ImgproxyGeometry: Equatable {
    /// The crop before resizing (`crop`), 0 for the full side.
    var cropWidth = 0, cropHeight = 0
    /// The scales of the resize.
    var widthScale = 1.0, heightScale = 1.0
    /// The scale offsets and paddings follow: ``ProcessingOptions/dpr``, lowered when the image
    /// is not enlarged and by the result-dimension limit.
    var dprScale = 1.0
    /// The requested size times dpr and zoom (0 where not requested).
    var targetWidth = 0, targetHeight = 0
    /// The size after the resize.
    var scaledWidth = 0, scaledHeight = 0
    /// The crop after the resize (`fill`, `fill-down`), 0 where none.
    var resultCropWidth = 0, resultCropHeight = 0
    /// The canvas `extend_aspect_ratio` makes, 0 where none.
    var extendAspectRatioWidth = 0, extendAspectRatioHeight = 0

    /// The geometry for a source of `source` pixels.
    /// - Parameter maxResultDimension: the longest side a result may have, padding and
    ///   extension included; a larger one is scaled down to fit (0: no limit).
    init(source: PixelSize, options requested: ProcessingOptions, maxResultDimension: Int) {
        let options = Self.oriented(requested, source: source)
        cropWidth = Self.cropSide(source.width, options.crop?.width ?? 0)
        cropHeight = Self.cropSide(source.height, options.crop?.height ?? 0)
        let widthToScale = Self.minNonZero(cropWidth, source.width)
        let heightToScale = Self.minNonZero(cropHeight, source.height)
        computeScale(widthToScale, heightToScale, options)
        computeSizes(widthToScale, heightToScale, options)
        limitScale(widthToScale, heightToScale, options, maxResultDimension)
    }

    /// `options` with the requested width and height swapped when ``ProcessingOptions/adaptiveOrientation``
    /// asks for it and the source is portrait while the size is landscape, or the reverse.
    static func oriented(_ options: ProcessingOptions, source: PixelSize) -> ProcessingOptions {
        // With a side left to the aspect ratio, the size has the source's own orientation: no swap (as thumbor).
        guard options.adaptiveOrientation, options.width > 0, options.height > 0,
              (source.width < source.height && options.width > options.height)
                || (source.width > source.height && options.width < options.height) else { return options }
        var swapped = options
        swap(&swapped.width, &swapped.height)
        return swapped
    }

    /// The size the resized image is cropped to: the scaled size, cut to the result crop.
    var outputWidth: Int { Self.minNonZero(scaledWidth, resultCropWidth) }
    var outputHeight: Int { Self.minNonZero(scaledHeight, resultCropHeight) }

    private mutating func computeScale(_ width: Int, _ height: Int, _ o: ProcessingOptions) {
        var wshrink = 1.0, hshrink = 1.0
        let srcW = Double(width), srcH = Double(height)
        let dstW = o.width != 0 ? Double(o.width) : srcW
        let dstH = o.height != 0 ? Double(o.height) : srcH
        if dstW != srcW { wshrink = srcW / dstW }
        if dstH != srcH { hshrink = srcH / dstH }
        if wshrink != 1 || hshrink != 1 {
            var type = o.resizingType
            if type == .auto {
                let sourceLandscape = srcW - srcH >= 0, targetLandscape = dstW - dstH >= 0
                type = sourceLandscape == targetLandscape ? .fill : .fit
            }
            if o.width == 0, type != .force {
                wshrink = hshrink
            } else if o.height == 0, type != .force {
                hshrink = wshrink
            } else if type == .fit {
                wshrink = max(wshrink, hshrink)
                hshrink = wshrink
            } else if type == .fill || type == .fillDown || type == .cover {
                wshrink = min(wshrink, hshrink)
                hshrink = wshrink
            }
        }
        wshrink /= o.zoomX
        hshrink /= o.zoomY
        dprScale = o.dpr
        if !o.enlarge {
            let minShrink = min(wshrink, hshrink)
            if minShrink < 1 {
                wshrink /= minShrink
                hshrink /= minShrink
                // The target cannot be reached: a dpr below 1 would move further from it,
                // so it is compensated (not with extend, whose canvas must not change with dpr).
                if !o.extend { dprScale /= minShrink }
            }
            dprScale = min(dprScale, min(wshrink, hshrink))
        }
        if o.minWidth > 0 {
            let minShrink = srcW / Double(o.minWidth)
            if minShrink < wshrink {
                hshrink /= wshrink / minShrink
                wshrink = minShrink
            }
        }
        if o.minHeight > 0 {
            let minShrink = srcH / Double(o.minHeight)
            if minShrink < hshrink {
                wshrink /= hshrink / minShrink
                hshrink = minShrink
            }
        }
        wshrink /= dprScale
        hshrink /= dprScale
        wshrink = min(wshrink, srcW)
        hshrink = min(hshrink, srcH)
        widthScale = 1 / wshrink
        heightScale = 1 / hshrink
    }

    private mutating func computeSizes(_ width: Int, _ height: Int, _ o: ProcessingOptions) {
        targetWidth = Self.scale(o.width, dprScale * o.zoomX)
        targetHeight = Self.scale(o.height, dprScale * o.zoomY)
        scaledWidth = Self.scale(width, widthScale)
        scaledHeight = Self.scale(height, heightScale)
        resultCropWidth = o.resizingType == .cover ? 0 : targetWidth
        resultCropHeight = o.resizingType == .cover ? 0 : targetHeight
        if o.resizingType == .fillDown, !o.enlarge {
            let diffW = Double(targetWidth) / Double(scaledWidth), diffH = Double(targetHeight) / Double(scaledHeight)
            if diffW > diffH, diffW > 1 {
                resultCropHeight = Self.scale(scaledWidth, Double(targetHeight) / Double(targetWidth))
                resultCropWidth = scaledWidth
            } else if diffH > diffW, diffH > 1 {
                resultCropWidth = Self.scale(scaledHeight, Double(targetWidth) / Double(targetHeight))
                resultCropHeight = scaledHeight
            }
        }
        extendAspectRatioWidth = 0
        extendAspectRatioHeight = 0
        if o.extendAspectRatio, targetWidth > 0, targetHeight > 0 {
            let outW = outputWidth, outH = outputHeight
            let diffW = Double(targetWidth) / Double(outW), diffH = Double(targetHeight) / Double(outH)
            if diffH > diffW {
                extendAspectRatioHeight = Self.scale(outW, Double(targetHeight) / Double(targetWidth))
                extendAspectRatioWidth = outW
            } else if diffW > diffH {
                extendAspectRatioWidth = Self.scale(outH, Double(targetWidth) / Double(targetHeight))
                extendAspectRatioHeight = outH
            }
        }
    }

    private mutating func limitScale(_ width: Int, _ height: Int, _ o: ProcessingOptions, _ limit: Int) {
        guard limit > 0 else { return }
        var outW = outputWidth, outH = outputHeight
        if o.extend {
            outW = max(outW, targetWidth)
            outH = max(outH, targetHeight)
        } else if o.extendAspectRatio {
            outW = max(outW, extendAspectRatioWidth)
            outH = max(outH, extendAspectRatioHeight)
        }
        outW += Self.scaleToEven(o.padding.left, dprScale) + Self.scaleToEven(o.padding.right, dprScale)
        outH += Self.scaleToEven(o.padding.top, dprScale) + Self.scaleToEven(o.padding.bottom, dprScale)
        guard outW > limit || outH > limit else { return }
        let downScale = Double(limit) / Double(max(outW, outH))
        widthScale = max(widthScale * downScale, 1 / Double(width))
        heightScale = max(heightScale * downScale, 1 / Double(height))
        dprScale *= downScale
        computeSizes(width, height, o)
    }

    // MARK: imgproxy's rounding

    /// `crop` sizes: 0 is none, 1 or more is pixels, below 1 a fraction of the side.
    static func cropSide(_ side: Int, _ crop: Double) -> Int {
        if crop == 0 { return 0 }
        if crop >= 1 { return Int(crop) }
        return max(1, scale(side, crop))
    }

    static func minNonZero(_ a: Int, _ b: Int) -> Int {
        a == 0 ? b : (b == 0 ? a : min(a, b))
    }

    /// `side * scale` rounded half away from zero; 0 stays 0.
    static func scale(_ side: Int, _ scale: Double) -> Int {
        side == 0 ? 0 : Int((Double(side) * scale).rounded())
    }

    /// `side * scale` rounded half to even; 0 stays 0.
    static func scaleToEven(_ side: Int, _ scale: Double) -> Int {
        side == 0 ? 0 : Int((Double(side) * scale).rounded(.toNearestOrEven))
    }

    /// The origin of an `inner` rectangle placed in `outer` by `gravity`, as imgproxy places
    /// crops, extensions and watermarks: offsets of 1 or more are pixels times `dpr`, smaller
    /// ones fractions of the outer side; the result is kept inside `outer` unless
    /// `allowOverflow` (then at least one pixel overlaps). Smart gravity is placed as the centre.
    static func position(outer: PixelSize, inner: PixelSize, gravity: ProcessingOptions.Gravity, dpr: Double,
                         allowOverflow: Bool = false) -> (x: Int, y: Int) {
        let width = outer.width, height = outer.height, innerWidth = inner.width, innerHeight = inner.height
        var left: Int, top: Int
        switch gravity {
        case .focusPoint(let fx, let fy):
            left = scaleToEven(width, fx) - innerWidth / 2
            top = scaleToEven(height, fy) - innerHeight / 2
        case .compass(let compass, let gx, let gy):
            let offX = abs(gx) >= 1 ? Int((gx * dpr).rounded(.toNearestOrEven)) : scaleToEven(width, gx)
            let offY = abs(gy) >= 1 ? Int((gy * dpr).rounded(.toNearestOrEven)) : scaleToEven(height, gy)
            left = halfToEven(width - innerWidth + 1) + offX
            top = halfToEven(height - innerHeight + 1) + offY
            switch compass {
            case .north, .northEast, .northWest: top = offY
            case .south, .southEast, .southWest: top = height - innerHeight - offY
            default: break
            }
            switch compass {
            case .east, .northEast, .southEast: left = width - innerWidth - offX
            case .west, .northWest, .southWest: left = offX
            default: break
            }
        }
        let minX: Int, maxX: Int, minY: Int, maxY: Int
        if allowOverflow {
            minX = 1 - innerWidth
            maxX = width - 1
            minY = 1 - innerHeight
            maxY = height - 1
        } else {
            minX = 0
            maxX = width - innerWidth
            minY = 0
            maxY = height - innerHeight
        }
        let x: Int = max(minX, min(left, maxX))
        let y: Int = max(minY, min(top, maxY))
        return (x, y)
    }

    /// `value / 2` rounded half to even; 0 stays 0.
    private static func halfToEven(_ value: Int) -> Int {
        value == 0 ? 0 : Int((Double(value) / 2).rounded(.toNearestOrEven))
    }
}
