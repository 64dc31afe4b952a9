import Alcedo

/// thumbor 7.8's crop and resize (its transformer's `_calculate_target_dimensions`,
/// `get_center_of_mass`, `auto_crop` and `resize`, thumbor/transformer.py), with its rounding:
/// the requested size is completed (a side of 0 from the other and the image's aspect ratio),
/// the image is cut to that size's aspect ratio around the focal point, and what is left is
/// resized to exactly that size. The crop is chosen on the image before the resize, so the
/// window is thumbor's for every size, however small or extreme its aspect ratio.
struct ThumborGeometry: Equatable {
    /// The completed target size (thumbor's `target_width`, `target_height`): whole numbers.
    var targetWidth: Double, targetHeight: Double
    /// The crop to the target's aspect ratio, in the image's pixels; `nil` when none.
    var crop: ThumborCrop?
    /// The size the cropped image is resized to; `nil` when it already has it.
    var resize: PixelSize?

    /// A focal point (thumbor's `FocalPoint`: whole pixels and a weight).
    struct FocalPoint: Equatable {
        var x: Double, y: Double, weight: Double = 1
    }

    /// The geometry for an image of `source` pixels, a requested `width` and `height` (0: not
    /// given; both 0: the image's size), the focal `points` (none: the image's centre) and
    /// whether the image is cut to the aspect ratio (thumbor's `stretch()` turns that off).
    init(source: PixelSize, width: Int, height: Int, points: [FocalPoint], crops: Bool = true) {
        (targetWidth, targetHeight) = Self.target(source: source, width: width, height: height)
        let focal = Self.centerOfMass(points.isEmpty ? [FocalPoint(x: Double(source.width / 2), y: Double(source.height / 2))] : points)
        crop = crops ? Self.autoCrop(source: source, targetWidth: targetWidth, targetHeight: targetHeight, focal: focal) : nil
        let cropped = crop.map { PixelSize(width: $0.right - $0.left, height: $0.bottom - $0.top) } ?? source
        // `resize(target or 1)`: a side of 0 is made 1; nothing when the size is already the target.
        let size = PixelSize(width: max(1, Int(targetWidth)), height: max(1, Int(targetHeight)))
        resize = Double(cropped.width) == targetWidth && Double(cropped.height) == targetHeight ? nil : size
    }

    /// `_calculate_target_dimensions`: a side of 0 is the other times the image's aspect ratio,
    /// rounded half to even (`round(float(side) * w / h, 0)`); no side at all is the image's size.
    static func target(source: PixelSize, width: Int, height: Int) -> (width: Double, height: Double) {
        let sourceWidth = Double(source.width), sourceHeight = Double(source.height)
        guard width != 0 || height != 0 else { return (sourceWidth, sourceHeight) }
        let targetWidth = width != 0 ? Double(width) : (Double(height) * sourceWidth / sourceHeight).rounded(.toNearestOrEven)
        let targetHeight = height != 0 ? Double(height) : (Double(width) * sourceHeight / sourceWidth).rounded(.toNearestOrEven)
        return (targetWidth, targetHeight)
    }

    /// `fit_in_resize`: the size an image of `source` pixels is resized to for the completed
    /// target size (``target(source:width:height:)``), turned to the image's orientation first
    /// when `adaptive`; `full` covers the size, otherwise it fits inside it. `keepsWidth` is
    /// `true` when the width is the target's and the height computed (`/meta` writes the
    /// target's side as a float). `nil` when thumbor does not resize: a fit-in target at least
    /// the image's size, or a side of 0 (thumbor divides by it and fails).
    static func fitIn(source: PixelSize, targetWidth: Double, targetHeight: Double, adaptive: Bool,
                      full: Bool) -> (size: PixelSize, keepsWidth: Bool)? {
        let width = Double(source.width), height = Double(source.height)
        var targetWidth = targetWidth, targetHeight = targetHeight
        if adaptive, (width < height && targetWidth > targetHeight) || (width > height && targetWidth < targetHeight) {
            swap(&targetWidth, &targetHeight)
        }
        let sign: Double = full ? -1 : 1
        if !full, targetWidth >= width, targetHeight >= height { return nil }
        guard targetWidth > 0, targetHeight > 0 else { return nil }
        // `round(x + 1e-5)`: halves up, as Python 2 rounded.
        if width / targetWidth * sign >= height / targetHeight * sign {
            return (PixelSize(width: Int(targetWidth), height: Int((height * targetWidth / width + 1e-5).rounded(.toNearestOrEven))), true)
        }
        return (PixelSize(width: Int((width * targetHeight / height + 1e-5).rounded(.toNearestOrEven)), height: Int(targetHeight)), false)
    }

    /// thumbor's focal point of an alignment: `int(side * percentage)`, 0, ½ or 1 of each side.
    static func alignmentPoint(source: PixelSize, x: Double, y: Double) -> FocalPoint {
        FocalPoint(x: (Double(source.width) * x).rounded(.towardZero), y: (Double(source.height) * y).rounded(.towardZero))
    }

    /// A `focal(LxT:RxB)` box's focal point: its centre (`left + width // 2`, `top + height // 2`),
    /// weighted by its area (thumbor's `FocalPoint.from_square`).
    static func focalPoint(of box: ThumborCrop) -> FocalPoint {
        let width = box.right - box.left, height = box.bottom - box.top
        return FocalPoint(x: Double(box.left) + (Double(width) / 2).rounded(.down), y: Double(box.top) + (Double(height) / 2).rounded(.down),
                          weight: Double(width * height))
    }

    /// `get_center_of_mass`: the weighted mean of the points, floor-divided.
    static func centerOfMass(_ points: [FocalPoint]) -> (x: Double, y: Double) {
        var weight = 0.0, x = 0.0, y = 0.0
        for point in points {
            weight += point.weight
            x += point.x * point.weight
            y += point.y * point.weight
        }
        guard weight != 0 else { return (0, 0) }
        return ((x / weight).rounded(.down), (y / weight).rounded(.down))
    }

    /// `auto_crop`: the image cut to the target's aspect ratio around `focal`; `nil` when the
    /// ratios are equal to two decimals (Python's `round(ratio, 2)`). The cut side is
    /// `round(w * th / tw)` high or `ceil(tw * h / th)` wide, placed at `focal` minus its half,
    /// kept inside the image and rounded half to even.
    static func autoCrop(source: PixelSize, targetWidth: Double, targetHeight: Double, focal: (x: Double, y: Double)) -> ThumborCrop? {
        let width = Double(source.width), height = Double(source.height)
        let safeWidth = targetWidth == 0 ? 1 : targetWidth, safeHeight = targetHeight == 0 ? 1 : targetHeight
        guard hundredths(width / height) != hundredths(safeWidth / safeHeight) else { return nil }
        let cropWidth: Double, cropHeight: Double
        if targetWidth / width > targetHeight / height {
            cropWidth = width
            cropHeight = (width * targetHeight / safeWidth).rounded(.toNearestOrEven)
        } else {
            cropWidth = (targetWidth * height / safeHeight).rounded(.up)
            cropHeight = height
        }
        let left = Int(min(max(focal.x - cropWidth / 2, 0), width - cropWidth).rounded(.toNearestOrEven))
        let top = Int(min(max(focal.y - cropHeight / 2, 0), height - cropHeight).rounded(.toNearestOrEven))
        return ThumborCrop(left: left, top: top, right: min(left + Int(cropWidth), source.width),
                           bottom: min(top + Int(cropHeight), source.height))
    }

    /// Python's `round(value, 2)` in hundredths: the double's exact value rounded, ties to even
    /// (1.335 is stored below it and rounds to 1.33, where `(value * 100).rounded()` makes 134).
    static func hundredths(_ value: Double) -> Double {
        let product = value * 100
        // The product's rounding error, exactly: the stored value is product + error.
        let error = (-product).addingProduct(value, 100)
        let floor = product.rounded(.down)
        guard product - floor == 0.5, error != 0 else { return product.rounded(.toNearestOrEven) }
        return error > 0 ? floor + 1 : floor
    }
}
