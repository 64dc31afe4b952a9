/// Draws the image with a compositing operation and an opacity onto a background colour
/// (Kingfisher's `CompositingImageProcessor`, which uses AppKit's `NSCompositingOperation`).
///
/// The image is the source `S`, drawn with its alpha times ``alpha``; the background colour
/// (transparent when `nil`) is the destination `D`. The operations are AppKit's:
/// - the Porter–Duff operators (`clear`, `copy`, `sourceOver`, `sourceIn`, `sourceOut`,
///   `sourceAtop`, `destinationOver`, `destinationIn`, `destinationOut`, `destinationAtop`,
///   `xor`), `plusLighter` (`S + D`, clamped) and `plusDarker` (`max(0, S + D - 1)`, on
///   premultiplied colours, alpha `min(1, αS + αD)`);
/// - the blend modes (`multiply` … `exclusion`, and the non-separable `hue`, `saturation`,
///   `color`, `luminosity`) with the W3C *Compositing and Blending Level 1* formulas, composited
///   source-over, as ``BlendImageProcessor`` does.
///
/// Identifier: `com.alcedo.compositing(<operation>,<alpha>,<background or ->)`.
public struct CompositingImageProcessor: ImageProcessor {
    /// AppKit's compositing operations (`NSCompositingOperation`), with its names.
    public enum CompositingOperation: String, Sendable, Hashable, CaseIterable {
        /// Transparent everywhere.
        case clear
        /// The image only: `S`.
        case copy
        /// The image over the background: `S + D·(1 - αS)`.
        case sourceOver
        /// The image where the background is: `S·αD`.
        case sourceIn
        /// The image where the background is not: `S·(1 - αD)`.
        case sourceOut
        /// The image where the background is, over it: `S·αD + D·(1 - αS)`.
        case sourceAtop
        /// The background over the image: `S·(1 - αD) + D`.
        case destinationOver
        /// The background where the image is: `D·αS`.
        case destinationIn
        /// The background where the image is not: `D·(1 - αS)`.
        case destinationOut
        /// The background where the image is, over it: `S·(1 - αD) + D·αS`.
        case destinationAtop
        /// Each where the other is not: `S·(1 - αD) + D·(1 - αS)`.
        case xor
        /// `max(0, S + D - 1)` on premultiplied colours: darkens.
        case plusDarker
        /// `min(1, S + D)` on premultiplied colours: lightens.
        case plusLighter
        /// `Cb·Cs`.
        case multiply
        /// `Cb + Cs - Cb·Cs`.
        case screen
        /// Multiply where the background is dark, screen where it is light.
        case overlay
        /// `min(Cb, Cs)`.
        case darken
        /// `max(Cb, Cs)`.
        case lighten
        /// Brightens the background to reflect the image.
        case colorDodge
        /// Darkens the background to reflect the image.
        case colorBurn
        /// A softer hard light.
        case softLight
        /// Multiply where the image is dark, screen where it is light.
        case hardLight
        /// `|Cb - Cs|`.
        case difference
        /// `Cb + Cs - 2·Cb·Cs`.
        case exclusion
        /// The image's hue with the background's saturation and luminosity.
        case hue
        /// The image's saturation with the background's hue and luminosity.
        case saturation
        /// The image's hue and saturation with the background's luminosity.
        case color
        /// The image's luminosity with the background's hue and saturation.
        case luminosity

        /// The separable blend mode of the same name, for the blend operations.
        var separableMode: BlendImageProcessor.BlendMode? {
            switch self {
            case .multiply: return .multiply
            case .screen: return .screen
            case .overlay: return .overlay
            case .darken: return .darken
            case .lighten: return .lighten
            case .colorDodge: return .colorDodge
            case .colorBurn: return .colorBurn
            case .softLight: return .softLight
            case .hardLight: return .hardLight
            case .difference: return .difference
            case .exclusion: return .exclusion
            default: return nil
            }
        }
    }

    /// The operation (see ``CompositingOperation``).
    public let compositingOperation: CompositingOperation
    /// The opacity the image is drawn with, `0...1`.
    public let alpha: Double
    /// The background colour, or `nil` for a transparent background.
    public let backgroundColor: RGBA?

    /// Creates a compositing processor.
    /// - Parameters:
    ///   - compositingOperation: how the image combines with the background.
    ///   - alpha: the opacity the image is drawn with, in `0...1` (default 1).
    ///   - backgroundColor: the background (default `nil`: transparent).
    public init(compositingOperation: CompositingOperation, alpha: Double = 1, backgroundColor: RGBA? = nil) {
        self.compositingOperation = compositingOperation
        self.alpha = alpha
        self.backgroundColor = backgroundColor
    }

    /// Names the processor and its parameters: `com.alcedo.compositing(<operation>,<alpha>,<background or ->)`.
    public var identifier: String {
        ProcessorSupport.identifier("compositing", [
            compositingOperation.rawValue, ProcessorSupport.number(alpha), ProcessorSupport.color(backgroundColor),
        ])
    }

    /// Composites every frame. Throws `.invalidParameter` for an alpha outside `0...1`.
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        try ProcessorSupport.requireFraction(alpha, "alpha", in: "CompositingImageProcessor")
        let destination = (backgroundColor ?? .clear).premultiplied
        let opacity = Float(alpha)
        let operation = compositingOperation
        return image.mappingFrames { pixels in
            PixelOps.mapPixels(pixels) { s, d in
                let source = PixelOps.premultiplied(s) * opacity
                PixelOps.storePremultiplied(Self.composite(source, destination, operation), to: d)
            }
        }
    }

    /// `source` composited with `destination` (both premultiplied, `0...1`).
    @inline(__always)
    static func composite(_ s: SIMD4<Float>, _ d: SIMD4<Float>, _ operation: CompositingOperation) -> SIMD4<Float> {
        let sa = s.w, da = d.w
        switch operation {
        case .clear: return .zero
        case .copy: return s
        case .sourceOver: return s + d * (1 - sa)
        case .sourceIn: return s * da
        case .sourceOut: return s * (1 - da)
        case .sourceAtop: return s * da + d * (1 - sa)
        case .destinationOver: return s * (1 - da) + d
        case .destinationIn: return d * sa
        case .destinationOut: return d * (1 - sa)
        case .destinationAtop: return s * (1 - da) + d * sa
        case .xor: return s * (1 - da) + d * (1 - sa)
        case .plusLighter: return pointwiseMin(s + d, SIMD4(repeating: 1))
        case .plusDarker:
            let a = min(1, sa + da)
            let color = pointwiseMax(SIMD4(repeating: a) - (SIMD4(repeating: sa) - s) - (SIMD4(repeating: da) - d), .zero)
            return SIMD4(color.x, color.y, color.z, a)
        default:
            guard sa > 0 else { return d }
            // Straight colours for the blend function.
            let cs = SIMD3(s.x, s.y, s.z) / sa
            let cb = da > 0 ? SIMD3(d.x, d.y, d.z) / da : SIMD3<Float>(repeating: 0)
            let blended: SIMD3<Float>
            if let mode = operation.separableMode {
                blended = SIMD3(Float(mode.blend(backdrop: Double(cb.x), source: Double(cs.x))),
                                Float(mode.blend(backdrop: Double(cb.y), source: Double(cs.y))),
                                Float(mode.blend(backdrop: Double(cb.z), source: Double(cs.z))))
            } else {
                blended = NonSeparableBlend.blend(operation, backdrop: cb, source: cs)
            }
            // W3C: the source's colour becomes (1 - αb)·Cs + αb·B(Cb, Cs), then source-over.
            let mixed = cs * (1 - da) + blended * da
            let top = SIMD4(mixed.x * sa, mixed.y * sa, mixed.z * sa, sa)
            return top + d * (1 - sa)
        }
    }
}

/// The W3C non-separable blend modes (hue, saturation, color, luminosity) on straight colours.
enum NonSeparableBlend {
    static func blend(_ operation: CompositingImageProcessor.CompositingOperation,
                      backdrop cb: SIMD3<Float>, source cs: SIMD3<Float>) -> SIMD3<Float> {
        switch operation {
        case .hue: return setLum(setSat(cs, sat(cb)), lum(cb))
        case .saturation: return setLum(setSat(cb, sat(cs)), lum(cb))
        case .color: return setLum(cs, lum(cb))
        default: return setLum(cb, lum(cs))  // luminosity
        }
    }

    static func lum(_ c: SIMD3<Float>) -> Float { 0.3 * c.x + 0.59 * c.y + 0.11 * c.z }

    static func clipColor(_ c: SIMD3<Float>) -> SIMD3<Float> {
        let l = lum(c)
        let n = min(c.x, c.y, c.z), x = max(c.x, c.y, c.z)
        var result = c
        if n < 0, l - n > 0 { result = SIMD3(repeating: l) + (result - SIMD3(repeating: l)) * l / (l - n) }
        if x > 1, x - l > 0 { result = SIMD3(repeating: l) + (result - SIMD3(repeating: l)) * (1 - l) / (x - l) }
        return result
    }

    static func setLum(_ c: SIMD3<Float>, _ l: Float) -> SIMD3<Float> {
        clipColor(c + SIMD3(repeating: l - lum(c)))
    }

    static func sat(_ c: SIMD3<Float>) -> Float { max(c.x, c.y, c.z) - min(c.x, c.y, c.z) }

    static func setSat(_ c: SIMD3<Float>, _ s: Float) -> SIMD3<Float> {
        let high = max(c.x, c.y, c.z), low = min(c.x, c.y, c.z)
        guard high > low else { return .zero }
        // The middle component scales with the range; the highest becomes s, the lowest 0.
        return (c - SIMD3(repeating: low)) * s / (high - low)
    }
}
