import Foundation

// Foundation's geometry types (present on Linux) wherever Kingfisher takes them, next to
// `PixelSize`. One point is one pixel, unless the request carries
// `AlcedoOptionsInfoItem.scaleFactor(_:)`, which multiplies the processor's sizes.

extension PixelSize {
    /// The size `size` rounded to whole pixels (a negative or non-finite side becomes 0, which
    /// the processors reject with a typed error).
    public init(_ size: CGSize) {
        self.init(width: Self.pixels(size.width), height: Self.pixels(size.height))
    }

    /// The size as a `CGSize`.
    public var cgSize: CGSize { CGSize(width: CGFloat(width), height: CGFloat(height)) }

    /// The size multiplied by `factor`, each side rounded and at least 1 (0 stays 0).
    func scaled(byPoints factor: Double) -> PixelSize {
        func side(_ value: Int) -> Int { value <= 0 ? value : max(1, Int((Double(value) * factor).rounded())) }
        return PixelSize(width: side(width), height: side(height))
    }

    private static func pixels(_ value: CGFloat) -> Int {
        let value = Double(value)
        guard value.isFinite, value > 0 else { return 0 }
        return value >= Double(Int32.max) ? Int(Int32.max) : Int(value.rounded())
    }
}

extension CroppingImageProcessor.Anchor {
    /// The anchor at the unit point `point` (Kingfisher's `CGPoint` anchor: (0.5, 0.5) is the centre).
    public init(_ point: CGPoint) {
        self.init(x: Double(point.x), y: Double(point.y))
    }
}

extension DownsamplingImageProcessor {
    /// Kingfisher's form: the box to fit in as a `CGSize` (in points; see ``PixelSize/init(_:)``).
    public init(size: CGSize) {
        self.init(size: PixelSize(size))
    }
}

extension ResizingImageProcessor {
    /// Kingfisher's form: the reference size as a `CGSize` (in points; see ``PixelSize/init(_:)``).
    public init(referenceSize: CGSize, mode: Mode = .none) {
        self.init(referenceSize: PixelSize(referenceSize), mode: mode)
    }
}

extension CroppingImageProcessor {
    /// Kingfisher's form: the size as a `CGSize` and the anchor as a unit `CGPoint`.
    public init(size: CGSize, anchor: CGPoint) {
        self.init(size: PixelSize(size), anchor: Anchor(anchor))
    }

    /// The size as a `CGSize` (in points), placed by `anchor` (default ``Anchor/center``).
    public init(size: CGSize, anchor: Anchor = .center) {
        self.init(size: PixelSize(size), anchor: anchor)
    }
}

extension RoundCornerImageProcessor {
    /// Kingfisher's form: a radius in points and the target size as a `CGSize`.
    public init(cornerRadius: CGFloat, targetSize: CGSize, roundingCorners: RectCorner = .all,
                backgroundColor: RGBA? = nil) {
        self.init(radius: .point(Double(cornerRadius)), targetSize: PixelSize(targetSize),
                  roundingCorners: roundingCorners, backgroundColor: backgroundColor)
    }

    /// A radius and the target size as a `CGSize` (in points).
    public init(radius: Radius, targetSize: CGSize, roundingCorners: RectCorner = .all,
                backgroundColor: RGBA? = nil) {
        self.init(radius: radius, targetSize: PixelSize(targetSize), roundingCorners: roundingCorners,
                  backgroundColor: backgroundColor)
    }
}

// MARK: Scale factor

/// A processor whose sizes are in points: ``AlcedoOptionsInfoItem/scaleFactor(_:)`` multiplies them.
protocol PointSizedProcessor: ImageProcessor {
    /// The same processor with its sizes multiplied by `factor`.
    func scaled(by factor: Double) -> any ImageProcessor
}

extension DownsamplingImageProcessor: PointSizedProcessor {
    func scaled(by factor: Double) -> any ImageProcessor {
        DownsamplingImageProcessor(size: size.scaled(byPoints: factor))
    }
}

extension ResizingImageProcessor: PointSizedProcessor {
    func scaled(by factor: Double) -> any ImageProcessor {
        ResizingImageProcessor(referenceSize: referenceSize.scaled(byPoints: factor), mode: targetContentMode)
    }
}

extension CroppingImageProcessor: PointSizedProcessor {
    func scaled(by factor: Double) -> any ImageProcessor {
        CroppingImageProcessor(size: size.scaled(byPoints: factor), anchor: anchor)
    }
}

extension RoundCornerImageProcessor: PointSizedProcessor {
    func scaled(by factor: Double) -> any ImageProcessor {
        var scaledRadius = radius
        if case .point(let value) = radius { scaledRadius = .point(value * factor) }
        return RoundCornerImageProcessor(radius: scaledRadius, targetSize: targetSize?.scaled(byPoints: factor),
                                         roundingCorners: roundingCorners, backgroundColor: backgroundColor)
    }
}

extension ComposedImageProcessor: PointSizedProcessor {
    func scaled(by factor: Double) -> any ImageProcessor {
        let first = (self.first as? any PointSizedProcessor)?.scaled(by: factor) ?? self.first
        let second = (self.second as? any PointSizedProcessor)?.scaled(by: factor) ?? self.second
        return ComposedImageProcessor(first: first, second: second)
    }
}
