/// Shrinks the image to fit inside a size, keeping its aspect ratio; never enlarges.
///
/// Its ``decodingTarget`` lets the decoder scale while decoding (JPEG DCT scaling, WebP scaled
/// decode) to the smallest size that still covers the target, which is much cheaper than
/// decoding at full size; ``process(_:)`` then resamples to the exact fitting size
/// (``AlcedoImage/resized(toFit:)``). An image already inside the size is returned as it is.
///
/// For a 4000x3000 photo and a size of 400x400 the result is 400x300.
///
/// Identifier: `com.alcedo.downsampling(<W>x<H>)`, for example `com.alcedo.downsampling(400x400)`.
public struct DownsamplingImageProcessor: ImageProcessor {
    /// The box the image is shrunk to fit in, in pixels.
    public let size: PixelSize

    /// Creates a downsampling processor.
    /// - Parameter size: the box to fit in; both sides must be positive. Written as
    ///   `.init(width:height:)`, the size is Kingfisher's `CGSize` form (`init(size: CGSize)`),
    ///   as in Kingfisher's code.
    @_disfavoredOverload
    public init(size: PixelSize) {
        self.size = size
    }

    /// Names the processor and its parameters: `com.alcedo.downsampling(<W>x<H>)`.
    public var identifier: String {
        ProcessorSupport.identifier("downsampling", [ProcessorSupport.size(size)])
    }

    /// `(size, .aspectFit)`: the decoder may scale while decoding to what still covers `size`.
    /// `nil` for a size with a side <= 0 (the image is then decoded in full and ``process(_:)``
    /// reports the error).
    public var decodingTarget: (size: PixelSize, mode: ContentMode)? {
        size.width > 0 && size.height > 0 ? (size, .aspectFit) : nil
    }

    /// The size ``process(_:)`` gives: `size` fitted inside ``size``, never enlarged.
    public func outputSize(for size: PixelSize) -> PixelSize {
        self.size.width > 0 && self.size.height > 0 ? size.fitting(in: self.size) : size
    }

    /// Shrinks every frame to fit inside ``size``. Throws `.invalidParameter` for a size with a side <= 0.
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        try ProcessorSupport.requirePositive(size, "size", in: "DownsamplingImageProcessor")
        return image.resized(toFit: size)
    }
}
