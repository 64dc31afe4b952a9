import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Runs imgproxy 4's processing for a set of ``ProcessingOptions`` on a decoded image, in
/// imgproxy's order: orientation, trim, rotation and flip, crop, resize (fit/fill/fill-down/
/// force/auto with enlarge, dpr, zoom, min-width/min-height and the result-dimension limit), the
/// crop to the result by gravity (content-aware with `g:sm`, see ``SmartCrop``), blur, sharpen,
/// pixelate, extend and extend-aspect-ratio by their gravities, padding, background, watermark,
/// then Alcedo's round corners, border and tint, and last ``ProcessingOptions/steps`` in their
/// own order (thumbor's post-transform filters, as its URL orders them). Every frame of an animation is processed
/// (``ProcessingOptions/page`` keeps one); `trim` applies to still images only, as in imgproxy; thumbor's corner trim cuts every frame to the first frame's box.
/// The sizes follow ``ImgproxyGeometry``.
///
/// Identifier: `com.alcedo.imgproxy(<canonical options>)`; options that do not change pixels
/// (format, quality, cache buster) are not part of it, so those variants share one processed image.
public struct ImgproxyProcessor: ImageProcessor {
    /// The options applied.
    public let options: ProcessingOptions
    /// The largest side of a result, in pixels (default 8192); a larger result is refused
    /// with ``ProcessorErrorReason/outputTooLarge(processor:size:limit:)`` before it is made.
    public let maximumResultSide: Int
    /// imgproxy's `IMGPROXY_MAX_RESULT_DIMENSION`: a result whose longest side (padding and
    /// extension included) is over it is scaled down to fit (default 0: no limit). The URL's
    /// `max_result_dimension` replaces it.
    public let maxResultDimension: Int
    /// The server's watermark image for `watermark`/`wm` (default `nil`: the option does nothing).
    public let watermark: WatermarkImage?
    /// The decoded images the URL watermark and frame steps of ``ProcessingOptions/steps`` draw,
    /// by URL (one missing is not drawn).
    public let urlImages: [String: AlcedoImage]

    /// Creates the processor for `options`.
    /// - Parameters:
    ///   - maximumResultSide: results with a larger side are refused (default 8192).
    ///   - maxResultDimension: results are scaled down to fit this side (default 0: no limit).
    ///   - watermark: the image `wm` places (default `nil`: none).
    ///   - urlImages: the images of the steps' URL watermarks and frames, by URL (default none).
    public init(options: ProcessingOptions, maximumResultSide: Int = 8192, maxResultDimension: Int = 0,
                watermark: WatermarkImage? = nil, urlImages: [String: AlcedoImage] = [:]) {
        self.urlImages = urlImages
        self.options = options
        self.maximumResultSide = maximumResultSide
        self.maxResultDimension = maxResultDimension
        self.watermark = watermark
    }

    /// The result-dimension limit in force: the URL's, else the server's.
    var effectiveResultDimension: Int { options.security.maxResultDimension ?? maxResultDimension }

    public var identifier: String {
        var text = "com.alcedo.imgproxy(\(options.pixelIdentifier),max\(maximumResultSide)"
        if effectiveResultDimension > 0 { text += ",mrd\(effectiveResultDimension)" }
        if options.watermark != nil, let watermark { text += ",wm" + watermark.identifier }
        return text + ")"
    }

    /// Lets the decoder scale (JPEG DCT, WebP) when nothing before the resize needs full-size
    /// pixels: no crop, no trim, no minimum size, a requested size that keeps the aspect ratio. The target always
    /// covers what the resize needs.
    public var decodingTarget: (size: PixelSize, mode: ContentMode)? {
        guard options.crop == nil, options.trim == nil, options.cornerTrim == nil, options.region == nil, !options.adaptiveOrientation,
              options.minWidth == 0, options.minHeight == 0, !options.widthFromSource, !options.heightFromSource,
              options.width > 0 || options.height > 0 else { return nil }
        // force with a side of 0 keeps that side of the source: it needs the full size.
        if options.resizingType == .force, options.width == 0 || options.height == 0 { return nil }
        let large = 1 << 20
        var zoom = max(options.zoomX, options.zoomY)
        if options.thumborCrop {
            // thumbor chooses its window on the whole source: decoded with at least
            // ``thumborWindowDetail`` pixels across the window's shorter side, Alcedo's window
            // (chosen on the decoded image) is thumbor's within a small part of it, even for a
            // size of a pixel or two.
            let shorter = min(options.width > 0 ? options.width : large, options.height > 0 ? options.height : large)
            zoom *= max(1, Double(Self.thumborWindowDetail) / Double(shorter))
        }
        var w = options.width > 0 ? Self.scaled(options.width, options.dpr * zoom) : large
        var h = options.height > 0 ? Self.scaled(options.height, options.dpr * zoom) : large
        if options.rotate == 90 || options.rotate == 270 { swap(&w, &h) }
        let covers = options.resizingType == .fit || options.width == 0 || options.height == 0
        if !options.autoRotate {
            // The stored orientation may swap the sides: cover the larger one both ways. A fit
            // in both sides needs no more than a fit in the square of the larger side (its scale
            // is at least the scale of either orientation's fit); anything else fills the square.
            let side = max(w == large ? 0 : w, h == large ? 0 : h)
            let fitsBoth = options.resizingType == .fit && options.width > 0 && options.height > 0
            return (PixelSize(width: side, height: side), fitsBoth ? .aspectFit : .aspectFill)
        }
        return (PixelSize(width: w, height: h), covers ? .aspectFit : .aspectFill)
    }

    /// The size ``process(_:)`` gives an image of `size`, from the same geometry: the resize
    /// (no enlargement without `enlarge`) and the crops, then `extend`, `extend_aspect_ratio`
    /// and padding, each side at most ``maximumResultSide`` (a larger result is refused before
    /// it is made). A trim is not known before the pixels: the untrimmed size is an upper bound.
    /// Without auto-rotation the stored orientation may swap the sides: the larger result of the two.
    public func outputSize(for size: PixelSize) -> PixelSize {
        var oriented = size
        if options.rotate == 90 || options.rotate == 270 { oriented = PixelSize(width: size.height, height: size.width) }
        var result = resultSize(for: oriented)
        if !options.autoRotate, size.width != size.height {
            let swapped = resultSize(for: PixelSize(width: oriented.height, height: oriented.width))
            if swapped.width * swapped.height > result.width * result.height { result = swapped }
        }
        return PixelSize(width: min(result.width, maximumResultSide), height: min(result.height, maximumResultSide))
    }

    /// The copies ``process(_:)`` makes before it resizes: the stored orientation undone
    /// (without auto-rotation), the trim, the rotation, the flip and the crop each make one from
    /// the previous, and two of them are alive at once (the step's input and its result), all
    /// at most the decoded size. Those after the resize are the result's size, counted with it.
    ///
    /// And, when a crop to the result follows the resize (`fill`), the resampler's rows for the
    /// crop: only the crop's pixels are made, never the whole scaled image, which an extreme
    /// aspect ratio makes far larger than either (a 50000 x 1 source filled to 100 x 100 scales
    /// to 5,000,000 x 100). Smart gravity adds the pixels its analysis reads (at most 1,792 a side).
    public func intermediateBytes(for size: PixelSize) -> Int {
        let rotates = options.rotate == 90 || options.rotate == 180 || options.rotate == 270
        let crops = options.crop.map { $0.width > 0 || $0.height > 0 } ?? false || options.region != nil || options.thumborCrop
        let steps = [!options.autoRotate, options.trim != nil || options.cornerTrim != nil, rotates, options.flipHorizontal || options.flipVertical, crops]
            .filter { $0 }.count
        let (pixels, overflow) = size.width.multipliedReportingOverflow(by: size.height)
        guard !overflow else { return Int.max }
        let (bytes, tooMany) = pixels.multipliedReportingOverflow(by: 4 * min(steps, 2))
        guard !tooMany else { return Int.max }
        var oriented = size
        if options.rotate == 90 || options.rotate == 270 { oriented = PixelSize(width: size.height, height: size.width) }
        var scaled = scaledBytes(for: oriented)
        if !options.autoRotate, size.width != size.height {
            scaled = max(scaled, scaledBytes(for: PixelSize(width: oriented.height, height: oriented.width)))
        }
        let (total, overflows) = bytes.addingReportingOverflow(scaled)
        return overflows ? Int.max : total
    }

    /// The bytes the resize needs for an image of `unclipped` (turned by `rotate`) when a crop
    /// to a smaller result follows it, besides the result: the resampler's rows for the crop
    /// (and the analysis' pixels for smart gravity); 0 when the resize's output is the result.
    private func scaledBytes(for unclipped: PixelSize) -> Int {
        let (plan, source) = geometryAndSource(forTurned: unclipped)
        let scaled = PixelSize(width: max(1, plan.scaledWidth), height: max(1, plan.scaledHeight))
        guard let crop = Self.cropSize(plan.resultCropWidth, plan.resultCropHeight, of: scaled) else { return 0 }
        let resized = PixelSize(width: ImgproxyGeometry.minNonZero(plan.cropWidth, source.width),
                                height: ImgproxyGeometry.minNonZero(plan.cropHeight, source.height))
        let bytes = Resampler.workingMemory(from: resized, to: scaled, window: crop)
        guard case .compass(.smart, _, _) = options.gravity else { return bytes }
        // The analysis reads at most 7 lines of each of its at most 256 blocks a side.
        let side = 7 * SmartCrop.analysisSide
        let samples = PixelSize(width: min(scaled.width, side), height: min(scaled.height, side))
        let (sum, overflow) = bytes.addingReportingOverflow(samples.width * samples.height * 4)
        let (total, overflows) = sum.addingReportingOverflow(Resampler.workingMemory(from: resized, to: scaled, window: samples))
        return overflow || overflows ? Int.max : total
    }

    /// The geometry of an image of `unclipped` (already turned by `rotate`) after the region crop.
    private func geometry(forTurned unclipped: PixelSize) -> ImgproxyGeometry {
        geometryAndSource(forTurned: unclipped).plan
    }

    /// ``geometry(forTurned:)`` and the size it is computed for (after the region crop).
    private func geometryAndSource(forTurned unclipped: PixelSize) -> (plan: ImgproxyGeometry, source: PixelSize) {
        var source = unclipped
        if let region = options.region {
            let width = max(0, min(region.right, source.width)) - max(0, min(region.left, source.width))
            let height = max(0, min(region.bottom, source.height)) - max(0, min(region.top, source.height))
            if width > 0, height > 0 { source = PixelSize(width: width, height: height) }
        }
        var request = requested(within: unclipped, cropped: source)
        if options.thumborCrop {
            // The sizes do not depend on where the window is: the alignment's point stands for any.
            let thumbor = thumborCropped(request, source: source, focus: thumborFocus(in: source, region: nil))
            request = thumbor.options
            if let crop = thumbor.crop { source = PixelSize(width: crop.right - crop.left, height: crop.bottom - crop.top) }
        }
        return (ImgproxyGeometry(source: source, options: request, maxResultDimension: effectiveResultDimension), source)
    }

    /// The decoded pixels across the shorter side of the window ``ProcessingOptions/thumborCrop``
    /// cuts that a scaled decode keeps at least (1/64 of it is as far as it may stray from thumbor's).
    static let thumborWindowDetail = 64

    /// ``ProcessingOptions/thumborCrop`` for an image of `source` (after the trim and the region
    /// crop) and the `requested` options (``requested(within:cropped:)``): thumbor's window
    /// around `focus`, and the options that resize it to exactly thumbor's size.
    private func thumborCropped(_ requested: ProcessingOptions, source: PixelSize,
                                focus: ThumborGeometry.FocalPoint) -> (crop: ThumborCrop?, options: ProcessingOptions) {
        let geometry = ThumborGeometry(source: source, width: requested.width, height: requested.height, points: [focus],
                                       crops: requested.resizingType != .force)
        // A window without a pixel (a side of the size rounded to 0) is left whole.
        let crop = geometry.crop.flatMap { $0.right > $0.left && $0.bottom > $0.top ? $0 : nil }
        let cropped = crop.map { PixelSize(width: $0.right - $0.left, height: $0.bottom - $0.top) } ?? source
        var resized = requested
        resized.resizingType = .force
        resized.enlarge = true
        resized.width = geometry.resize?.width ?? cropped.width
        resized.height = geometry.resize?.height ?? cropped.height
        return (crop, resized)
    }

    /// Whether `whole` scaled to `decoded` keeps its aspect ratio (each side within a pixel).
    static func sameAspectRatio(_ whole: PixelSize, _ decoded: PixelSize) -> Bool {
        guard whole.width > 0, whole.height > 0 else { return false }
        return abs(Double(decoded.height) - Double(decoded.width) * Double(whole.height) / Double(whole.width)) <= 1
            || abs(Double(decoded.width) - Double(decoded.height) * Double(whole.width) / Double(whole.height)) <= 1
    }

    /// A `crop` of an image of `whole` pixels taken to the same image decoded at `decoded`
    /// (sides rounded, at least a pixel, inside the image).
    static func scaled(_ crop: ThumborCrop, from whole: PixelSize, to decoded: PixelSize) -> ThumborCrop {
        func side(_ low: Int, _ high: Int, _ from: Int, _ to: Int) -> (Int, Int) {
            let scale = Double(to) / Double(from)
            let start = min(to - 1, Int((Double(low) * scale).rounded()))
            return (start, min(to, max(start + 1, Int((Double(high) * scale).rounded()))))
        }
        let (left, right) = side(crop.left, crop.right, whole.width, decoded.width)
        let (top, bottom) = side(crop.top, crop.bottom, whole.height, decoded.height)
        return ThumborCrop(left: left, top: top, right: right, bottom: bottom)
    }

    /// thumbor's focal point in an image of `size`: ``ProcessingOptions/focusPixel`` moved by
    /// the clamped `region` it lies in (thumbor drops a point outside the manual crop), else the
    /// gravity's edge or middle (`int(side * percentage)`).
    private func thumborFocus(in size: PixelSize, region: ProcessingOptions.Region?) -> ThumborGeometry.FocalPoint {
        if let focus = options.focusPixel {
            guard let region else { return ThumborGeometry.FocalPoint(x: focus.x, y: focus.y) }
            let left = Double(region.left), top = Double(region.top), right = Double(region.right), bottom = Double(region.bottom)
            if (left...right).contains(focus.x), (top...bottom).contains(focus.y) {
                return ThumborGeometry.FocalPoint(x: focus.x - left, y: focus.y - top)
            }
        }
        var x = 0.5, y = 0.5
        switch options.gravity {
        case .compass(let compass, _, _):
            switch compass {
            case .west, .northWest, .southWest: x = 0
            case .east, .northEast, .southEast: x = 1
            default: break
            }
            switch compass {
            case .north, .northWest, .northEast: y = 0
            case .south, .southWest, .southEast: y = 1
            default: break
            }
        case .focusPoint(let fx, let fy):
            (x, y) = (fx, fy)
        }
        return ThumborGeometry.alignmentPoint(source: size, x: x, y: y)
    }

    /// The options with the requested size lowered to `loaded` when
    /// ``ProcessingOptions/sizeWithinSource`` asks for it (a side of 0 stays 0), as thumbor's
    /// `no_upscale()` lowers its request's.
    /// A side ``ProcessingOptions/widthFromSource`` or ``ProcessingOptions/heightFromSource``
    /// names is `cropped`'s (the image after the trim and the region crop), as thumbor's `orig`.
    private func requested(within loaded: PixelSize, cropped: PixelSize) -> ProcessingOptions {
        var clamped = options
        if options.widthFromSource { clamped.width = cropped.width }
        if options.heightFromSource { clamped.height = cropped.height }
        guard options.sizeWithinSource else { return clamped }
        if clamped.width > 0 { clamped.width = min(clamped.width, loaded.width) }
        if clamped.height > 0 { clamped.height = min(clamped.height, loaded.height) }
        return clamped
    }

    /// ``outputSize(for:)`` of an image already turned by `rotate`.
    private func resultSize(for unclipped: PixelSize) -> PixelSize {
        let plan = geometry(forTurned: unclipped)
        // The crop before the resize, the resize to the scaled size, the crop to the result.
        let scaledWidth = max(1, plan.scaledWidth), scaledHeight = max(1, plan.scaledHeight)
        var size = PixelSize(width: ImgproxyGeometry.minNonZero(plan.resultCropWidth, scaledWidth),
                             height: ImgproxyGeometry.minNonZero(plan.resultCropHeight, scaledHeight))
        if options.extend { size = Self.extended(size, to: PixelSize(width: plan.targetWidth, height: plan.targetHeight)) }
        if options.extendAspectRatio, plan.extendAspectRatioWidth > 0, plan.extendAspectRatioHeight > 0 {
            size = Self.extended(size, to: PixelSize(width: plan.extendAspectRatioWidth, height: plan.extendAspectRatioHeight))
        }
        if options.steps.contains(where: { if case .fill(_, _, true, _) = $0 { true } else { false } }) {
            size = Self.extended(size, to: PixelSize(width: plan.targetWidth, height: plan.targetHeight))
        }
        // thumbor's upscale() may enlarge the result to the requested size: reserved as such.
        if options.steps.contains(.upscale) {
            size = Self.upscaledSize(size, toFit: PixelSize(width: plan.targetWidth, height: plan.targetHeight))
        }
        if options.padding.isEnabled {
            let padding = options.padding
            size = PixelSize(width: size.width + ImgproxyGeometry.scaleToEven(padding.left, plan.dprScale)
                                 + ImgproxyGeometry.scaleToEven(padding.right, plan.dprScale),
                             height: size.height + ImgproxyGeometry.scaleToEven(padding.top, plan.dprScale)
                                 + ImgproxyGeometry.scaleToEven(padding.bottom, plan.dprScale))
        }
        return size
    }

    public func process(_ input: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        // Each step is timed apart when the request is traced (`process:resize`…).
        var clock = ProcessingStepClock()
        var image = input
        if let page = options.page, image.frames.count > 1 {
            image = image.frame(at: min(page, image.frames.count - 1))
        }
        // max_animation_frames keeps the first N frames, as imgproxy loads only those (1: a still image).
        if let limit = options.security.maxAnimationFrames, image.frames.count > limit {
            image = limit <= 1 ? image.frame(at: 0)
                : AlcedoImage(width: image.width, height: image.height, frames: Array(image.frames.prefix(limit)),
                              loopCount: image.loopCount, sourceFormat: image.sourceFormat, orientation: image.orientation,
                              colorMetadata: image.colorMetadata)
        }
        // max_animation_frame_resolution: an animation (after max_animation_frames) whose frames
        // are larger is refused, as imgproxy's check; a still image is not held to it.
        if let megapixels = options.security.maxAnimationFrameResolution, megapixels > 0, image.frames.count > 1 {
            let limit = max(1, Int(megapixels * 1_000_000))
            if image.width * image.height > limit {
                throw .processorError(reason: .decodingFailed(.tooManyPixels(format: image.sourceFormat, width: image.width,
                                                                             height: image.height, limit: limit)))
            }
        }
        // The whole source's size when the decoder scaled it (thumbor's geometry is the source's).
        var scaledFrom = image.scaledFrom
        if !options.autoRotate, image.orientation != .up {
            if image.orientation.swapsDimensions, let whole = scaledFrom { scaledFrom = PixelSize(width: whole.height, height: whole.width) }
            image = image.oriented(Self.inverse(image.orientation))
            clock.lap("orient")
        }
        // The size ``ProcessingOptions/sizeWithinSource`` holds the request to: before trims and crops.
        let loaded = image.pixelSize
        if let trim = options.trim, !image.isAnimated {
            image = try TrimImageProcessor(threshold: trim.threshold, color: trim.color, equalHorizontal: trim.equalHorizontal,
                                           equalVertical: trim.equalVertical).process(image)
            clock.lap("trim")
        }
        // thumbor's trim: the manual crop stays in the untrimmed image's pixels. An animation's
        // frames are all cut to the first frame's box, as thumbor cuts a GIF's.
        var trimmed = (x: 0, y: 0)
        if let trim = options.cornerTrim {
            let processor = CornerTrimImageProcessor(corner: trim.corner, tolerance: trim.tolerance)
            if let rect = processor.contentRect(of: image) {
                trimmed = (rect.x, rect.y)
                image = try processor.process(image)
            }
            clock.lap("trim")
        }
        var gravity = options.gravity
        // The region as it was cut (clamped to the image), `nil` when it is empty or there is none.
        var cutRegion: ProcessingOptions.Region?
        if let unshifted = options.region {
            let region = ProcessingOptions.Region(left: unshifted.left - trimmed.x, top: unshifted.top - trimmed.y,
                                                  right: unshifted.right - trimmed.x, bottom: unshifted.bottom - trimmed.y)
            let left = max(0, min(region.left, image.width)), right = max(0, min(region.right, image.width))
            let top = max(0, min(region.top, image.height)), bottom = max(0, min(region.bottom, image.height))
            if left < right, top < bottom {
                cutRegion = ProcessingOptions.Region(left: left, top: top, right: right, bottom: bottom)
                if right - left < image.width || bottom - top < image.height {
                    image = image.cropped(x: left, y: top, size: PixelSize(width: right - left, height: bottom - top))
                }
            }
        }
        var request = requested(within: loaded, cropped: image.pixelSize)
        if options.thumborCrop {
            // thumbor's window, chosen before the flips; the resize to its size follows as any other.
            var thumbor = thumborCropped(request, source: image.pixelSize, focus: thumborFocus(in: image.pixelSize, region: cutRegion))
            if let whole = scaledFrom, options.cornerTrim == nil, options.trim == nil, options.region == nil,
               Self.sameAspectRatio(whole, image.pixelSize) {
                // Decoded smaller: the window and the size thumbor computes on the whole source,
                // the window taken to the decoded pixels.
                let full = requested(within: whole, cropped: whole)
                thumbor = thumborCropped(full, source: whole, focus: thumborFocus(in: whole, region: nil))
                thumbor.crop = thumbor.crop.map { Self.scaled($0, from: whole, to: image.pixelSize) }
            }
            if let crop = thumbor.crop {
                image = image.cropped(x: crop.left, y: crop.top, size: PixelSize(width: crop.right - crop.left, height: crop.bottom - crop.top))
            }
            request = thumbor.options
            clock.lap("crop")
        }
        // thumbor's fit-in canvas (`fill`, `upscale()`): the requested size, each side at least the resized one's.
        var thumborCanvas: PixelSize?
        if options.thumborFitIn, options.resizingType == .fit || options.resizingType == .cover, image.width > 0, image.height > 0 {
            // thumbor's fit-in size, with its rounding; decoded smaller, computed on the whole source.
            var source = image.pixelSize, full = request
            if let whole = scaledFrom, options.cornerTrim == nil, options.trim == nil, options.region == nil,
               Self.sameAspectRatio(whole, image.pixelSize) {
                source = whole
                full = requested(within: whole, cropped: whole)
            }
            let target = ThumborGeometry.target(source: source, width: full.width, height: full.height)
            let cover = options.resizingType == .cover
            if target.width > 0, target.height > 0,
               let size = ThumborGeometry.fitIn(source: source, targetWidth: target.width, targetHeight: target.height,
                                                adaptive: options.adaptiveOrientation, full: cover)?.size {
                var requestedWidth = full.width, requestedHeight = full.height
                if options.adaptiveOrientation, (source.width < source.height && target.width > target.height)
                    || (source.width > source.height && target.width < target.height) {
                    swap(&requestedWidth, &requestedHeight)
                }
                thumborCanvas = PixelSize(width: max(requestedWidth, size.width), height: max(requestedHeight, size.height))
                request.resizingType = .force
                request.enlarge = true
                request.adaptiveOrientation = false
                request.width = size.width
                request.height = size.height
            }
        }
        if let focus = options.focusPixel, image.width > 0, image.height > 0 {
            let offsetX = options.region.map { Double(max(0, $0.left)) } ?? 0, offsetY = options.region.map { Double(max(0, $0.top)) } ?? 0
            let x = max(0, min(1, (focus.x - offsetX) / Double(image.width))), y = max(0, min(1, (focus.y - offsetY) / Double(image.height)))
            gravity = .focusPoint(x: options.flipHorizontal ? 1 - x : x, y: options.flipVertical ? 1 - y : y)
        }
        switch options.rotate {
        case 90: image = image.oriented(.right)
        case 180: image = image.oriented(.down)
        case 270: image = image.oriented(.left)
        default: break
        }
        if options.flipHorizontal || options.flipVertical {
            image = try FlipImageProcessor(horizontal: options.flipHorizontal, vertical: options.flipVertical).process(image)
        }
        if options.rotate != 0 || options.flipHorizontal || options.flipVertical { clock.lap("rotate") }
        var plan = ImgproxyGeometry(source: image.pixelSize, options: request, maxResultDimension: effectiveResultDimension)
        if let thumborCanvas { (plan.targetWidth, plan.targetHeight) = (thumborCanvas.width, thumborCanvas.height) }

        // The crop before the resize (its offsets are source pixels: no dpr).
        image = Self.crop(image, width: plan.cropWidth, height: plan.cropHeight, gravity: options.crop?.gravity ?? gravity,
                          dpr: 1)
        let scaled = PixelSize(width: max(1, plan.scaledWidth), height: max(1, plan.scaledHeight))
        try checkResult(PixelSize(width: plan.outputWidth, height: plan.outputHeight))
        image = Self.resize(image, to: scaled, croppingTo: plan.resultCropWidth, plan.resultCropHeight, gravity: gravity,
                            dpr: plan.dprScale)
        clock.lap("resize")

        if options.blur > 0 {
            image = try BlurImageProcessor(blurRadius: options.blur).process(image)
            clock.lap("blur")
        }
        if options.sharpen > 0 {
            image = try image.sharpened(sigma: options.sharpen)
            clock.lap("sharpen")
        }
        if options.pixelate > 1 {
            image = try PixelateImageProcessor(size: options.pixelate).process(image)
            clock.lap("pixelate")
        }

        let fill = options.background ?? .clear
        if options.extend {
            image = try extend(image, to: PixelSize(width: plan.targetWidth, height: plan.targetHeight),
                               gravity: options.extendGravity, dpr: plan.dprScale, fill: fill)
        }
        if options.extendAspectRatio, plan.extendAspectRatioWidth > 0, plan.extendAspectRatioHeight > 0 {
            image = try extend(image, to: PixelSize(width: plan.extendAspectRatioWidth, height: plan.extendAspectRatioHeight),
                               gravity: options.extendAspectRatioGravity, dpr: plan.dprScale, fill: fill)
        }
        if options.padding.isEnabled {
            let top = ImgproxyGeometry.scaleToEven(options.padding.top, plan.dprScale)
            let right = ImgproxyGeometry.scaleToEven(options.padding.right, plan.dprScale)
            let bottom = ImgproxyGeometry.scaleToEven(options.padding.bottom, plan.dprScale)
            let left = ImgproxyGeometry.scaleToEven(options.padding.left, plan.dprScale)
            let canvas = PixelSize(width: image.width + left + right, height: image.height + top + bottom)
            try checkResult(canvas)
            image = image.embedded(in: canvas, at: (left, top), background: fill)
        }
        if options.extend || options.extendAspectRatio || options.padding.isEnabled { clock.lap("extend") }
        if let background = options.background {
            image = image.flattened(over: background)
            clock.lap("background")
        }
        if let mark = options.watermark, let watermark {
            image = watermark.apply(mark, to: image, dpr: plan.dprScale)
            clock.lap("watermark")
        }
        if options.roundCorner > 0 {
            // Kingfisher's RoundCornerImageProcessor: the colour is the whole background.
            let rounded = try RoundCornerImageProcessor(radius: .point(options.roundCorner)).process(image)
            image = options.roundCornerColor.map { rounded.flattened(over: $0) } ?? rounded
            clock.lap("round_corner")
        }
        if let border = options.border {
            image = try BorderImageProcessor(border: border.width, color: border.color).process(image)
            clock.lap("border")
        }
        if let tint = options.tint {
            image = try TintImageProcessor(tint: tint).process(image)
            clock.lap("tint")
        }
        for step in options.steps {
            image = try run(step, on: image, plan: plan)
            clock.lap(step.timingName)
        }
        return image
    }

    /// One of ``ProcessingOptions/steps`` on `image`.
    private func run(_ step: ProcessingOptions.Step, on image: AlcedoImage, plan: ImgproxyGeometry) throws(AlcedoError) -> AlcedoImage {
        switch step {
        case .levels(let adjustment):
            return try LevelsImageProcessor(adjustment).process(image)
        case .effect(let effect):
            return try effect.processor.process(image)
        case .blur(let sigma):
            return try BlurImageProcessor(blurRadius: sigma).process(image)
        case .waveletSharpen(let sharpen):
            return try WaveletSharpenImageProcessor(amount: sharpen.amount, radius: sharpen.radius,
                                                    luminanceOnly: sharpen.luminanceOnly).process(image)
        case .fill(let fill, let color, let extend, let merge):
            var result = image
            if extend {
                // thumbor centres rounding down (imgproxy's centre rounds up).
                result = try self.extend(image, to: PixelSize(width: plan.targetWidth, height: plan.targetHeight), gravity: .center,
                                         dpr: plan.dprScale, fill: color ?? .clear, kind: fill, centredRoundingDown: true)
            }
            // The average colour is the image's as it came to this step, before the canvas.
            guard merge, let color = color ?? (fill == .average ? image.meanColor : nil) else { return result }
            return result.composited(over: color)
        case .background(let color):
            return image.composited(over: color)
        case .roundCorner(let radius, let verticalRadius, let color):
            return Self.roundCorners(image, radius: radius, verticalRadius: verticalRadius ?? radius, color: color)
        case .urlWatermark(let mark):
            guard let overlay = urlImages[mark.sourceURL] else { return image }
            return URLWatermarkPlacement.apply(mark, image: overlay, over: image)
        case .frame(let url):
            guard let ninePatch = urlImages[url] else { return image }
            let framed = NinePatchFrame.apply(ninePatch, to: image)
            try checkResult(framed.pixelSize)
            return framed
        case .rotate(let degrees):
            switch degrees {
            case 90: return image.oriented(.right)
            case 180: return image.oriented(.down)
            case 270: return image.oriented(.left)
            default: return image
            }
        case .proportion(let factor):
            // thumbor scales each side and rounds down; a side under a pixel leaves the image.
            let width = Double(image.width) * factor, height = Double(image.height) * factor
            guard factor > 0, factor <= 1, width >= 1, height >= 1 else { return image }
            return image.resized(to: PixelSize(width: Int(width), height: Int(height)))
        case .upscale:
            let enlarged = Self.upscaledSize(image.pixelSize, toFit: PixelSize(width: plan.targetWidth, height: plan.targetHeight))
            guard enlarged != image.pixelSize else { return image }
            try checkResult(enlarged)
            return image.resized(to: enlarged)
        }
    }

    /// thumbor's `upscale()`: the size `image` is enlarged to, to fit `target` when it is smaller
    /// on both sides (the side that reaches the target first is the target's, the other rounded down).
    static func upscaledSize(_ image: PixelSize, toFit target: PixelSize) -> PixelSize {
        guard image.width > 0, image.height > 0, image.width < target.width, image.height < target.height else { return image }
        if Double(image.width) / Double(target.width) >= Double(image.height) / Double(target.height) {
            return PixelSize(width: target.width, height: max(1, image.height * target.width / image.width))
        }
        return PixelSize(width: max(1, image.width * target.height / image.height), height: target.height)
    }

    /// Corners rounded as quarter ellipses of `radius` pixels across and `verticalRadius` down
    /// (each at most half the side, as thumbor's `round_corner`), the cut corners painted with
    /// `color`, or made transparent when it is `nil`. Painted, every pixel keeps its alpha, so
    /// the rest of an image with transparency stays as it was; the edge is anti-aliased.
    static func roundCorners(_ image: AlcedoImage, radius: Double, verticalRadius: Double, color: RGBA?) -> AlcedoImage {
        let coverage = Self.roundedCoverage(width: image.width, height: image.height,
                                            radius: min(radius, Double(image.width / 2)),
                                            verticalRadius: min(verticalRadius, Double(image.height / 2)))
        guard let coverage else { return image }
        if let color { return image.painted(color, outside: coverage) }
        return image.masked(by: coverage)
    }

    /// How much of each pixel (0...255, a byte a pixel) lies inside a `width` x `height`
    /// rectangle whose corners are quarter ellipses of radii `radius` (across) and
    /// `verticalRadius` (down), from 4 x 4 samples a pixel; `nil` when no corner is cut.
    static func roundedCoverage(width: Int, height: Int, radius a: Double, verticalRadius b: Double) -> [UInt8]? {
        guard a >= 1, b >= 1, width > 0, height > 0 else { return nil }
        var coverage = [UInt8](repeating: 255, count: width * height)
        let cornerWidth = min(width, Int(a.rounded(.up))), cornerHeight = min(height, Int(b.rounded(.up)))
        for y in 0..<cornerHeight {
            for x in 0..<cornerWidth {
                // The top-left corner's pixel; the other three corners mirror it.
                var inside = 0
                for j in 0..<4 {
                    let dy = (Double(y) + (Double(j) + 0.5) / 4 - b) / b
                    for i in 0..<4 {
                        let dx = (Double(x) + (Double(i) + 0.5) / 4 - a) / a
                        if dx >= 0 || dy >= 0 || dx * dx + dy * dy <= 1 { inside += 1 }
                    }
                }
                let value = UInt8(inside * 255 / 16)
                for (cx, cy) in [(x, y), (width - 1 - x, y), (x, height - 1 - y), (width - 1 - x, height - 1 - y)] {
                    coverage[cy * width + cx] = min(coverage[cy * width + cx], value)
                }
            }
        }
        return coverage
    }

    /// imgproxy's `extend`: a canvas of `size` (a side of 0 keeps the image's), the image placed
    /// by `gravity` (or centred, an odd spare pixel after the image, with `centredRoundingDown`),
    /// the canvas filled as `kind` says; nothing when the image already covers it.
    private func extend(_ image: AlcedoImage, to size: PixelSize, gravity: ProcessingOptions.Gravity, dpr: Double,
                        fill: RGBA, kind: ProcessingOptions.ExtendFill = .background,
                        centredRoundingDown: Bool = false) throws(AlcedoError) -> AlcedoImage {
        let canvas = Self.extended(image.pixelSize, to: size)
        guard canvas != image.pixelSize else { return image }
        try checkResult(canvas)
        let origin = centredRoundingDown ? ((canvas.width - image.width) / 2, (canvas.height - image.height) / 2)
            : ImgproxyGeometry.position(outer: canvas, inner: image.pixelSize, gravity: gravity, dpr: dpr)
        switch kind {
        case .background:
            return image.embedded(in: canvas, at: origin, background: fill)
        case .average:
            return image.embedded(in: canvas, at: origin, background: image.meanColor)
        case .blur:
            // thumbor blurs with a kernel of radius 50 and σ 50, cut at one σ: the spread of
            // that kernel is a Gaussian's of σ ≈ 27. The blur is stretched to the canvas.
            let blurred = try BlurImageProcessor(blurRadius: 27).process(image.frame(at: 0)).resized(to: canvas)
            return image.embedded(in: canvas, at: origin, background: fill, backdrop: blurred.frames[0].pixels)
        }
    }

    /// The canvas `extend` makes for an image of `image` and a requested `size` (a side of 0
    /// keeps the image's): `image` itself when it already covers `size`.
    static func extended(_ image: PixelSize, to size: PixelSize) -> PixelSize {
        guard size.width > image.width || size.height > image.height else { return image }
        return PixelSize(width: size.width > 0 ? size.width : image.width, height: size.height > 0 ? size.height : image.height)
    }

    /// imgproxy's crop: `width` x `height` (0 or more than the image: the image's side) placed
    /// by `gravity`; smart gravity looks at the pixels (``SmartCrop``, first frame).
    static func crop(_ image: AlcedoImage, width: Int, height: Int, gravity: ProcessingOptions.Gravity, dpr: Double) -> AlcedoImage {
        guard let size = cropSize(width, height, of: image.pixelSize) else { return image }
        let origin: (x: Int, y: Int)
        if case .compass(.smart, _, _) = gravity {
            origin = SmartCrop.origin(of: size, in: image)
        } else {
            origin = ImgproxyGeometry.position(outer: image.pixelSize, inner: size, gravity: gravity, dpr: dpr)
        }
        return image.cropped(x: origin.x, y: origin.y, size: size)
    }

    /// The image resized to `scaled`, then imgproxy's crop to `width` x `height` by `gravity`
    /// (``crop(_:width:height:gravity:dpr:)``), the same pixels, but only the crop's are made
    /// (``AlcedoImage/resized(to:cropping:)``): an extreme `fill` never holds its scaled image,
    /// as libvips, whose resize is demand-driven, computes only the crop's pixels. Smart gravity
    /// chooses the place from the pixels its analysis reads, resampled alone (at most 1,792
    /// a side), so the choice is the one made on the whole scaled image.
    static func resize(_ image: AlcedoImage, to scaled: PixelSize, croppingTo width: Int, _ height: Int,
                       gravity: ProcessingOptions.Gravity, dpr: Double) -> AlcedoImage {
        guard scaled != image.pixelSize else { return crop(image, width: width, height: height, gravity: gravity, dpr: dpr) }
        guard let size = cropSize(width, height, of: scaled) else { return image.resized(to: scaled) }
        let origin: (x: Int, y: Int)
        if case .compass(.smart, _, _) = gravity {
            let first = image.frames[0].pixels, source = image.pixelSize
            origin = SmartCrop.origin(of: size, inImageOf: scaled) { rows, columns in
                first.withUnsafeBufferPointer {
                    Resampler.resize($0, width: source.width, height: source.height, to: scaled, columns: columns, rows: rows)
                }
            }
        } else {
            origin = ImgproxyGeometry.position(outer: scaled, inner: size, gravity: gravity, dpr: dpr)
        }
        return image.resized(to: scaled, cropping: (origin.x, origin.y, size))
    }

    /// The size of imgproxy's crop to `width` x `height` of an image of `image` (0 or more than
    /// the image: the image's side); `nil` when it keeps the whole image.
    private static func cropSize(_ width: Int, _ height: Int, of image: PixelSize) -> PixelSize? {
        guard width != 0 || height != 0 else { return nil }
        let size = PixelSize(width: ImgproxyGeometry.minNonZero(width, image.width), height: ImgproxyGeometry.minNonZero(height, image.height))
        return size.width < image.width || size.height < image.height ? size : nil
    }

    private func checkResult(_ size: PixelSize) throws(AlcedoError) {
        guard size.width <= maximumResultSide, size.height <= maximumResultSide else {
            throw .processorError(reason: .outputTooLarge(processor: "result (max side \(maximumResultSide) px)", size: size,
                                                          limit: maximumResultSide))
        }
    }

    static func scaled(_ side: Int, _ dpr: Double) -> Int {
        max(1, Int((Double(side) * dpr).rounded()))
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
