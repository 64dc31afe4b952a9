import Foundation

// The processors' initialisers in Kingfisher's shape: colours as `KFCrossPlatformColor`
// (``AlcedoColor``), sizes in `CGFloat`, a border as a ``Border``. Each builds the same
// processor as Alcedo's own initialiser (the colour is turned into an ``RGBA`` pixel), so the
// identifiers, and the cache keys, are the same whichever form made it.

/// A border for ``BorderImageProcessor``, as Kingfisher's `Border`.
public struct Border: Sendable, Hashable {
    /// The border colour (default `.black`).
    public var color: AlcedoColor
    /// The border width in pixels (default 4).
    public var lineWidth: CGFloat
    /// The radius of the outline's corners (default `.point(0)`: square corners).
    public var radius: RoundCornerImageProcessor.Radius
    /// The corners the radius applies to (default `.all`).
    public var roundingCorners: RectCorner

    /// Creates a border; the defaults are Kingfisher's.
    public init(color: AlcedoColor = .black, lineWidth: CGFloat = 4,
                radius: RoundCornerImageProcessor.Radius = .point(0), roundingCorners: RectCorner = .all) {
        self.color = color
        self.lineWidth = lineWidth
        self.radius = radius
        self.roundingCorners = roundingCorners
    }
}

extension BorderImageProcessor {
    /// Creates a border processor from Kingfisher's ``Border``:
    /// `BorderImageProcessor(border: .init(color: .red, lineWidth: 2))`.
    public init(border: Border) {
        self.init(border: Double(border.lineWidth), color: border.color.pixel, cornerRadius: border.radius,
                  roundingCorners: border.roundingCorners)
    }

    /// The border as Kingfisher's ``Border``.
    public var border: Border {
        Border(color: AlcedoColor(color), lineWidth: CGFloat(lineWidth), radius: cornerRadius, roundingCorners: roundingCorners)
    }
}

extension TintImageProcessor {
    /// Creates a tint processor from a colour: `TintImageProcessor(tint: .blue)`.
    @_disfavoredOverload
    public init(tint: AlcedoColor) {
        self.init(tint: tint.pixel)
    }
}

extension OverlayImageProcessor {
    /// Creates an overlay processor from a colour and a fraction (default 0.5):
    /// `OverlayImageProcessor(overlay: .red, fraction: 0.7)`.
    @_disfavoredOverload
    public init(overlay: AlcedoColor, fraction: CGFloat = 0.5) {
        self.init(overlay: overlay.pixel, fraction: Double(fraction))
    }
}

extension BlendImageProcessor {
    /// Creates a blend processor with a background colour (default `nil`: transparent):
    /// `BlendImageProcessor(blendMode: .darken, alpha: 1.0, backgroundColor: .lightGray)`.
    @_disfavoredOverload
    public init(blendMode: BlendMode, alpha: CGFloat = 1, backgroundColor: AlcedoColor?) {
        self.init(blendMode: blendMode, alpha: Double(alpha), backgroundColor: backgroundColor?.pixel)
    }
}

extension CompositingImageProcessor {
    /// Creates a compositing processor with a background colour (default `nil`: transparent),
    /// as Kingfisher's: `CompositingImageProcessor(compositingOperation: .darken, alpha: 1.0, backgroundColor: .lightGray)`.
    @_disfavoredOverload
    public init(compositingOperation: CompositingOperation, alpha: CGFloat = 1, backgroundColor: AlcedoColor?) {
        self.init(compositingOperation: compositingOperation, alpha: Double(alpha), backgroundColor: backgroundColor?.pixel)
    }
}
