/// Rounds the corners of an image: pixels outside the rounded outline become transparent (or
/// the background colour), with a one-pixel anti-aliased edge. With a target size the image is
/// first resized to exactly that size (as Kingfisher draws it into the target rectangle) and
/// the radius is taken from the target size.
///
/// ```swift
/// let avatar = RoundCornerImageProcessor(radius: .widthFraction(0.5))   // a circle for a square image
/// let card = RoundCornerImageProcessor(radius: .point(12), roundingCorners: [.topLeft, .topRight])
/// ```
///
/// Identifier: `com.alcedo.roundcorner(<radius>,<corners>,<target size or ->,<background or ->)`,
/// for example `com.alcedo.roundcorner(8.0,all,-,-)` or `com.alcedo.roundcorner(w0.5,topLeft|topRight,64x64,#FFFFFFFF)`.
public struct RoundCornerImageProcessor: ImageProcessor {
    /// A corner radius: in pixels, or as a fraction of the (target) image's width or height.
    public enum Radius: Sendable, Hashable {
        /// A radius in pixels (at least 0).
        case point(Double)
        /// A fraction (`0...1`) of the width: `.widthFraction(0.5)` makes a square image round.
        case widthFraction(Double)
        /// A fraction (`0...1`) of the height.
        case heightFraction(Double)

        /// The radius in pixels for an image of `size` (before clamping to half the shorter side).
        public func compute(with size: PixelSize) -> Double {
            switch self {
            case .point(let value): return value
            case .widthFraction(let fraction): return fraction * Double(size.width)
            case .heightFraction(let fraction): return fraction * Double(size.height)
            }
        }

        /// `8.0`, `w0.5` or `h0.5`, as identifiers use it.
        var identifierDescription: String {
            switch self {
            case .point(let value): return ProcessorSupport.number(value)
            case .widthFraction(let fraction): return "w" + ProcessorSupport.number(fraction)
            case .heightFraction(let fraction): return "h" + ProcessorSupport.number(fraction)
            }
        }

        /// Throws unless a point radius is finite and >= 0 and a fraction is in `0...1`.
        func validate(_ name: String, in processor: String) throws(AlcedoError) {
            switch self {
            case .point(let value):
                try ProcessorSupport.requireNonNegative(value, name, in: processor)
            case .widthFraction(let fraction):
                try ProcessorSupport.requireFraction(fraction, "\(name) (width fraction)", in: processor)
            case .heightFraction(let fraction):
                try ProcessorSupport.requireFraction(fraction, "\(name) (height fraction)", in: processor)
            }
        }
    }

    /// The corner radius. A radius over half the shorter side is clamped to it (a full pill or circle).
    public let radius: Radius
    /// The size the image is resized to before rounding (default `nil`: its own size).
    public let targetSize: PixelSize?
    /// The corners to round (default `.all`).
    public let roundingCorners: RectCorner
    /// The colour behind the image (default `nil`: transparent corners). When set, the whole
    /// image is composited over it, so translucent pixels inside the outline show it too.
    public let backgroundColor: RGBA?

    /// Creates a round-corner processor.
    /// - Parameters:
    ///   - radius: the corner radius, `.point(_:)`, `.widthFraction(_:)` or `.heightFraction(_:)`.
    ///   - targetSize: the exact size to resize the image to first, aspect ratio not kept
    ///     (default `nil`: keep the size).
    ///   - roundingCorners: which corners to round (default `.all`).
    ///   - backgroundColor: the colour painted outside the outline and behind the image
    ///     (default `nil`: outside the outline is transparent).
    public init(radius: Radius, targetSize: PixelSize? = nil, roundingCorners: RectCorner = .all,
                backgroundColor: RGBA? = nil) {
        self.radius = radius
        self.targetSize = targetSize
        self.roundingCorners = roundingCorners
        self.backgroundColor = backgroundColor
    }

    /// Creates a round-corner processor with a radius in pixels (Kingfisher's `cornerRadius:` form).
    public init(cornerRadius: Double, targetSize: PixelSize? = nil, roundingCorners: RectCorner = .all,
                backgroundColor: RGBA? = nil) {
        self.init(radius: .point(cornerRadius), targetSize: targetSize, roundingCorners: roundingCorners,
                  backgroundColor: backgroundColor)
    }

    /// Names the processor and its parameters: `com.alcedo.roundcorner(<radius>,<corners>,<target size or ->,<background or ->)`.
    public var identifier: String {
        ProcessorSupport.identifier("roundcorner", [
            radius.identifierDescription, roundingCorners.identifierDescription,
            ProcessorSupport.size(targetSize), ProcessorSupport.color(backgroundColor),
        ])
    }

    /// The size ``process(_:)`` gives: ``targetSize`` when there is one (enlarged or not), else `size`.
    public func outputSize(for size: PixelSize) -> PixelSize {
        guard let targetSize, targetSize.width > 0, targetSize.height > 0 else { return size }
        return targetSize
    }

    /// Rounds the corners of every frame. Throws `.invalidParameter` for a negative or
    /// non-finite radius, a fraction outside `0...1` or a target size with a side <= 0, and
    /// `.outputTooLarge` for a target size over the limits of ``DecodingLimits/default``
    /// (`.workingMemoryTooLarge` when resampling to it would need more working memory).
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        try radius.validate("radius", in: "RoundCornerImageProcessor")
        var image = image
        if let targetSize {
            try ProcessorSupport.requirePositive(targetSize, "targetSize", in: "RoundCornerImageProcessor")
            try ProcessorSupport.requireOutput(targetSize, frameCount: image.frames.count, in: "RoundCornerImageProcessor")
            try ProcessorSupport.requireResampling(from: image.pixelSize, to: targetSize, in: "RoundCornerImageProcessor")
            image = image.resized(to: targetSize)
        }
        let (width, height) = (image.width, image.height)
        let mask = RoundedRectMask(minX: 0, minY: 0, maxX: Double(width), maxY: Double(height),
                                   radius: radius.compute(with: image.pixelSize), corners: roundingCorners)
        let background = backgroundColor?.premultiplied
        return image.mappingFrames { pixels in
            var output = pixels
            output.withUnsafeMutableBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return }
                if mask.maxRadius > 0 {
                    let band = Int(mask.maxRadius.rounded(.up)) + 1
                    RoundedRectMask.forEachPixel(inEdgeBand: band, width: width, height: height) { x, y in
                        let coverage = mask.coverage(x: x, y: y)
                        guard coverage < 1 else { return }
                        let p = base + (y * width + x) * 4
                        let alpha = (Float(p[3]) * coverage).rounded()
                        if alpha == 0 {
                            p[0] = 0; p[1] = 0; p[2] = 0; p[3] = 0
                        } else {
                            p[3] = UInt8(alpha)
                        }
                    }
                }
                if let background {
                    var offset = 0
                    while offset < buffer.count {
                        let p = base + offset
                        if p[3] != 255 {
                            PixelOps.storePremultiplied(PixelOps.premultiplied(p).over(background), to: p)
                        }
                        offset += 4
                    }
                }
            }
            return output
        }
    }
}
