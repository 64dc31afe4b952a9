/// Resizes the image to a reference size: exactly, or keeping the aspect ratio so that it fits
/// inside or covers the size (Kingfisher's `ResizingImageProcessor`).
///
/// Resampling is ``Resampler``'s (box pre-shrink, then Lanczos3 on premultiplied alpha). Like
/// Kingfisher's, this processor **enlarges** when the reference size is larger than the image;
/// use ``DownsamplingImageProcessor`` to only ever shrink. With `.aspectFill` nothing is cut
/// off, so one side may exceed the reference size: append a ``CroppingImageProcessor`` for an
/// exact size.
///
/// For a 100x200 image and a reference size of 100x100: `.none` gives 100x100, `.aspectFit`
/// 50x100, `.aspectFill` 100x200.
///
/// Identifier: `com.alcedo.resizing(<W>x<H>,<none|fit|fill>)`, for example `com.alcedo.resizing(100x100,fit)`.
public struct ResizingImageProcessor: ImageProcessor {
    /// How the reference size is met.
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        /// Exactly the reference size; the aspect ratio is not kept.
        case none
        /// The largest size with the image's aspect ratio inside the reference size.
        case aspectFit = "fit"
        /// The smallest size with the image's aspect ratio covering the reference size.
        case aspectFill = "fill"
    }

    /// The size to resize to, in pixels.
    public let referenceSize: PixelSize
    /// How ``referenceSize`` is met (default `.none`: exactly).
    public let targetContentMode: Mode

    /// Creates a resizing processor.
    /// - Parameters:
    ///   - referenceSize: the size to resize to; both sides must be positive.
    ///   - mode: `.none` (the default) for exactly that size, `.aspectFit` to fit inside it,
    ///     `.aspectFill` to cover it, keeping the aspect ratio.
    public init(referenceSize: PixelSize, mode: Mode = .none) {
        self.referenceSize = referenceSize
        self.targetContentMode = mode
    }

    /// Names the processor and its parameters: `com.alcedo.resizing(<W>x<H>,<none|fit|fill>)`.
    public var identifier: String {
        ProcessorSupport.identifier("resizing", [ProcessorSupport.size(referenceSize), targetContentMode.rawValue])
    }

    /// The size an image of `size` comes out at (each side at least 1). An absurd reference
    /// size gives an absurd (but representable) size, which ``process(_:)`` then refuses.
    public func targetSize(for size: PixelSize) -> PixelSize {
        let sx = Double(referenceSize.width) / Double(size.width)
        let sy = Double(referenceSize.height) / Double(size.height)
        // The cap keeps the scaled sides far below Int.max, so converting them cannot trap.
        let cap = 1e9
        switch targetContentMode {
        case .none: return referenceSize
        case .aspectFit: return size.scaled(by: min(sx, sy, cap))
        case .aspectFill: return size.scaled(by: min(max(sx, sy), cap))
        }
    }

    /// The size ``process(_:)`` gives: ``targetSize(for:)``, enlarged when the reference size is
    /// larger (`size` itself for a reference size with a side <= 0, which is refused).
    public func outputSize(for size: PixelSize) -> PixelSize {
        referenceSize.width > 0 && referenceSize.height > 0 ? targetSize(for: size) : size
    }

    /// Resizes every frame. Throws `.invalidParameter` for a reference size with a side <= 0
    /// and `.outputTooLarge` when the result would be over the limits of ``DecodingLimits/default``
    /// (`.workingMemoryTooLarge` when resampling to it would need more than its working memory,
    /// as for 1x100,000,000).
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        try ProcessorSupport.requirePositive(referenceSize, "referenceSize", in: "ResizingImageProcessor")
        let target = targetSize(for: image.pixelSize)
        try ProcessorSupport.requireOutput(target, frameCount: image.frames.count, in: "ResizingImageProcessor")
        try ProcessorSupport.requireResampling(from: image.pixelSize, to: target, in: "ResizingImageProcessor")
        return image.resized(to: target)
    }

    /// ``process(_:)`` followed by `cropping`'s ``CroppingImageProcessor/process(_:)``, as
    /// `self |> cropping` runs them: the same pixels, but only those the crop keeps are made
    /// (``AlcedoImage/resized(to:cropping:)``), so the limits hold the crop, not the resized
    /// image (an `.aspectFill` of a panorama may be far larger than the crop it is cut to).
    func process(_ image: AlcedoImage, croppedBy cropping: CroppingImageProcessor) throws(AlcedoError) -> AlcedoImage {
        try ProcessorSupport.requirePositive(referenceSize, "referenceSize", in: "ResizingImageProcessor")
        try cropping.validate()
        let target = targetSize(for: image.pixelSize)
        let rect = cropping.cropRect(for: target)
        try ProcessorSupport.requireOutput(rect.size, frameCount: image.frames.count, in: "ResizingImageProcessor")
        try ProcessorSupport.requireResampling(from: image.pixelSize, to: target, window: rect.size, in: "ResizingImageProcessor")
        return image.resized(to: target, cropping: rect)
    }
}
