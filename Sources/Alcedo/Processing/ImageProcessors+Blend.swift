/// Draws the image with a blend mode and an opacity over a background colour (Kingfisher's
/// `BlendImageProcessor`).
///
/// The formulas are those of the W3C *Compositing and Blending Level 1* specification, with the
/// image as source `Cs` and the background as backdrop `Cb` (straight colours in `0...1`):
/// the blended colour is `(1 - αb)·Cs + αb·B(Cb, Cs)` and is then composited source-over the
/// background with the image's alpha times ``alpha``. Without a background colour the backdrop
/// is transparent, so every mode reduces to the image with its alpha multiplied by ``alpha``.
///
/// Identifier: `com.alcedo.blend(<mode>,<alpha>,<background or ->)`, for example
/// `com.alcedo.blend(multiply,1.0,#FFFFFFFF)`.
public struct BlendImageProcessor: ImageProcessor {
    /// How the image's colour `Cs` combines with the background colour `Cb` (W3C definitions).
    public enum BlendMode: String, Sendable, Hashable, CaseIterable {
        /// `Cs`: the image over the background.
        case normal
        /// `Cb·Cs`: darkens.
        case multiply
        /// `Cb + Cs - Cb·Cs`: lightens.
        case screen
        /// Multiply where the background is dark, screen where it is light.
        case overlay
        /// `min(Cb, Cs)`.
        case darken
        /// `max(Cb, Cs)`.
        case lighten
        /// Brightens the background to reflect the image: `min(1, Cb / (1 - Cs))`.
        case colorDodge
        /// Darkens the background to reflect the image: `1 - min(1, (1 - Cb) / Cs)`.
        case colorBurn
        /// Multiply where the image is dark, screen where it is light.
        case hardLight
        /// A softer hard light (the W3C formula).
        case softLight
        /// `|Cb - Cs|`.
        case difference
        /// `Cb + Cs - 2·Cb·Cs`.
        case exclusion

        /// `B(Cb, Cs)` for one channel.
        func blend(backdrop cb: Double, source cs: Double) -> Double {
            switch self {
            case .normal: return cs
            case .multiply: return cb * cs
            case .screen: return cb + cs - cb * cs
            case .overlay: return BlendMode.hardLight.blend(backdrop: cs, source: cb)
            case .darken: return min(cb, cs)
            case .lighten: return max(cb, cs)
            case .colorDodge:
                if cb == 0 { return 0 }
                return cs >= 1 ? 1 : min(1, cb / (1 - cs))
            case .colorBurn:
                if cb >= 1 { return 1 }
                return cs <= 0 ? 0 : 1 - min(1, (1 - cb) / cs)
            case .hardLight:
                return cs <= 0.5 ? cb * 2 * cs : BlendMode.screen.blend(backdrop: cb, source: 2 * cs - 1)
            case .softLight:
                if cs <= 0.5 { return cb - (1 - 2 * cs) * cb * (1 - cb) }
                let d = cb <= 0.25 ? ((16 * cb - 12) * cb + 4) * cb : cb.squareRoot()
                return cb + (2 * cs - 1) * (d - cb)
            case .difference: return abs(cb - cs)
            case .exclusion: return cb + cs - 2 * cb * cs
            }
        }
    }

    /// The blend mode (see ``BlendMode``).
    public let blendMode: BlendMode
    /// The opacity the image is drawn with, `0...1`.
    public let alpha: Double
    /// The colour behind the image, or `nil` for a transparent backdrop.
    public let backgroundColor: RGBA?

    /// Creates a blend processor.
    /// - Parameters:
    ///   - blendMode: how the image combines with the background.
    ///   - alpha: the opacity the image is drawn with, in `0...1` (default 1).
    ///   - backgroundColor: the colour behind the image (default `nil`: transparent, where
    ///     every mode is `.normal`).
    public init(blendMode: BlendMode, alpha: Double = 1, backgroundColor: RGBA? = nil) {
        self.blendMode = blendMode
        self.alpha = alpha
        self.backgroundColor = backgroundColor
    }

    /// Names the processor and its parameters: `com.alcedo.blend(<mode>,<alpha>,<background or ->)`.
    public var identifier: String {
        ProcessorSupport.identifier("blend", [
            blendMode.rawValue, ProcessorSupport.number(alpha), ProcessorSupport.color(backgroundColor),
        ])
    }

    /// Blends every frame. Throws `.invalidParameter` for an alpha outside `0...1`.
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        try ProcessorSupport.requireFraction(alpha, "alpha", in: "BlendImageProcessor")
        let background = backgroundColor ?? .clear
        let backdropAlpha = Float(background.alpha) / 255
        let backdrop = background.premultiplied
        // With a constant backdrop, the blended colour of a channel depends only on the
        // image's value in it: one table per channel of (1 - αb)·Cs + αb·B(Cb, Cs).
        func table(_ backdropValue: UInt8) -> [Float] {
            let cb = Double(backdropValue) / 255
            let ab = Double(backdropAlpha)
            return (0...255).map { value in
                let cs = Double(value) / 255
                return Float((1 - ab) * cs + ab * blendMode.blend(backdrop: cb, source: cs))
            }
        }
        let red = table(background.red), green = table(background.green), blue = table(background.blue)
        let opacity = Float(alpha) / 255
        return image.mappingFrames { pixels in
            PixelOps.mapPixels(separableWhenOpaque: pixels) { s, d in
                let sourceAlpha = Float(s[3]) * opacity
                let blended = SIMD4<Float>(red[Int(s[0])], green[Int(s[1])], blue[Int(s[2])], 1)
                PixelOps.storePremultiplied((blended * sourceAlpha).over(backdrop), to: d)
            }
        }
    }
}
