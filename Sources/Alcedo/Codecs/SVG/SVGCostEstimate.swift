#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What drawing an SVG document at a given size will cost, estimated from its text before
/// librsvg draws anything, so that a document whose drawing cannot fit the CPU budget is
/// refused at once rather than watched until the budget runs out.
///
/// The model (CPU time measured with librsvg 2.54 on one core; an upper bound where the
/// document leaves a figure open):
/// - the canvas: 10 ns a pixel (clearing, and the conversion to straight RGBA);
/// - each element: 20 µs (parsing, the tree, drawing a shape of ordinary size);
/// - each use of a filter (`filter="url(#id)"`, in the attribute or a `style`): the filter
///   region in output pixels times the sum of its primitives' costs a pixel (blur 90 ns, or
///   150 ns below a standard deviation of 2 pixels where librsvg convolves; `feTurbulence` 90 ns
///   an octave; `feMorphology` 7 ns a window pixel; `feConvolveMatrix` 8 ns a kernel entry;
///   lighting 60 ns; `feDropShadow` 250 ns; colour matrices, compositing, blending, merging
///   and displacement 50 ns; the rest 10 ns), plus 2 ns a canvas pixel for each primitive's
///   result surface, which librsvg makes as large as the canvas (`feDropShadow` makes two).
///
/// The filter region is the filter's `x`/`y`/`width`/`height` (default -10 %, 120 %) of the
/// filtered element's bounding box, known from the text for `rect`, `circle`, `ellipse`,
/// `image`, `use` and `svg` elements with numeric sizes; for other elements (paths, groups) or
/// `userSpaceOnUse` regions in percent, it is the whole canvas. User units are taken at the
/// root's scale (output size over `viewBox`); transforms are ignored. Filters referenced from
/// style sheets (`<style>`) are not seen: the render's CPU watch still bounds them.
///
/// Memory: while a filter runs librsvg keeps each primitive's result, one canvas-sized surface
/// each, with the source graphic and the background: (primitives + 3) canvases for the
/// largest filter used.
struct SVGCostEstimate: Equatable {
    /// Start tags in the document.
    var elements = 0
    /// Filter uses found (elements naming a filter the document defines).
    var filterUses = 0
    /// The estimated CPU time of the render.
    var cpu: Duration = .zero
    /// The estimated memory of the largest filter's surfaces, in bytes.
    var filterMemory = 0

    /// Nanoseconds a canvas pixel, an element, and a filter surface pixel cost.
    static let nanosecondsPerCanvasPixel = 10.0
    static let nanosecondsPerElement = 20_000.0
    static let nanosecondsPerSurfacePixel = 2.0

    /// Throws when the estimate is over `limits`: `.tooComplex` past
    /// ``DecodingLimits/decodingTimeout``, `.workingMemoryTooLarge` when the filter surfaces are
    /// over ``DecodingLimits/maxWorkingMemory``.
    func check(_ limits: DecodingLimits, size: PixelSize) throws(AlcedoError) {
        try limits.checkWorkingMemory(filterMemory, what: "the surfaces of its largest filter at \(size.width)x\(size.height)", format: .svg)
        if cpu > limits.decodingTimeout {
            throw .decodingError(reason: .tooComplex(format: .svg, estimate: cpu, limit: limits.decodingTimeout,
                                                     what: "\(elements) element\(elements == 1 ? "" : "s") and \(filterUses) filter use\(filterUses == 1 ? "" : "s") at \(size.width)x\(size.height)"))
        }
    }

    /// Estimates drawing `data` into a `canvas` of pixels.
    init(_ data: Data, canvas: PixelSize) {
        var scanner = SVGTagScanner(data)
        var filters: [String: Filter] = [:]
        var current: Filter?
        var currentID: String?
        var uses: [(id: String, box: Box?)] = []
        var scale: Double?
        let canvasPixels = Double(canvas.width) * Double(canvas.height)
        while let tag = scanner.next() {
            if tag.isClosing {
                if tag.name == "filter", let filter = current, let id = currentID { filters[id] = filter }
                if tag.name == "filter" { current = nil; currentID = nil }
                continue
            }
            elements += 1
            let attributes = tag.attributes
            if scale == nil, tag.name == "svg" { scale = Self.rootScale(attributes, canvas: canvas) }
            let userScale = scale ?? 1
            if tag.name == "filter" {
                let filter = Filter(attributes)
                if tag.isSelfClosing {
                    if let id = attributes["id"] { filters[id] = filter }
                } else {
                    current = filter
                    currentID = attributes["id"]
                }
                continue
            }
            if current != nil, tag.name.hasPrefix("fe") {
                current!.add(primitive: tag.name, attributes, scale: userScale)
                continue
            }
            if let id = Self.filterReference(attributes) {
                uses.append((id, Box(tag.name, attributes).map { $0.scaled(userScale) }))
            }
        }
        var nanoseconds = canvasPixels * Self.nanosecondsPerCanvasPixel + Double(elements) * Self.nanosecondsPerElement
        var largestFilter = 0
        for use in uses {
            guard let filter = filters[use.id], filter.primitives > 0 else { continue }
            filterUses += 1
            let region = min(canvasPixels, filter.regionPixels(of: use.box, canvas: canvas, scale: scale ?? 1))
            nanoseconds += region * filter.nanosecondsPerPixel
                + canvasPixels * Double(filter.primitives) * Self.nanosecondsPerSurfacePixel
            largestFilter = max(largestFilter, filter.primitives)
        }
        // `!(x < 1e18)` also catches a NaN, which Int64(_:) would trap on.
        cpu = !(nanoseconds < 1e18) ? .seconds(1_000_000_000) : .nanoseconds(Int64(max(0, nanoseconds)))
        let canvasBytes = canvas.width * canvas.height * 4
        let (memory, overflow) = canvasBytes.multipliedReportingOverflow(by: largestFilter == 0 ? 0 : largestFilter + 3)
        filterMemory = overflow ? Int.max : memory
    }

    /// Output pixels a user unit of the root element: the canvas over the `viewBox` (or over
    /// the root's numeric size without one).
    private static func rootScale(_ attributes: [String: String], canvas: PixelSize) -> Double {
        var width: Double?, height: Double?
        if let viewBox = attributes["viewBox"] {
            let numbers = viewBox.split { $0 == " " || $0 == "," || $0.isWhitespace }.compactMap { Double($0) }
            if numbers.count == 4 { (width, height) = (numbers[2], numbers[3]) }
        }
        if width == nil { width = attributes["width"].flatMap(SVGLength.userUnits) }
        if height == nil { height = attributes["height"].flatMap(SVGLength.userUnits) }
        let sx = width.map { $0 > 0 ? Double(canvas.width) / $0 : 1 } ?? 1
        let sy = height.map { $0 > 0 ? Double(canvas.height) / $0 : 1 } ?? 1
        let scale = min(sx, sy)
        return scale.isFinite && scale > 0 ? scale : 1
    }

    /// The id of the filter an element names in `filter="url(#id)"` or a `filter:` style.
    private static func filterReference(_ attributes: [String: String]) -> String? {
        var value = attributes["filter"]
        if value == nil, let style = attributes["style"], let range = style.range(ofLiteral: "filter") {
            value = String(style[range.upperBound...].prefix { $0 != ";" })
        }
        guard let value, let start = value.range(ofLiteral: "#") else { return nil }
        let id = value[start.upperBound...].prefix { $0 != ")" && $0 != "'" && $0 != "\"" && !$0.isWhitespace }
        return id.isEmpty ? nil : String(id)
    }

    /// A bounding box in output pixels.
    struct Box {
        var width: Double
        var height: Double

        /// The box an element's own attributes give, in user units.
        init?(_ name: String, _ attributes: [String: String]) {
            func number(_ key: String) -> Double? { attributes[key].flatMap(SVGLength.userUnits) }
            switch name {
            case "rect", "image", "use", "svg", "foreignObject":
                guard let width = number("width"), let height = number("height") else { return nil }
                (self.width, self.height) = (width, height)
            case "circle":
                guard let r = number("r") else { return nil }
                (width, height) = (2 * r, 2 * r)
            case "ellipse":
                guard let rx = number("rx"), let ry = number("ry") else { return nil }
                (width, height) = (2 * rx, 2 * ry)
            default:
                return nil
            }
            guard width.isFinite, height.isFinite, width >= 0, height >= 0 else { return nil }
        }

        func scaled(_ scale: Double) -> Box {
            var box = self
            box.width *= scale
            box.height *= scale
            return box
        }
    }

    /// A `<filter>`: its region and what its primitives cost a pixel.
    struct Filter {
        var primitives = 0
        var nanosecondsPerPixel = 0.0
        /// `filterUnits="userSpaceOnUse"`.
        let userSpace: Bool
        /// The region's width and height: fractions of the bounding box (object bounding box
        /// units) or user units (user space); `nil` for a percentage in user space.
        let regionWidth: Double?
        let regionHeight: Double?

        init(_ attributes: [String: String]) {
            userSpace = attributes["filterUnits"] == "userSpaceOnUse"
            func fraction(_ key: String, default value: Double) -> Double? {
                guard let text = attributes[key]?.trimmingSpaces() else { return value }
                if text.hasSuffix("%") { return Double(text.dropLast()).map { $0 / 100 } ?? value }
                return Double(text) ?? value
            }
            func userLength(_ key: String) -> Double? {
                guard let text = attributes[key] else { return nil }
                return text.hasSuffix("%") ? nil : SVGLength.userUnits(text)
            }
            regionWidth = userSpace ? userLength("width") : fraction("width", default: 1.2)
            regionHeight = userSpace ? userLength("height") : fraction("height", default: 1.2)
        }

        /// The region's area in output pixels for an element with bounding box `box`
        /// (`nil`: unknown, the whole canvas).
        func regionPixels(of box: Box?, canvas: PixelSize, scale: Double) -> Double {
            let whole = Double(canvas.width) * Double(canvas.height)
            if userSpace {
                guard let width = regionWidth, let height = regionHeight else { return whole }
                return min(whole, abs(width * height) * scale * scale)
            }
            guard let box, let width = regionWidth, let height = regionHeight else { return whole }
            return min(whole, abs(box.width * width * box.height * height))
        }

        /// Adds a primitive element (`feGaussianBlur`…); light sources, transfer functions and
        /// merge nodes belong to the primitive around them and add nothing.
        mutating func add(primitive name: String, _ attributes: [String: String], scale: Double) {
            func numbers(_ key: String) -> [Double] {
                (attributes[key] ?? "").split { $0 == " " || $0 == "," || $0.isWhitespace }.compactMap { Double($0) }
            }
            let cost: Double
            switch name {
            case "feDistantLight", "fePointLight", "feSpotLight", "feFuncR", "feFuncG", "feFuncB", "feFuncA", "feMergeNode":
                return
            case "feGaussianBlur":
                let deviation = (numbers("stdDeviation").max() ?? 0) * scale
                cost = deviation <= 0 ? 10 : deviation < 2 ? 150 : 90
            case "feTurbulence":
                let octaves = numbers("numOctaves").first ?? 1
                cost = 90 * min(1e9, max(1, octaves.rounded(.down)))
            case "feMorphology":
                let radius = numbers("radius").map { min(1e6, max(0, $0 * scale)) }
                let rx = radius.first ?? 0, ry = radius.count > 1 ? radius[1] : rx
                cost = 7 * (2 * rx.rounded(.up) + 1) * (2 * ry.rounded(.up) + 1)
            case "feConvolveMatrix":
                let order = numbers("order").map { min(1e4, max(1, $0)) }
                let ox = order.first ?? 3, oy = order.count > 1 ? order[1] : ox
                cost = 8 * ox * oy
            case "feDiffuseLighting", "feSpecularLighting": cost = 60
            case "feDropShadow": cost = 250
            case "feColorMatrix", "feComponentTransfer", "feComposite", "feBlend", "feMerge", "feDisplacementMap": cost = 50
            default: cost = 10
            }
            primitives += name == "feDropShadow" ? 2 : 1
            nanosecondsPerPixel += cost
        }
    }
}

/// SVG lengths in user units: a number with an absolute unit (px, pt, pc, mm, cm, in; em and
/// ex at 16 px); percentages and anything else give `nil`.
enum SVGLength {
    static func userUnits(_ text: String) -> Double? {
        let trimmed = text.trimmingSpaces()
        let units: [(String, Double)] = [("px", 1), ("pt", 4.0 / 3), ("pc", 16), ("mm", 96 / 25.4), ("cm", 96 / 2.54),
                                         ("in", 96), ("em", 16), ("ex", 8)]
        for (suffix, factor) in units where trimmed.hasSuffix(suffix) {
            return Double(trimmed.dropLast(suffix.count)).map { $0 * factor }
        }
        return Double(trimmed)
    }
}

/// Walks the tags of an XML document without building a tree: start tags with their
/// attributes, end tags with their names. Comments, CDATA, processing instructions and the
/// doctype (internal subset included) are skipped. Namespace prefixes are dropped from names.
struct SVGTagScanner {
    struct Tag {
        var name: String
        var isClosing: Bool
        var isSelfClosing: Bool
        var attributes: [String: String]
    }

    private let bytes: [UInt8]
    private var index = 0

    init(_ data: Data) {
        bytes = [UInt8](data)
    }

    mutating func next() -> Tag? {
        while let open = find(UInt8(ascii: "<"), from: index) {
            index = open + 1
            guard index < bytes.count else { return nil }
            if starts(with: "!--") {
                index = find("-->", from: index + 3).map { $0 + 3 } ?? bytes.count
                continue
            }
            if starts(with: "![CDATA[") {
                index = find("]]>", from: index).map { $0 + 3 } ?? bytes.count
                continue
            }
            if bytes[index] == UInt8(ascii: "?") {
                index = find("?>", from: index).map { $0 + 2 } ?? bytes.count
                continue
            }
            if bytes[index] == UInt8(ascii: "!") {
                skipDeclaration()
                continue
            }
            let closing = bytes[index] == UInt8(ascii: "/")
            if closing { index += 1 }
            let nameStart = index
            while index < bytes.count, !Self.endsName(bytes[index]) { index += 1 }
            var name = String(decoding: bytes[nameStart..<index], as: UTF8.self)
            if let colon = name.lastIndex(of: ":") { name = String(name[name.index(after: colon)...]) }
            guard !name.isEmpty else { continue }
            var tag = Tag(name: name, isClosing: closing, isSelfClosing: false, attributes: [:])
            readAttributes(into: &tag)
            return tag
        }
        index = bytes.count
        return nil
    }

    private static func endsName(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/") || byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    /// Reads `name="value"` pairs up to the tag's `>`, noting a `/>` ending.
    private mutating func readAttributes(into tag: inout Tag) {
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: ">") { index += 1; return }
            if byte == UInt8(ascii: "/") {
                tag.isSelfClosing = true
                index += 1
                continue
            }
            if Self.isSpace(byte) { index += 1; continue }
            let keyStart = index
            while index < bytes.count, bytes[index] != UInt8(ascii: "="), bytes[index] != UInt8(ascii: ">"), !Self.isSpace(bytes[index]) {
                index += 1
            }
            var key = String(decoding: bytes[keyStart..<index], as: UTF8.self)
            while index < bytes.count, Self.isSpace(bytes[index]) { index += 1 }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { continue }
            index += 1
            while index < bytes.count, Self.isSpace(bytes[index]) { index += 1 }
            guard index < bytes.count else { return }
            let quote = bytes[index]
            guard quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else { continue }
            let valueStart = index + 1
            let valueEnd = find(quote, from: valueStart) ?? bytes.count
            if let colon = key.lastIndex(of: ":"), !key.hasPrefix("xmlns") { key = String(key[key.index(after: colon)...]) }
            tag.attributes[key] = String(decoding: bytes[valueStart..<valueEnd], as: UTF8.self)
            index = min(bytes.count, valueEnd + 1)
        }
    }

    /// Skips `<!DOCTYPE …>` and other declarations, with an internal subset in brackets.
    private mutating func skipDeclaration() {
        var depth = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "]"): depth -= 1
            case UInt8(ascii: ">") where depth <= 0:
                index += 1
                return
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                index = find(bytes[index], from: index + 1) ?? bytes.count
            default: break
            }
            index += 1
        }
    }

    private func starts(with text: String) -> Bool {
        let utf8 = Array(text.utf8)
        return index + utf8.count <= bytes.count && bytes[index..<(index + utf8.count)].elementsEqual(utf8)
    }

    private func find(_ byte: UInt8, from start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        return bytes[start...].firstIndex(of: byte)
    }

    private func find(_ text: String, from start: Int) -> Int? {
        let utf8 = Array(text.utf8)
        var position = start
        while let candidate = find(utf8[0], from: position) {
            if candidate + utf8.count <= bytes.count, bytes[candidate..<(candidate + utf8.count)].elementsEqual(utf8) { return candidate }
            position = candidate + 1
        }
        return nil
    }
}
