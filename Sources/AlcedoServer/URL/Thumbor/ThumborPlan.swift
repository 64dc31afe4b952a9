import Alcedo

/// The settings a thumbor URL is read under (thumbor.conf's names in brackets).
public struct ThumborRules: Sendable, Hashable {
    /// `SECURITY_KEY` (default `nil`: signed URLs are refused, as thumbor refuses them without a key).
    public var securityKey: String?
    /// `ALLOW_UNSAFE_URL`: accept `/unsafe/` URLs (default `true`).
    public var allowUnsafe = true
    /// `MAX_WIDTH`, `MAX_HEIGHT`: requested sizes above them are lowered to them (default 0: none).
    public var maxWidth = 0, maxHeight = 0
    /// `FILTERS`: the filters a URL may use (default `nil`: every built-in one but those of
    /// ``ThumborFilter/optIn``, as thumbor's `BUILTIN_FILTERS`); others are ignored.
    public var filters: Set<String>?
    /// The options a URL's own apply to (the server's defaults).
    public var defaults = ProcessingOptions()
    /// `AUTO_PNG_TO_JPG`: a PNG source whose result has no transparent pixel is answered as
    /// JPEG when the URL names no format (default `false`). `autojpg()` turns it on for a URL
    /// when it is off, and, as in thumbor 7.8, off when it is on.
    public var autoPNGToJPG = false

    public init() {}
}

/// Turns a thumbor URL into the processing plan every dialect produces (an ``ImgproxyPath``:
/// ``ProcessingOptions`` and a source URL), with thumbor 7.8's meanings:
///
/// - `fit-in`: fit inside the size, never enlarged (`upscale()` enlarges); `full-fit-in`: cover
///   the size, enlarged when needed, not cropped; `adaptive-`: the size turned to the source's
///   orientation first.
/// - Otherwise (``ProcessingOptions/thumborCrop``, see ``ThumborGeometry``): a side of 0 is
///   completed from the aspect ratio, the source is cut to the size's aspect ratio around the
///   alignment (`left`/`right`, `top`/`bottom`, centre by default; `smart` aligns the same way,
///   as thumbor does without detectors, and a `focal()` point replaces the alignment) and
///   resized to exactly the size, enlarged when needed (`no_upscale()` stops that); `stretch()`
///   resizes without cutting. `orig` is the source's side.
/// - Negative sizes flip the result; `LxT:RxB` crops the source first; `trim` first of all.
public enum ThumborPlan {
    /// The plan for `path`, checking its signature or `unsafe` under `rules`.
    /// - Throws: ``ThumborURLError`` with thumbor's reason (each answered 400).
    public static func make(_ path: ThumborPath, rules: ThumborRules) throws(ThumborURLError) -> ImgproxyPath {
        if path.unsafe {
            guard rules.allowUnsafe else { throw .unsafeNotAllowed }
        } else {
            guard let signature = path.signature else { throw .hashOrUnsafe }
            guard let key = rules.securityKey, ThumborSigner(securityKey: key).verify(signature: signature, for: path.signedPart) else {
                throw .invalidSignature
            }
        }
        var options = rules.defaults
        var width = path.width ?? 0, height = path.height ?? 0
        if rules.maxWidth > 0, width > rules.maxWidth { width = rules.maxWidth }
        if rules.maxHeight > 0, height > rules.maxHeight { height = rules.maxHeight }
        options.width = width
        options.height = height
        // `orig` is the image's side after the trim and the manual crop, when the other side is
        // given too (`origx0` has thumbor fail with a 500; Alcedo keeps the aspect ratio there).
        options.widthFromSource = path.width == nil && path.height != 0
        options.heightFromSource = path.height == nil && path.width != 0
        if path.fitIn {
            options.resizingType = path.full ? .cover : .fit
            options.enlarge = path.full
            options.adaptiveOrientation = path.adaptive
            options.thumborFitIn = true
        } else {
            // thumbor's own crop and resize: the window is chosen on the source, before the resize.
            options.thumborCrop = true
            options.resizingType = .fill
            options.enlarge = true
        }
        if path.crop.isSet {
            options.region = ProcessingOptions.Region(left: path.crop.left, top: path.crop.top, right: path.crop.right,
                                                      bottom: path.crop.bottom)
        }
        if let trim = path.trim {
            options.cornerTrim = ProcessingOptions.CornerTrim(corner: trim.bottomRight ? .bottomRight : .topLeft, tolerance: trim.tolerance)
        }
        // thumbor flips after cropping: the crop's window is chosen before the flips (``ProcessingOptions/thumborCrop``).
        options.flipHorizontal = path.horizontalFlip
        options.flipVertical = path.verticalFlip
        options.gravity = gravity(path.horizontalAlign, path.verticalAlign)
        if path.debug {
            // thumbor's `debug/` only outlines the explicit focal points (Alcedo draws nothing)
            // and skips the resize, the crop to the size and the flips: the image as the trim
            // and the manual crop left it.
            options.width = 0
            options.height = 0
            options.widthFromSource = false
            options.heightFromSource = false
            options.resizingType = .fit
            options.enlarge = false
            options.thumborCrop = false
            options.thumborFitIn = false
            options.flipHorizontal = false
            options.flipVertical = false
        }
        let filters = ThumborFilter.list(path.filters).filter { filter in
            rules.filters.map { $0.contains(filter.name) } ?? !ThumborFilter.optIn.contains(filter.name)
        }
        for filter in filters {
            try apply(filter, to: &options, fitIn: path.fitIn, autoPNGToJPG: rules.autoPNGToJPG)
        }
        let boxes = filters.filter { $0.name == "focal" }.compactMap { $0.string(0).flatMap(focalBox) }
        if boxes.count > 1 { options.focusPixel = centerOfMass(boxes, within: path.crop.isSet ? path.crop : nil) }
        return ImgproxyPath(signature: path.signature ?? "unsafe", options: options, sourceURL: sourceURL(path.image),
                            encoding: .plain, extensionFormat: nil)
    }

    /// The URL thumbor's HTTP loader fetches for an image part (already percent-decoded once):
    /// percent-encoded when it holds no escape (thumbor's `quote` with its safe characters),
    /// and `http://` put before it unless it starts with `http`. Alcedo's own `s3://` and
    /// `local://` sources pass as they are.
    public static func sourceURL(_ image: String) -> String {
        if image.hasPrefix("s3://") || image.hasPrefix("local://") { return image }
        // thumbor quotes the decoded image part, unquotes it again, and quotes it only when no
        // escape is left in it.
        let decodedAgain = image.percentDecoded ?? image
        let url = decodedAgain == image ? image.percentEncoded(allowing: isLoaderSafe) : image
        return url.hasPrefix("http") ? url : "http://" + url
    }

    /// Python's `quote(url, safe="~@#$&()*!+=:;,.?/'")`: letters, digits, `_.-~` and those.
    private static func isLoaderSafe(_ byte: UInt8) -> Bool {
        byte.isASCIIAlphanumeric || "_.-~@#$&()*!+=:;,?/'".utf8.contains(byte)
    }

    /// The compass gravity of an alignment (thumbor's focal point at the edge or the middle).
    static func gravity(_ horizontal: ThumborPath.HorizontalAlign, _ vertical: ThumborPath.VerticalAlign) -> ProcessingOptions.Gravity {
        let compass: ProcessingOptions.Compass
        switch (horizontal, vertical) {
        case (.left, .top): compass = .northWest
        case (.center, .top): compass = .north
        case (.right, .top): compass = .northEast
        case (.left, .middle): compass = .west
        case (.center, .middle): compass = .center
        case (.right, .middle): compass = .east
        case (.left, .bottom): compass = .southWest
        case (.center, .bottom): compass = .south
        case (.right, .bottom): compass = .southEast
        }
        return .compass(compass, xOffset: 0, yOffset: 0)
    }

    /// Applies one filter as thumbor does; one whose arguments do not match is ignored.
    /// - Throws: ``ThumborURLError/invalidConvolutionKernel(_:)`` for a `convolution` kernel that
    ///   matches the filter's pattern but has no centre (thumbor 7.8 fails with a 500 there).
    static func apply(_ filter: ThumborFilter, to options: inout ProcessingOptions, fitIn: Bool,
                      autoPNGToJPG: Bool = false) throws(ThumborURLError) {
        switch filter.name {
        case "quality":
            if let value = filter.integer(0, negative: false) { options.quality = max(1, min(100, value)) }
        case "format":
            guard let name = filter.string(0)?.lowercased() else { return }
            let formats: [String: ImageFormat] = ["jpeg": .jpeg, "jpg": .jpeg, "png": .png, "gif": .gif, "webp": .webp,
                                                  "avif": .avif, "heif": .heic, "heic": .heic]
            if let format = formats[name], (try? ProcessingOptions.format(format.preferredFileExtension)) != nil {
                options.format = format
            }
        case "max_bytes":
            if let value = filter.integer(0, negative: false) { options.maxBytes = value }
        case "max_age":
            if let value = filter.integer(0, negative: false) { options.maxAge = value }
        case "background_color":
            // The image composited over a canvas of the colour (`auto`: the image's average).
            guard let text = filter.string(0) else { return }
            if text == "auto" {
                options.steps.append(.fill(.average, color: nil, extend: false, merge: true))
            } else if let color = ThumborFilter.color(text) {
                options.steps.append(.background(color))
            }
        case "fill":
            guard let text = filter.string(0), text.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }),
                  let transparent = filter.boolean(1, default: false) else { return }
            // Without fill_transparent the image's own pixels, transparent ones too, replace the
            // canvas's; with it, the image is composited over the canvas's colour.
            switch text {
            case "auto": options.steps.append(.fill(.average, color: nil, extend: fitIn, merge: transparent))
            case "blur": options.steps.append(.fill(.blur, color: nil, extend: fitIn))
            default:
                options.steps.append(.fill(.background, color: ThumborFilter.color(text), extend: fitIn, merge: transparent))
            }
        case "blur":
            guard let radius = filter.integer(0, negative: false), radius > 0 else { return }
            let sigma = filter.arguments.count > 1 ? filter.decimal(1) : 0
            guard let sigma else { return }
            // thumbor's kernel: the Gaussian of σ cut at the radius (at most 150), rows then columns.
            options.steps.append(.effect(.kernelBlur(radius: radius, sigma: sigma)))
        case "sharpen":
            guard let amount = filter.decimal(0), let radius = filter.decimal(1), filter.boolean(2, default: false) != nil,
                  filter.arguments.count == 3 else { return }
            options.steps.append(.waveletSharpen(ProcessingOptions.WaveletSharpen(amount: amount, radius: radius,
                                                                                  luminanceOnly: filter.boolean(2, default: false) ?? false)))
        case "rotate":
            // thumbor turns counter-clockwise, multiples of 90 only, what the filters before
            // it left (after the resize): a step in URL order.
            guard let value = filter.integer(0), value % 90 == 0 else { return }
            let counterClockwise = ((value % 360) + 360) % 360
            let clockwise = (360 - counterClockwise) % 360
            if clockwise != 0 { options.steps.append(.rotate(degrees: clockwise)) }
        case "grayscale":
            options.steps.append(.levels(.grayscale))
        case "equalize":
            options.steps.append(.levels(.equalize))
        case "brightness":
            if let value = filter.integer(0) { options.steps.append(.levels(.brightness(percent: value))) }
        case "contrast":
            if let value = filter.integer(0) { options.steps.append(.levels(.contrast(percent: value))) }
        case "rgb":
            if let r = filter.integer(0), let g = filter.integer(1), let b = filter.integer(2) {
                options.steps.append(.levels(.rgb(red: r, green: g, blue: b)))
            }
        case "saturation":
            if let value = filter.decimal(0) { options.steps.append(.levels(.saturation(factor: value))) }
        case "colorize":
            if let r = filter.integer(0, negative: false), let g = filter.integer(1, negative: false), let b = filter.integer(2, negative: false),
               let text = filter.string(3), text.utf8.count == 6, ThumborFilter.isHex(text), let color = ThumborFilter.color(text) {
                options.steps.append(.levels(.colorize(red: r, green: g, blue: b, color: color)))
            }
        case "curve":
            if filter.arguments.isEmpty == false, let curves = curves(filter.arguments) { options.steps.append(.levels(curves)) }
        case "round_corner":
            // `a|b`: a horizontal and a vertical radius (quarter ellipses).
            guard let radiusText = filter.string(0), let radii = Optional(radiusText.split(separator: "|", omittingEmptySubsequences: false)),
                  (1...2).contains(radii.count), let radius = Int(radii[0]),
                  let r = filter.integer(1, negative: false), let g = filter.integer(2, negative: false),
                  let b = filter.integer(3, negative: false), let transparent = filter.boolean(4, default: false) else { return }
            let vertical = radii.count == 2 ? Int(radii[1]) : radius
            guard let vertical else { return }
            options.steps.append(.roundCorner(radius: Double(min(radius, 100_000)),
                                              verticalRadius: vertical == radius ? nil : Double(min(vertical, 100_000)),
                                              color: transparent ? nil : RGBA(red: UInt8(min(255, r)), green: UInt8(min(255, g)), blue: UInt8(min(255, b)))))
        case "strip_exif":
            options.stripMetadata = true
        case "strip_icc":
            options.stripColorProfile = true
        case "no_upscale":
            // thumbor lowers the requested size to the source's, which a `fill` canvas and
            // `upscale()` then follow.
            options.enlarge = false
            options.sizeWithinSource = true
        case "upscale":
            // thumbor enlarges the image as the filters before it left it (after a `fill` that
            // extended it to the size, there is nothing left to enlarge): a step in URL order.
            options.steps.append(.upscale)
        case "stretch":
            // thumbor's `stretch()`: resized to the size without the crop to its aspect ratio.
            if options.thumborCrop { options.resizingType = .force }
        case "proportion":
            // thumbor scales what the filters before it left (after the resize): a step.
            if let value = filter.decimal(0), value > 0, value <= 1 { options.steps.append(.proportion(value)) }
        case "focal":
            guard let box = filter.string(0).flatMap(focalBox) else { return }
            let width = box.right - box.left, height = box.bottom - box.top
            options.focusPixel = ProcessingOptions.FocusPixel(x: (Double(box.left) + Double(width) / 2).rounded(.down),
                                                              y: (Double(box.top) + Double(height) / 2).rounded(.down))
        case "autojpg":
            guard filter.arguments.count <= 1, let enabled = filter.boolean(0, default: true) else { return }
            // thumbor 7.8: with AUTO_PNG_TO_JPG on, any autojpg() turns it off for the URL.
            options.pngToJPEG = autoPNGToJPG ? false : enabled
        case "watermark":
            if let mark = watermark(filter) { options.steps.append(.urlWatermark(mark)) }
        case "noise":
            guard (1...2).contains(filter.arguments.count), let amount = filter.integer(0, negative: false),
                  let seed = filter.arguments.count > 1 ? filter.integer(1, negative: false) : 0 else { return }
            options.steps.append(.effect(.noise(amount: amount, seed: UInt32(seed))))
        case "convolution":
            // convolution(ITEMS,COLUMNS[,NORMALIZE]): items `-?\d+(\.\d*)?` joined by `;`.
            guard (2...3).contains(filter.arguments.count), let columns = filter.integer(1, negative: false), columns > 0,
                  let normalize = filter.boolean(2, default: true) else { return }
            let items = filter.arguments[0].split(separator: ";", omittingEmptySubsequences: false)
            let kernel = items.compactMap { item -> Double? in
                let digits = item.hasPrefix("-") ? item.dropFirst() : item[...]
                guard let first = digits.first, first.isASCII, first.isNumber, digits.count <= 20,
                      digits.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
                      digits.filter({ $0 == "." }).count <= 1 else { return nil }
                return Double(item.hasSuffix(".") ? item + "0" : String(item))
            }
            guard kernel.count == items.count, kernel.count <= 625 else { return }
            // A kernel without a centre (an even side, or not a rectangle): thumbor's C filter
            // returns no image and no exception, and the request fails with a 500. The URL asks
            // for what cannot be done: Alcedo answers 400, as for any other bad URL.
            guard ConvolutionImageProcessor.isValid(kernel: kernel, columns: columns) else {
                throw .invalidConvolutionKernel(filter.arguments[0] + "," + filter.arguments[1])
            }
            options.steps.append(.effect(.convolution(kernel: kernel, columns: columns, normalize: normalize)))
        case "extract_focal":
            // thumbor 7.8 documents the crop of the thumbor URL that the image part is as the
            // focal point, but that point never reaches its crop (checked against it: the result
            // is the plain centred crop). Matching it, the filter changes nothing.
            break
        case "frame":
            guard filter.arguments.count == 1, let url = filter.string(0) else { return }
            options.steps.append(.frame(url: sourceURL(url)))
        default:
            // Unknown filters are ignored, as thumbor ignores them.
            break
        }
    }

    /// thumbor's focal point for several `focal()` boxes: their centres (`left + width // 2`),
    /// weighted by their areas, floor-divided (its transformer's `get_center_of_mass`). With a
    /// manual `crop` that keeps pixels, the centres outside it are left out (an inverted or
    /// empty crop is dropped, with no point left out, as thumbor drops it); `nil` when none is
    /// left or the weights add up to 0 (the alignment then).
    static func centerOfMass(_ boxes: [ThumborCrop], within crop: ThumborCrop?) -> ProcessingOptions.FocusPixel? {
        var points: [ThumborGeometry.FocalPoint] = []
        for box in boxes {
            let point = ThumborGeometry.focalPoint(of: box)
            if let crop, crop.keepsPixels, !crop.contains(x: point.x, y: point.y) { continue }
            points.append(point)
        }
        guard !points.isEmpty, points.reduce(0, { $0 + $1.weight }) != 0 else { return nil }
        let center = ThumborGeometry.centerOfMass(points)
        return ProcessingOptions.FocusPixel(x: center.x, y: center.y)
    }

    /// `focal(LxT:RxB)`'s box, `nil` when the text is not two corners of whole numbers up to
    /// 1,000,000 or the box has no width or height (thumbor ignores those).
    static func focalBox(_ text: String) -> ThumborCrop? {
        let corners = text.split(separator: ":")
        let numbers = corners.flatMap { $0.split(separator: "x") }.compactMap { Int($0) }
        guard corners.count == 2, numbers.count == 4, numbers.allSatisfy({ (0...1_000_000).contains($0) }),
              numbers[2] != numbers[0], numbers[3] != numbers[1] else { return nil }
        return ThumborCrop(left: numbers[0], top: numbers[1], right: numbers[2], bottom: numbers[3])
    }

    /// `watermark(url,x,y,alpha[,w_ratio,h_ratio])`: `nil` when the arguments do not match
    /// thumbor's patterns (`-?\d+p?|center|repeat` for x and y, `\d+` for alpha, `-?\d+|none`
    /// for the ratios; a negative ratio is refused here, where thumbor would fail on it).
    static func watermark(_ filter: ThumborFilter) -> ProcessingOptions.URLWatermark? {
        guard (4...6).contains(filter.arguments.count), let url = filter.string(0), let alpha = filter.integer(3, negative: false),
              let x = coordinate(filter.arguments[1]), let y = coordinate(filter.arguments[2]) else { return nil }
        func ratio(_ index: Int) -> Int?? {
            guard index < filter.arguments.count, filter.arguments[index] != "none" else { return .some(nil) }
            guard let value = filter.integer(index, negative: false) else { return nil }
            return .some(value == 0 ? nil : value)
        }
        guard let widthRatio = ratio(4), let heightRatio = ratio(5) else { return nil }
        return ProcessingOptions.URLWatermark(sourceURL: sourceURL(url), x: x, y: y, alpha: alpha,
                                              widthRatio: widthRatio, heightRatio: heightRatio)
    }

    /// A watermark coordinate: `-?\d+p?`, `center` or `repeat`.
    static func coordinate(_ text: String) -> ProcessingOptions.WatermarkCoordinate? {
        if text == "center" { return .center }
        if text == "repeat" { return .repeat }
        var digits = Substring(text)
        let fromEnd = digits.hasPrefix("-")
        if fromEnd { digits = digits.dropFirst() }
        let percent = digits.hasSuffix("p")
        if percent { digits = digits.dropLast() }
        guard !digits.isEmpty, digits.utf8.count <= 7, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int(digits) else {
            return nil
        }
        return percent ? .percent(value, fromEnd: fromEnd) : .pixels(value, fromEnd: fromEnd)
    }

    /// `curve([(x,y),…],[…],[…],[…])`: the all-channel, red, green and blue curves.
    private static func curves(_ arguments: [String]) -> LevelsImageProcessor.Adjustment? {
        // The arguments were split at every comma: join them and read the four lists.
        let text = arguments.joined(separator: ",")
        var lists: [[LevelsImageProcessor.Point]] = []
        var numbers: [Int] = []
        var current = ""
        var depth = 0
        for character in text {
            switch character {
            case "[": depth += 1; numbers = []
            case "]":
                depth -= 1
                var points: [LevelsImageProcessor.Point] = []
                var index = 0
                while index + 1 < numbers.count {
                    points.append(LevelsImageProcessor.Point(numbers[index], numbers[index + 1]))
                    index += 2
                }
                lists.append(points)
            case "(", ")", ",", " ":
                if !current.isEmpty, let value = Int(current), (0...255).contains(value) { numbers.append(value) }
                current = ""
            default:
                guard character.isNumber, current.count < 4 else { return nil }
                current.append(character)
            }
        }
        guard lists.count == 4, depth == 0 else { return nil }
        return .curves(all: lists[0], red: lists[1], green: lists[2], blue: lists[3])
    }
}
