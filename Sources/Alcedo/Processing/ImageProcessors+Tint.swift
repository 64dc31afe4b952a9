/// Composites a colour over the whole image (Kingfisher's tint: a constant colour drawn
/// source-over on top of the image and cropped to it).
///
/// In premultiplied terms, with tint `T` and image `I`: `result = T + I * (1 - T.alpha)`. A
/// tint with alpha 0 leaves the image unchanged; an opaque tint gives a solid rectangle of the
/// tint colour; transparent parts of the image take the tint at its own alpha.
///
/// Identifier: `com.alcedo.tint(<colour>)`, for example `com.alcedo.tint(#FF000080)`.
public struct TintImageProcessor: ImageProcessor {
    /// The colour composited over the image; its alpha sets the strength.
    public let tint: RGBA

    /// Creates a tint processor.
    /// - Parameter tint: the colour composited over the image; alpha 0 changes nothing.
    public init(tint: RGBA) {
        self.tint = tint
    }

    /// Names the processor and its parameters: `com.alcedo.tint(<colour>)`.
    public var identifier: String {
        ProcessorSupport.identifier("tint", [ProcessorSupport.color(tint)])
    }

    /// Tints every frame. Takes no parameter that can be out of range.
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        guard tint.alpha > 0 else { return image }
        let paint = tint.premultiplied
        return image.mappingFrames { pixels in
            PixelOps.mapPixels(separableWhenOpaque: pixels) { s, d in
                PixelOps.storePremultiplied(paint.over(PixelOps.premultiplied(s)), to: d)
            }
        }
    }
}
