/// Draws a border of a colour along the inside of the image's edges, optionally following
/// rounded corners.
///
/// The border is the band between the image's outline (a rectangle with `cornerRadius` on
/// `roundingCorners`) and the same outline inset by `border` pixels (with the radius reduced by
/// the width, so the curves are concentric). The colour is composited over the image in that
/// band, anti-aliased along curves. Pixels outside a rounded outline are left as they are, as
/// in Kingfisher: put a ``RoundCornerImageProcessor`` with the same radius first to make them
/// transparent (`RoundCornerImageProcessor(cornerRadius: 8) |> BorderImageProcessor(border: 2, cornerRadius: .point(8))`).
///
/// Identifier: `com.alcedo.border(<width>,<colour>,<radius>,<corners>)`, for example
/// `com.alcedo.border(2.0,#000000FF,0.0,all)`.
public struct BorderImageProcessor: ImageProcessor {
    /// The border width in pixels.
    public let lineWidth: Double
    /// The border colour (its alpha makes a translucent border).
    public let color: RGBA
    /// The radius of the outline's corners (`.point(0)`: square corners).
    public let cornerRadius: RoundCornerImageProcessor.Radius
    /// The corners that `cornerRadius` applies to.
    public let roundingCorners: RectCorner

    /// Creates a border processor.
    /// - Parameters:
    ///   - border: the width in pixels, at least 0 (0 leaves the image as it is).
    ///   - color: the border colour (default opaque black).
    ///   - cornerRadius: the radius of the outline's corners (default `.point(0)`: square).
    ///   - roundingCorners: which corners are rounded (default `.all`).
    public init(border: Double, color: RGBA = .black, cornerRadius: RoundCornerImageProcessor.Radius = .point(0),
                roundingCorners: RectCorner = .all) {
        self.lineWidth = border
        self.color = color
        self.cornerRadius = cornerRadius
        self.roundingCorners = roundingCorners
    }

    /// Names the processor and its parameters: `com.alcedo.border(<width>,<colour>,<radius>,<corners>)`.
    public var identifier: String {
        ProcessorSupport.identifier("border", [
            ProcessorSupport.number(lineWidth), ProcessorSupport.color(color),
            cornerRadius.identifierDescription, roundingCorners.identifierDescription,
        ])
    }

    /// Draws the border on every frame. Throws `.invalidParameter` for a negative or
    /// non-finite width or radius, or a radius fraction outside `0...1`.
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        try ProcessorSupport.requireNonNegative(lineWidth, "border width", in: "BorderImageProcessor")
        try cornerRadius.validate("cornerRadius", in: "BorderImageProcessor")
        guard lineWidth > 0, color.alpha > 0 else { return image }
        let (width, height) = (image.width, image.height)
        let (w, h) = (Double(width), Double(height))
        let radius = min(cornerRadius.compute(with: image.pixelSize), min(w, h) / 2)
        let outer = RoundedRectMask(minX: 0, minY: 0, maxX: w, maxY: h, radius: radius, corners: roundingCorners)
        let inner = RoundedRectMask(minX: lineWidth, minY: lineWidth, maxX: w - lineWidth, maxY: h - lineWidth,
                                    radius: max(radius - lineWidth, 0), corners: roundingCorners)
        // Beyond this many pixels from an edge both outlines cover a pixel fully.
        let reach = min(max(radius, lineWidth), max(w, h))
        let band = Int(reach.rounded(.up)) + 1
        let paint = color.premultiplied
        return image.mappingFrames { pixels in
            var output = pixels
            output.withUnsafeMutableBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return }
                RoundedRectMask.forEachPixel(inEdgeBand: band, width: width, height: height) { x, y in
                    let share = outer.coverage(x: x, y: y) - inner.coverage(x: x, y: y)
                    guard share > 0 else { return }
                    let p = base + (y * width + x) * 4
                    PixelOps.storePremultiplied((paint * share).over(PixelOps.premultiplied(p)), to: p)
                }
            }
            return output
        }
    }
}
