/// Cuts a rectangle of a given size out of the image, placed by an anchor.
///
/// The anchor is a unit point: (0, 0) keeps the top-left part, (0.5, 0.5) the centre, (1, 1)
/// the bottom-right. For an image of 100x100 and a size of 20x20 the crop rectangle is at
/// (0, 0), (40, 40) and (80, 80) respectively: its origin is `anchor * (image size - crop size)`,
/// rounded to whole pixels. A crop size larger than the image is limited to the image on that
/// side (as Kingfisher does), so the result is never larger than the input.
///
/// Identifier: `com.alcedo.cropping(<W>x<H>,<anchor x>,<anchor y>)`, for example
/// `com.alcedo.cropping(20x20,0.5,0.5)`.
public struct CroppingImageProcessor: ImageProcessor {
    /// Where the crop rectangle sits, as a fraction of the free space on each axis.
    public struct Anchor: Sendable, Hashable {
        /// 0 at the left, 1 at the right.
        public var x: Double
        /// 0 at the top, 1 at the bottom.
        public var y: Double

        /// Creates an anchor; both coordinates must be in `0...1`.
        public init(x: Double, y: Double) {
            self.x = x
            self.y = y
        }

        /// (0.5, 0.5): the centre.
        public static let center = Anchor(x: 0.5, y: 0.5)
        /// (0, 0): the top-left corner.
        public static let topLeft = Anchor(x: 0, y: 0)
        /// (1, 0): the top-right corner.
        public static let topRight = Anchor(x: 1, y: 0)
        /// (0, 1): the bottom-left corner.
        public static let bottomLeft = Anchor(x: 0, y: 1)
        /// (1, 1): the bottom-right corner.
        public static let bottomRight = Anchor(x: 1, y: 1)
    }

    /// The size to cut out, in pixels.
    public let size: PixelSize
    /// Where the crop rectangle sits (default ``Anchor/center``).
    public let anchor: Anchor

    /// Creates a cropping processor.
    /// - Parameters:
    ///   - size: the size of the result; both sides must be positive. A side larger than the
    ///     image is limited to the image.
    ///   - anchor: where the rectangle sits, each coordinate in `0...1` (default `.center`).
    public init(size: PixelSize, anchor: Anchor = .center) {
        self.size = size
        self.anchor = anchor
    }

    /// Names the processor and its parameters: `com.alcedo.cropping(<W>x<H>,<anchor x>,<anchor y>)`.
    public var identifier: String {
        ProcessorSupport.identifier("cropping", [
            ProcessorSupport.size(size), ProcessorSupport.number(anchor.x), ProcessorSupport.number(anchor.y),
        ])
    }

    /// The rectangle (origin and size, in pixels) this processor cuts out of an image of `imageSize`.
    public func cropRect(for imageSize: PixelSize) -> (x: Int, y: Int, size: PixelSize) {
        let width = min(size.width, imageSize.width)
        let height = min(size.height, imageSize.height)
        let x = Int((anchor.x * Double(imageSize.width - width)).rounded())
        let y = Int((anchor.y * Double(imageSize.height - height)).rounded())
        return (x, y, PixelSize(width: width, height: height))
    }

    /// The size ``process(_:)`` gives: ``size``, each side at most the image's.
    public func outputSize(for size: PixelSize) -> PixelSize { cropRect(for: size).size }

    /// Crops every frame. Throws `.invalidParameter` for a size with a side <= 0 or an anchor
    /// coordinate outside `0...1`.
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        try validate()
        let rect = cropRect(for: image.pixelSize)
        if rect.size == image.pixelSize { return image }
        return image.cut(rect)
    }

    /// Checks the parameters as ``process(_:)`` does.
    func validate() throws(AlcedoError) {
        try ProcessorSupport.requirePositive(size, "size", in: "CroppingImageProcessor")
        try ProcessorSupport.requireFraction(anchor.x, "anchor.x", in: "CroppingImageProcessor")
        try ProcessorSupport.requireFraction(anchor.y, "anchor.y", in: "CroppingImageProcessor")
    }
}
