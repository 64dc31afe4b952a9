import Foundation

// Kingfisher's `kf` helpers on images and data (`image.kf.pngRepresentation()`,
// `image.kf.resize(to:for:)`, `data.kf.imageFormat`…), made of Alcedo's encoders and
// processors. As in Kingfisher, a drawing helper that cannot work returns the image unchanged,
// and an encoder that fails returns `nil`. Sizes are in points, as UIKit's: pixels divided by
// the image's scale (`AlcedoImage.pointScale`).

extension AlcedoImage {
    /// The size in points (UIKit's `UIImage.size`): ``pixelSize`` divided by ``scale``.
    /// An image decoded at scale 3 from 600x450 pixels is 200x150 points.
    public var size: CGSize {
        CGSize(width: CGFloat(Double(width) / pointScale), height: CGFloat(Double(height) / pointScale))
    }

    /// Pixels per point (UIKit's `UIImage.scale`; ``pointScale``, default 1).
    public var scale: CGFloat { CGFloat(pointScale) }

    /// A one-pixel transparent image, for code that makes a placeholder with UIKit's `UIImage()`
    /// (which is empty: 0x0 points; Alcedo's images have at least one pixel).
    public init() {
        self.init(width: 1, height: 1, pixels: [0, 0, 0, 0])
    }

    /// The image `data` decodes to with the shared codecs, at scale 1, or `nil` when it does
    /// not decode (UIKit's `UIImage(data:)`).
    public init?(data: Data) {
        self.init(data: data, scale: 1)
    }

    /// The image `data` decodes to with the shared codecs, at `scale` points per pixel, or
    /// `nil` when it does not decode (UIKit's `UIImage(data:scale:)`).
    public init?(data: Data, scale: CGFloat) {
        guard let image = try? ImageCodecRegistry.shared.decode(data) else { return nil }
        self = image.withPointScale(Double(scale))
    }

    /// Kingfisher's namespace for the image helpers (see ``KingfisherWrapper``).
    public var kf: KingfisherWrapper<AlcedoImage> { KingfisherWrapper(self) }
}

extension Data {
    /// Kingfisher's namespace for `data.kf.imageFormat`.
    public var kf: KingfisherWrapper<Data> { KingfisherWrapper(self) }
}

extension KingfisherWrapper where Base == Data {
    /// The format the bytes start with (``ImageFormat/sniff(_:)-(Data)``): `.JPEG`, `.PNG`,
    /// `.GIF`, Alcedo's other formats, or `.unknown`.
    public var imageFormat: ImageFormat { ImageFormat.sniff(base) }
}

/// Kingfisher's options for making an image from data: ``KingfisherWrapper/image(data:options:)``.
public struct ImageCreatingOptions: Sendable {
    /// The point scale given to the image (default 1).
    public let scale: CGFloat
    /// The duration of an animation (default 0: the file's own timing).
    public let duration: TimeInterval
    /// Decode every frame at once (default `false`; Alcedo always does).
    public let preloadAll: Bool
    /// Keep only the first frame of an animation (default `false`).
    public let onlyFirstFrame: Bool

    /// Creates the options; the defaults are Kingfisher's.
    public init(scale: CGFloat = 1.0, duration: TimeInterval = 0.0, preloadAll: Bool = false, onlyFirstFrame: Bool = false) {
        self.scale = scale
        self.duration = duration
        self.preloadAll = preloadAll
        self.onlyFirstFrame = onlyFirstFrame
    }
}

extension KingfisherWrapper where Base == AlcedoImage {
    /// The size in points: pixels divided by ``scale``.
    public var size: CGSize { base.size }

    /// Pixels per point (``AlcedoImage/pointScale``).
    public var scale: CGFloat { base.scale }

    /// The number of frames of an animated image, `nil` for a still one.
    public var imageFrameCount: Int? { base.isAnimated ? base.frames.count : nil }

    /// The image itself: Alcedo's pixels are already upright (orientation is applied when decoding).
    public var normalized: KFCrossPlatformImage { base }

    /// The frames of an animated image, each as an image; `nil` for a still one.
    public var images: [KFCrossPlatformImage]? {
        guard base.isAnimated else { return nil }
        return base.frames.map {
            AlcedoImage(width: base.width, height: base.height, frames: [$0], colorMetadata: base.colorMetadata)
                .withPointScale(base.pointScale)
        }
    }

    /// The length of one loop of an animated image in seconds; `.infinity` for a still GIF (as
    /// Kingfisher), 0 for another still image.
    public var duration: TimeInterval {
        if base.isAnimated { return base.frames.reduce(0) { $0 + $1.duration } }
        return base.sourceFormat == .gif ? .infinity : 0
    }

    /// The image itself: Alcedo's images are always decoded.
    public var decoded: KFCrossPlatformImage { base }

    /// The image redrawn at `scale`, as Kingfisher's: the same size in points, `scale` pixels
    /// per point (the pixels are resampled when the scale changes).
    public func decoded(scale: CGFloat) -> KFCrossPlatformImage {
        let newScale = Double(scale) > 0 && Double(scale).isFinite ? Double(scale) : 1
        guard newScale != base.pointScale else { return base }
        let target = PixelSize(width: max(1, Int((Double(base.width) / base.pointScale * newScale).rounded())),
                               height: max(1, Int((Double(base.height) / base.pointScale * newScale).rounded())))
        return base.resized(to: target).withPointScale(newScale)
    }

    /// The same pixels at `scale` points per pixel: the size in points changes, the pixels do not.
    public func scaled(to scale: CGFloat) -> KFCrossPlatformImage {
        guard scale != base.scale else { return base }
        return base.withPointScale(Double(scale))
    }

    /// The image encoded as PNG, or `nil` when it cannot be.
    public func pngRepresentation() -> Data? { try? ImageCodecRegistry.shared.encode(base, as: .png) }

    /// The image encoded as JPEG at `compressionQuality` (0 to 1), or `nil` when it cannot be.
    public func jpegRepresentation(compressionQuality: CGFloat) -> Data? {
        data(format: .jpeg, compressionQuality: compressionQuality)
    }

    /// The image encoded as GIF (every frame), or `nil` when it cannot be.
    public func gifRepresentation() -> Data? { try? ImageCodecRegistry.shared.encode(base, as: .gif) }

    /// The image encoded in `format` (`.unknown`: PNG), with `compressionQuality` (0 to 1,
    /// default 1) for the lossy formats; `nil` when it cannot be.
    public func data(format: ImageFormat, compressionQuality: CGFloat = 1.0) -> Data? {
        let quality = Int((min(max(Double(compressionQuality), 0), 1) * 100).rounded())
        return try? ImageCodecRegistry.shared.encode(base, as: format == .unknown ? .png : format,
                                                     options: EncodingOptions(quality: max(quality, 1)))
    }

    /// The image resized to exactly `size` (in points: pixels are `size` times ``scale``).
    public func resize(to size: CGSize) -> KFCrossPlatformImage {
        apply(ResizingImageProcessor(referenceSize: inPixels(size), mode: .none))
    }

    /// The image resized to `targetSize` with `contentMode`: `.none` (exactly that size),
    /// `.aspectFit` (inside it) or `.aspectFill` (covering it).
    public func resize(to targetSize: CGSize, for contentMode: ResizingImageProcessor.Mode) -> KFCrossPlatformImage {
        apply(ResizingImageProcessor(referenceSize: inPixels(targetSize), mode: contentMode))
    }

    /// The part of the image of `size` placed at the unit point `anchor` ((0.5, 0.5): the centre).
    public func crop(to size: CGSize, anchorOn anchor: CGPoint) -> KFCrossPlatformImage {
        apply(CroppingImageProcessor(size: inPixels(size), anchor: anchor))
    }

    /// The image blurred with `radius`.
    public func blurred(withRadius radius: CGFloat) -> KFCrossPlatformImage {
        apply(BlurImageProcessor(blurRadius: Double(radius)))
    }

    /// The image with `color` laid over it at `fraction` (0 to 1).
    public func overlaying(with color: KFCrossPlatformColor, fraction: CGFloat) -> KFCrossPlatformImage {
        apply(OverlayImageProcessor(overlay: color, fraction: fraction))
    }

    /// The image tinted with `color`.
    public func tinted(with color: KFCrossPlatformColor) -> KFCrossPlatformImage {
        apply(TintImageProcessor(tint: color))
    }

    /// The image with its brightness, contrast, saturation and exposure changed.
    public func adjusted(brightness: CGFloat, contrast: CGFloat, saturation: CGFloat, inputEV: CGFloat) -> KFCrossPlatformImage {
        apply(ColorControlsProcessor(brightness: Double(brightness), contrast: Double(contrast),
                                     saturation: Double(saturation), inputEV: Double(inputEV)))
    }

    /// The image with rounded corners of `radius`, fitted to `size`, outside the outline
    /// transparent or `backgroundColor` (default `nil`).
    public func image(withRoundRadius radius: CGFloat, fit size: CGSize, roundingCorners corners: RectCorner = .all,
                      backgroundColor: KFCrossPlatformColor? = nil) -> KFCrossPlatformImage {
        apply(RoundCornerImageProcessor(cornerRadius: Double(radius), targetSize: PixelSize(inPixels(size)), roundingCorners: corners,
                                        backgroundColor: backgroundColor?.pixel))
    }

    /// The image with `border` drawn inside its edge.
    public func addingBorder(_ border: Border) -> KFCrossPlatformImage {
        apply(BorderImageProcessor(border: border))
    }

    /// An animated image decoded from `data` with all its frames (Kingfisher's
    /// `animatedImage(data:options:)`): the same as ``image(data:options:)``, since Alcedo's
    /// images always keep their frames.
    public static func animatedImage(data: Data, options: ImageCreatingOptions) -> KFCrossPlatformImage? {
        image(data: data, options: options)
    }

    /// The image's memory cost in bytes, as the memory cache counts it (Kingfisher's `kf.cost`):
    /// its decoded pixels, every frame.
    public var cost: Int { base.cacheCost }

    /// An image decoded from `data` at `options.scale` (the first frame only with
    /// `options.onlyFirstFrame`), or `nil`.
    public static func image(data: Data, options: ImageCreatingOptions) -> KFCrossPlatformImage? {
        guard let image = try? ImageCodecRegistry.shared.decode(data) else { return nil }
        guard options.onlyFirstFrame, image.isAnimated else { return image.withPointScale(Double(options.scale)) }
        return AlcedoImage(width: image.width, height: image.height, frames: [image.frames[0]],
                           sourceFormat: image.sourceFormat, colorMetadata: image.colorMetadata)
            .withPointScale(Double(options.scale))
    }

    /// An image decoded from `data` to fit `pointSize` at `scale` (pixels: `pointSize` times
    /// `scale`, by ``DownsamplingImageProcessor``), or `nil`.
    public static func downsampledImage(data: Data, to pointSize: CGSize, scale: CGFloat) -> KFCrossPlatformImage? {
        let pixels = CGSize(width: pointSize.width * scale, height: pointSize.height * scale)
        return (try? DownsamplingImageProcessor(size: pixels).process(ImageCodecRegistry.shared.decode(data)))?
            .withPointScale(Double(scale))
    }

    /// `size` in points as pixels at the image's scale.
    private func inPixels(_ size: CGSize) -> CGSize {
        CGSize(width: size.width * base.scale, height: size.height * base.scale)
    }

    private func apply(_ processor: some ImageProcessor) -> KFCrossPlatformImage {
        guard let result = try? processor.process(base) else { return base }
        return result.withPointScale(base.pointScale)
    }
}
