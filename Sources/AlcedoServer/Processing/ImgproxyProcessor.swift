import Alcedo
import Foundation

/// Runs imgproxy's processing for a set of ``ProcessingOptions`` on a decoded image:
/// orientation, rotation, crop, resize (fit/fill/fill-down/force/auto, enlarge, dpr), the
/// fill crop by gravity (content-aware with `g:sm`, see ``SmartCrop``), extend, blur,
/// sharpen, background, then Alcedo's round corners, border and tint. Every frame of an animation is processed (``ProcessingOptions/page``
/// keeps one).
///
/// Identifier: `com.alcedo.imgproxy(<canonical options>)`; options that do not change pixels
/// (format, quality, cache buster) are not part of it, so those variants share one processed image.
public struct ImgproxyProcessor: ImageProcessor {
    /// The options applied.
    public let options: ProcessingOptions
    /// The largest side of a result, in pixels (default 8192); a larger result is refused
    /// with ``ProcessorErrorReason/outputTooLarge(processor:size:limit:)`` before it is made.
    public let maximumResultSide: Int

    /// Creates the processor for `options`, refusing results over `maximumResultSide` per side.
    public init(options: ProcessingOptions, maximumResultSide: Int = 8192) {
        self.options = options
        self.maximumResultSide = maximumResultSide
    }

    public var identifier: String {
        "com.alcedo.imgproxy(\(options.pixelIdentifier),max\(maximumResultSide))"
    }

    /// Lets the decoder scale (JPEG DCT, WebP) when nothing before the resize needs full-size
    /// pixels: no crop, and a requested size. The target always covers what the resize needs.
    public var decodingTarget: (size: PixelSize, mode: ContentMode)? {
        guard options.crop == nil, options.width > 0 || options.height > 0 else { return nil }
        let large = 1 << 20
        var w = options.width > 0 ? Self.scaled(options.width, options.dpr) : large
        var h = options.height > 0 ? Self.scaled(options.height, options.dpr) : large
        if options.rotate == 90 || options.rotate == 270 { swap(&w, &h) }
        if !options.autoRotate {
            // The stored orientation may swap the sides: cover the larger one both ways.
            let side = max(w == large ? 0 : w, h == large ? 0 : h)
            return (PixelSize(width: side, height: side), .aspectFill)
        }
        let covers = options.resizingType == .fit || options.width == 0 || options.height == 0
        return (PixelSize(width: w, height: h), covers ? .aspectFit : .aspectFill)
    }

    public func process(_ input: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        var image = input
        if let page = options.page, image.frames.count > 1 {
            image = image.frame(at: min(page, image.frames.count - 1))
        }
        if !options.autoRotate, image.orientation != .up {
            image = image.oriented(Self.inverse(image.orientation))
        }
        switch options.rotate {
        case 90: image = image.oriented(.right)
        case 180: image = image.oriented(.down)
        case 270: image = image.oriented(.left)
        default: break
        }
        if let crop = options.crop {
            let w = Self.cropSide(crop.width, image.width), h = Self.cropSide(crop.height, image.height)
            let origin = Self.place(PixelSize(width: w, height: h), in: image, gravity: crop.gravity ?? options.gravity)
            image = image.cropped(x: origin.x, y: origin.y, size: PixelSize(width: w, height: h))
        }
        let plan = resizePlan(for: image.size)
        try checkResult(plan.scaled, frames: image.frames.count)
        if plan.scaled != image.size { image = image.resized(to: plan.scaled) }
        if let crop = plan.crop, crop != image.size {
            let origin = Self.place(crop, in: image, gravity: options.gravity)
            image = image.cropped(x: origin.x, y: origin.y, size: crop)
        }
        if options.extend {
            let target = PixelSize(width: max(image.width, plan.requested.width), height: max(image.height, plan.requested.height))
            if target != image.size {
                try checkResult(target, frames: image.frames.count)
                image = image.extended(to: target, background: options.background ?? .clear)
            }
        }
        if options.blur > 0 { image = try BlurImageProcessor(blurRadius: options.blur).process(image) }
        if options.sharpen > 0 { image = try image.sharpened(sigma: options.sharpen) }
        if let background = options.background { image = image.flattened(over: background) }
        if options.roundCorner > 0 { image = try RoundCornerImageProcessor(radius: .point(options.roundCorner)).process(image) }
        if let border = options.border { image = try BorderImageProcessor(border: border.width, color: border.color).process(image) }
        if let tint = options.tint { image = try TintImageProcessor(tint: tint).process(image) }
        return image
    }

    /// What the resize does to an image of `size`: the scaled size, the crop after it (fill),
    /// and the requested size (for extend; a side of 0 takes the result's).
    struct ResizePlan: Equatable {
        var scaled: PixelSize
        var crop: PixelSize?
        var requested: PixelSize
    }

    func resizePlan(for size: PixelSize) -> ResizePlan {
        let w = options.width > 0 ? Self.scaled(options.width, options.dpr) : 0
        let h = options.height > 0 ? Self.scaled(options.height, options.dpr) : 0
        let wr = Double(w) / Double(size.width), hr = Double(h) / Double(size.height)
        var type = options.resizingType
        if type == .auto {
            let sourcePortrait = size.height > size.width, targetPortrait = h > w
            type = (w > 0 && h > 0 && sourcePortrait == targetPortrait) ? .fill : .fit
        }
        var scaleX: Double, scaleY: Double
        switch (w > 0, h > 0) {
        case (false, false): (scaleX, scaleY) = (options.dpr, options.dpr)
        case (true, false): (scaleX, scaleY) = (wr, wr)
        case (false, true): (scaleX, scaleY) = (hr, hr)
        case (true, true):
            switch type {
            case .fit: scaleX = min(wr, hr); scaleY = scaleX
            case .fill, .fillDown: scaleX = max(wr, hr); scaleY = scaleX
            case .force, .auto: (scaleX, scaleY) = (wr, hr)
            }
        }
        var clamped = false
        if !options.enlarge {
            if scaleX > 1 || scaleY > 1 { clamped = true }
            scaleX = min(scaleX, 1)
            scaleY = min(scaleY, 1)
        }
        let scaled = PixelSize(width: max(1, Int((Double(size.width) * scaleX).rounded())),
                               height: max(1, Int((Double(size.height) * scaleY).rounded())))
        var crop: PixelSize?
        if w > 0, h > 0, type == .fill || type == .fillDown {
            if type == .fillDown, clamped {
                // Too small to fill: keep the requested aspect ratio at the largest size that fits.
                var cw = scaled.width, ch = Int((Double(cw) * Double(h) / Double(w)).rounded())
                if ch > scaled.height {
                    ch = scaled.height
                    cw = Int((Double(ch) * Double(w) / Double(h)).rounded())
                }
                crop = PixelSize(width: max(1, min(cw, scaled.width)), height: max(1, min(ch, scaled.height)))
            } else {
                crop = PixelSize(width: min(w, scaled.width), height: min(h, scaled.height))
            }
        }
        return ResizePlan(scaled: scaled, crop: crop, requested: PixelSize(width: w, height: h))
    }

    private func checkResult(_ size: PixelSize, frames: Int) throws(AlcedoError) {
        guard size.width <= maximumResultSide, size.height <= maximumResultSide else {
            throw .processorError(reason: .outputTooLarge(processor: "result (max side \(maximumResultSide) px)", size: size,
                                                          limit: maximumResultSide))
        }
    }

    static func scaled(_ side: Int, _ dpr: Double) -> Int {
        max(1, Int((Double(side) * dpr).rounded()))
    }

    private static func cropSide(_ value: Double, _ full: Int) -> Int {
        if value <= 0 { return full }
        if value < 1 { return max(1, min(full, Int((value * Double(full)).rounded()))) }
        return max(1, min(full, Int(value.rounded())))
    }

    /// The origin of a `size` rectangle inside `image`, placed by `gravity`: smart gravity
    /// (`sm`) looks at the pixels (``SmartCrop``, first frame; offsets do not apply, as in
    /// imgproxy), the others only at the sizes.
    static func place(_ size: PixelSize, in image: AlcedoImage, gravity: ProcessingOptions.Gravity) -> (x: Int, y: Int) {
        if case .compass(.smart, _, _) = gravity { return SmartCrop.origin(of: size, in: image) }
        return place(size, in: image.size, gravity: gravity)
    }

    /// The origin of a `size` rectangle inside `bounds`, placed by `gravity`, kept inside
    /// (smart gravity, which needs the pixels, is centred here).
    static func place(_ size: PixelSize, in bounds: PixelSize, gravity: ProcessingOptions.Gravity) -> (x: Int, y: Int) {
        let freeX = Double(bounds.width - size.width), freeY = Double(bounds.height - size.height)
        var x: Double, y: Double
        switch gravity {
        case .focusPoint(let fx, let fy):
            x = fx * Double(bounds.width) - Double(size.width) / 2
            y = fy * Double(bounds.height) - Double(size.height) / 2
        case .compass(let compass, let dx, let dy):
            switch compass {
            case .west, .northWest, .southWest: x = dx
            case .east, .northEast, .southEast: x = freeX - dx
            case .center, .north, .south, .smart: x = freeX / 2 + dx
            }
            switch compass {
            case .north, .northWest, .northEast: y = dy
            case .south, .southWest, .southEast: y = freeY - dy
            case .center, .east, .west, .smart: y = freeY / 2 + dy
            }
        }
        let clampedX = Int(min(max(x, 0), max(freeX, 0)).rounded())
        let clampedY = Int(min(max(y, 0), max(freeY, 0)).rounded())
        return (clampedX, clampedY)
    }

    /// The orientation that undoes `orientation`.
    static func inverse(_ orientation: ImageOrientation) -> ImageOrientation {
        switch orientation {
        case .right: return .left
        case .left: return .right
        default: return orientation
        }
    }
}
