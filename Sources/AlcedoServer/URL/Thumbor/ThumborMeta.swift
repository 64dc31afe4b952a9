import Alcedo

/// thumbor's `/meta/…` answer: the operations its transformer would run on a source of a given
/// size (manual crop, the crop to the aspect ratio, the resize, the flips), the focal points and
/// the target size, as the JSON thumbor 7.8's `JSONEngine` writes (`json.dumps` spacing, floats
/// where thumbor's arithmetic makes floats), wrapped as `CALLBACK(…);` for JSONP.
///
/// One thumbor quirk is kept: `source.width`/`height` are the size after the operations (thumbor's
/// JSON engine reports its engine's size after running them). One is not: thumbor writes a JSONP
/// callback as Python bytes (`b'cb'(…)`); Alcedo writes `cb(…)`.
struct ThumborMeta {
    private(set) var operations: [String] = []
    /// The engine's size: the image's after the operations so far.
    private(set) var width: Double
    private(set) var height: Double
    private var focalPoints: [String] = []
    /// The size of the last crop or resize as thumbor wrote it (`nil`: none yet, the engine's
    /// size), and whether its arithmetic left each side a float (`300.0` in its JSON).
    private var target: (width: Double, height: Double, floats: (Bool, Bool))?

    /// The transformer's operations for `path` on a source of `source` pixels (oriented), whose
    /// `trim` left `trimmed` (the content's rectangle, `nil` when the trim leaves nothing or the URL has none).
    init(path: ThumborPath, source: PixelSize, trimmed: (x: Int, y: Int, size: PixelSize)? = nil) {
        width = Double(source.width)
        height = Double(source.height)
        let filters = ThumborFilter.list(path.filters)
        var crop = path.crop
        // thumbor crops to the trim's box (even when it is the whole image) and moves the manual crop with it.
        if let trimmed {
            append(crop: ThumborCrop(left: trimmed.x, top: trimmed.y, right: trimmed.x + trimmed.size.width,
                                     bottom: trimmed.y + trimmed.size.height))
            if crop.isSet {
                crop = ThumborCrop(left: crop.left - trimmed.x, top: crop.top - trimmed.y, right: crop.right - trimmed.x,
                                   bottom: crop.bottom - trimmed.y)
            }
        }
        if crop.isSet {
            let sourceWidth = Int(width), sourceHeight = Int(height)
            crop.left = min(max(crop.left, 0), sourceWidth)
            crop.top = min(max(crop.top, 0), sourceHeight)
            crop.right = min(max(crop.right, 0), sourceWidth)
            crop.bottom = min(max(crop.bottom, 0), sourceHeight)
            if crop.left < crop.right, crop.top < crop.bottom {
                append(crop: crop)
            } else {
                crop = ThumborCrop()
            }
        }
        var requestWidth = path.width.map(Double.init) ?? width, requestHeight = path.height.map(Double.init) ?? height
        if filters.contains(where: { $0.name == "no_upscale" }) {
            requestWidth = min(requestWidth, width)
            requestHeight = min(requestHeight, height)
        }
        var (targetWidth, targetHeight) = ThumborGeometry.target(source: PixelSize(width: Int(width), height: Int(height)),
                                                                 width: Int(requestWidth), height: Int(requestHeight))
        // `focal()` boxes are the focal points (their centres, weighted by their areas, moved
        // with the manual crop, those outside it left out); without any, the alignment.
        var weights = 0.0, sumX = 0.0, sumY = 0.0
        for filter in filters where filter.name == "focal" {
            guard let box = filter.string(0).flatMap(ThumborPlan.focalBox) else { continue }
            let boxWidth = box.right - box.left, boxHeight = box.bottom - box.top
            var x = box.left + Self.floorHalf(boxWidth), y = box.top + Self.floorHalf(boxHeight)
            if crop.isSet {
                guard (crop.left...crop.right).contains(x), (crop.top...crop.bottom).contains(y) else { continue }
                x -= crop.left
                y -= crop.top
            }
            let weight = boxWidth * boxHeight
            focalPoints.append("{\"x\": \(x), \"y\": \(y), \"z\": \(weight), \"height\": \(boxHeight), \"width\": \(boxWidth), \"origin\": \"Explicit\"}")
            weights += Double(weight)
            sumX += Double(x * weight)
            sumY += Double(y * weight)
        }
        let focalX: Double, focalY: Double
        if focalPoints.isEmpty || weights == 0 {
            focalPoints = []
            let percentages: [String: Double] = ["left": 0, "center": 0.5, "right": 1, "top": 0, "middle": 0.5, "bottom": 1]
            focalX = Double(Int(width * (percentages[path.horizontalAlign.rawValue] ?? 0.5)))
            focalY = Double(Int(height * (percentages[path.verticalAlign.rawValue] ?? 0.5)))
            focalPoints.append("{\"x\": \(Int(focalX)), \"y\": \(Int(focalY)), \"z\": 1.0, \"height\": 1, \"width\": 1, \"origin\": \"alignment\"}")
        } else {
            // thumbor's centre of mass: floor divisions.
            (focalX, focalY) = ((sumX / weights).rounded(.down), (sumY / weights).rounded(.down))
        }
        if path.fitIn {
            fitIn(path: path, targetWidth: &targetWidth, targetHeight: &targetHeight)
        } else {
            if !filters.contains(where: { $0.name == "stretch" }) {
                if let crop = ThumborGeometry.autoCrop(source: PixelSize(width: Int(width), height: Int(height)), targetWidth: targetWidth,
                                                       targetHeight: targetHeight, focal: (focalX, focalY)) {
                    append(crop: crop)
                }
            }
            if targetWidth != width || targetHeight != height {
                append(resize: max(targetWidth, targetWidth == 0 ? 1 : 0), max(targetHeight, targetHeight == 0 ? 1 : 0),
                       floats: (true, true))
            }
        }
        // thumbor flips after the fit-in resize as after the crop and resize.
        if path.horizontalFlip { operations.append("{\"type\": \"flip_horizontally\"}") }
        if path.verticalFlip { operations.append("{\"type\": \"flip_vertically\"}") }
        for filter in filters { applyAfterTransform(filter, requestWidth: requestWidth, requestHeight: requestHeight) }
    }

    /// What a filter thumbor runs after the transformation does to the engine. The filters act on
    /// the image engine itself, not on the JSON engine that records operations: none is listed,
    /// and only the engine's size (the source's in the JSON, and the target's when no crop or
    /// resize was listed) follows them: `rotate` turns it, `proportion` and `upscale` scale it,
    /// `fill` makes it the requested size.
    private mutating func applyAfterTransform(_ filter: ThumborFilter, requestWidth: Double, requestHeight: Double) {
        switch filter.name {
        case "rotate":
            guard let value = filter.integer(0), value % 90 == 0, ((value % 360) + 360) % 180 == 90 else { return }
            swap(&width, &height)
        case "proportion":
            guard let value = filter.decimal(0), value > 0, value <= 1, width * value >= 1, height * value >= 1 else { return }
            (width, height) = ((width * value).rounded(.down), (height * value).rounded(.down))
        case "upscale":
            guard width < requestWidth, height < requestHeight else { return }
            if width / requestWidth >= height / requestHeight {
                (width, height) = (requestWidth, (height * requestWidth / width).rounded(.down))
            } else {
                (width, height) = ((width * requestHeight / height).rounded(.down), requestHeight)
            }
        case "fill":
            (width, height) = (requestWidth != 0 ? requestWidth : width, requestHeight != 0 ? requestHeight : height)
        default:
            break
        }
    }

    /// Python's `side // 2`: half, rounded toward minus infinity.
    private static func floorHalf(_ side: Int) -> Int { side >= 0 ? side / 2 : -((-side + 1) / 2) }

    private mutating func append(crop: ThumborCrop) {
        operations.append("{\"type\": \"crop\", \"left\": \(crop.left), \"top\": \(crop.top), \"right\": \(crop.right), \"bottom\": \(crop.bottom)}")
        width = Double(crop.right - crop.left)
        height = Double(crop.bottom - crop.top)
        target = (width: width, height: height, floats: (false, false))
    }

    private mutating func append(resize newWidth: Double, _ newHeight: Double, floats: (Bool, Bool)) {
        operations.append("{\"type\": \"resize\", \"width\": \(Self.number(newWidth, float: floats.0)), \"height\": \(Self.number(newHeight, float: floats.1))}")
        width = newWidth.rounded(.down)
        height = newHeight.rounded(.down)
        target = (width: newWidth, height: newHeight, floats: floats)
    }

    /// thumbor's `fit_in_resize`.
    private mutating func fitIn(path: ThumborPath, targetWidth: inout Double, targetHeight: inout Double) {
        if path.adaptive, (width < height && targetWidth > targetHeight) || (width > height && targetWidth < targetHeight) {
            swap(&targetWidth, &targetHeight)
        }
        let sign: Double = path.full ? -1 : 1
        if sign == 1, targetWidth >= width, targetHeight >= height { return }
        guard targetWidth > 0, targetHeight > 0 else { return }
        if width / targetWidth * sign >= height / targetHeight * sign {
            let resized = (height * targetWidth / width + 1e-5).rounded(.toNearestOrEven)
            append(resize: targetWidth, resized, floats: (true, false))
        } else {
            let resized = (width * targetHeight / height + 1e-5).rounded(.toNearestOrEven)
            append(resize: resized, targetHeight, floats: (false, true))
        }
    }

    /// A number as Python's `json.dumps` writes an int or a float.
    static func number(_ value: Double, float: Bool) -> String {
        guard float else { return String(Int(value)) }
        return value == value.rounded() && abs(value) < 1e15 ? "\(Int(value)).0" : "\(value)"
    }

    /// The JSON text (or JSONP with `callback`) for a source at `url` with `frames` frames.
    func text(url: String, frames: Int, callback: String?) -> String {
        let quoted = url.percentEncoded { $0.isASCIIAlphanumeric || "_.-~/".utf8.contains($0) }
        let size = self.target ?? (width: width, height: height, floats: (false, false))
        let target = "{\"width\": \(Self.number(size.width, float: size.floats.0)), \"height\": \(Self.number(size.height, float: size.floats.1))}"
        var json = "{\"thumbor\": {\"source\": {\"url\": \"\(quoted)\", \"width\": \(Int(width)), \"height\": \(Int(height)), "
            + "\"frameCount\": \(frames)}, \"operations\": [\(operations.joined(separator: ", "))], \"target\": \(target)"
        if !focalPoints.isEmpty { json += ", \"focal_points\": [\(focalPoints.joined(separator: ", "))]" }
        json += "}}"
        // Only a plain JavaScript name is written back (thumbor writes any text).
        guard let callback, !callback.isEmpty, callback.utf8.count <= 128,
              callback.utf8.allSatisfy({ $0.isASCIIAlphanumeric || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "$") })
        else { return json }
        return callback + "(" + json + ");"
    }
}
