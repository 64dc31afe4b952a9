/// Turns the image into greys: Kingfisher's black-and-white effect, which is
/// ``ColorControlsProcessor`` with brightness 0, contrast 1, saturation 0 and an exposure of
/// +0.7 EV (so the result is a little lighter than the plain Rec. 709 luma).
///
/// Every pixel comes out with red == green == blue; alpha is kept.
///
/// Identifier: `com.alcedo.blackwhite`.
public struct BlackWhiteProcessor: ImageProcessor {
    /// The colour controls this processor applies.
    public static let colorControls = ColorControlsProcessor(brightness: 0, contrast: 1, saturation: 0, inputEV: 0.7)

    /// Creates a black-and-white processor.
    public init() {}

    /// Names the processor and its parameters: `com.alcedo.blackwhite`.
    public var identifier: String { ProcessorSupport.identifier("blackwhite") }

    /// Turns every frame grey.
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        try Self.colorControls.process(image)
    }
}
