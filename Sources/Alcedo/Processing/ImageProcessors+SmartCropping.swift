/// Cuts a rectangle of a given size out of the image where the image is most interesting:
/// content-aware cropping (``SmartCrop``: edge energy, saturated colour and skin tones scored
/// on a copy of at most 256 px a side), centred when nothing stands out.
///
/// A side larger than the image is limited to the image, as ``CroppingImageProcessor`` does.
/// Every frame of an animation is cut at the place chosen on the first frame.
///
/// Identifier: `com.alcedo.smartCropping(<W>x<H>)`, for example `com.alcedo.smartCropping(300x200)`.
public struct SmartCroppingImageProcessor: ImageProcessor {
    /// The size to cut out, in pixels.
    public let size: PixelSize

    /// Creates the processor; both sides of `size` must be positive.
    public init(size: PixelSize) {
        self.size = size
    }

    /// Names the processor and its size: `com.alcedo.smartCropping(<W>x<H>)`.
    public var identifier: String {
        ProcessorSupport.identifier("smartCropping", [ProcessorSupport.size(size)])
    }

    /// The size ``process(_:)`` gives: ``size``, each side at most the image's.
    public func outputSize(for size: PixelSize) -> PixelSize { CroppingImageProcessor(size: self.size).outputSize(for: size) }

    /// Crops every frame. Throws `.invalidParameter` for a size with a side <= 0.
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        try ProcessorSupport.requirePositive(size, "size", in: "SmartCroppingImageProcessor")
        let crop = PixelSize(width: min(size.width, image.width), height: min(size.height, image.height))
        let origin = SmartCrop.origin(of: crop, in: image)
        // The origin as the cropping processor's anchor (it rounds `anchor * free` back to it).
        let freeX = image.width - crop.width, freeY = image.height - crop.height
        let anchor = CroppingImageProcessor.Anchor(x: freeX > 0 ? Double(origin.x) / Double(freeX) : 0.5,
                                                   y: freeY > 0 ? Double(origin.y) / Double(freeY) : 0.5)
        return try CroppingImageProcessor(size: crop, anchor: anchor).process(image)
    }
}
