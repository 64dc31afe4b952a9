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
        let (targetWidth, targetHeight) = ThumborGeometry.target(source: PixelSize(width: Int(width), height: Int(height)),
                                                                 width: Int(requestWidth), height: Int(requestHeight))
        // `focal()` boxes are the focal points (their centres, weighted by their areas, moved
        // with the manual crop, those outside it left out); without any, the alignment.
        var points: [ThumborGeometry.FocalPoint] = []
        for filter in filters where filter.name == "focal" {
            guard let box = filter.string(0).flatMap(ThumborPlan.focalBox) else { continue }
            var point = ThumborGeometry.focalPoint(of: box)
            if crop.isSet {
                guard crop.contains(x: point.x, y: point.y) else { continue }
                point.x -= Double(crop.left)
                point.y -= Double(crop.top)
            }
            points.append(point)
            focalPoints.append("{\"x\": \(Int(point.x)), \"y\": \(Int(point.y)), \"z\": \(Int(point.weight)), \"height\": \(box.bottom - box.top), \"width\": \(box.right - box.left), \"origin\": \"Explicit\"}")
        }
        let focalX: Double, focalY: Double
        if points.isEmpty || points.reduce(0, { $0 + $1.weight }) == 0 {
            focalPoints = []
            let percentages: [String: Double] = ["left": 0, "center": 0.5, "right": 1, "top": 0, "middle": 0.5, "bottom": 1]
            focalX = Double(Int(width * (percentages[path.horizontalAlign.rawValue] ?? 0.5)))
            focalY = Double(Int(height * (percentages[path.verticalAlign.rawValue] ?? 0.5)))
            focalPoints.append("{\"x\": \(Int(focalX)), \"y\": \(Int(focalY)), \"z\": 1.0, \"height\": 1, \"width\": 1, \"origin\": \"alignment\"}")
        } else {
            (focalX, focalY) = ThumborGeometry.centerOfMass(points)
        }
        if path.fitIn {
            if let fit = ThumborGeometry.fitIn(source: PixelSize(width: Int(width), height: Int(height)), targetWidth: targetWidth,
                                               targetHeight: targetHeight, adaptive: path.adaptive, full: path.full) {
                append(resize: Double(fit.size.width), Double(fit.size.height), floats: (fit.keepsWidth, !fit.keepsWidth))
            }
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
