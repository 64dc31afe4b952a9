/// Mixes a colour into the image, keeping the image's alpha (Kingfisher's overlay).
///
/// `fraction` is, as in Kingfisher, how much of the **image** is kept: 1 leaves the image as
/// it is, 0 paints it the overlay colour (inside its own alpha), 0.5 (the default) is half
/// and half. Per channel, with the overlay colour's alpha `a` (0...1) scaling its share:
///
///     t = (1 - fraction) * a
///     result = image * (1 - t) + overlay * t,    alpha = image alpha
///
/// Identifier: `com.alcedo.overlay(<colour>,<fraction>)`, for example `com.alcedo.overlay(#FF0000FF,0.5)`.
public struct OverlayImageProcessor: ImageProcessor {
    /// The colour mixed in.
    public let overlay: RGBA
    /// How much of the image is kept, `0...1`: 1 is the image unchanged, 0 is the solid colour.
    public let fraction: Double

    /// Creates an overlay processor.
    /// - Parameters:
    ///   - overlay: the colour to mix in; its alpha scales its share.
    ///   - fraction: how much of the image is kept, in `0...1` (default 0.5): 1 is the image
    ///     unchanged, 0 the solid colour.
    public init(overlay: RGBA, fraction: Double = 0.5) {
        self.overlay = overlay
        self.fraction = fraction
    }

    /// Names the processor and its parameters: `com.alcedo.overlay(<colour>,<fraction>)`.
    public var identifier: String {
        ProcessorSupport.identifier("overlay", [ProcessorSupport.color(overlay), ProcessorSupport.number(fraction)])
    }

    /// Mixes the colour into every frame. Throws `.invalidParameter` for a fraction outside `0...1`.
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        try ProcessorSupport.requireFraction(fraction, "fraction", in: "OverlayImageProcessor")
        let share = (1 - fraction) * Double(overlay.alpha) / 255
        guard share > 0 else { return image }
        // The result of each channel depends only on that channel's value: one table each.
        func table(_ color: UInt8) -> [UInt8] {
            (0...255).map { PixelOps.unitByte((Double($0) * (1 - share) + Double(color) * share) / 255) }
        }
        let red = table(overlay.red), green = table(overlay.green), blue = table(overlay.blue)
        return image.mappingFrames { PixelOps.mapChannels($0, red: red, green: green, blue: blue) }
    }
}
