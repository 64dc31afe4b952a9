import Foundation

extension ImageFormat {
    /// Kingfisher's name of ``png``.
    public static let PNG = ImageFormat.png
    /// Kingfisher's name of ``jpeg``.
    public static let JPEG = ImageFormat.jpeg
    /// Kingfisher's name of ``gif``.
    public static let GIF = ImageFormat.gif
}

// The builder's calls in Kingfisher's shape.
extension KF.Builder {
    /// Stores images on disk in `format` (Kingfisher's `serialize(as:jpegCompressionQuality:)`):
    /// `KF.url(url).serialize(as: .PNG)`. `jpegCompressionQuality` (0 to 1, default `nil`:
    /// the encoder's default) applies to JPEG only.
    public func serialize(as format: ImageFormat, jpegCompressionQuality: CGFloat? = nil) -> KF.Builder {
        if format == .jpeg, let quality = jpegCompressionQuality {
            let percent = Int((min(max(quality, 0), 1) * 100).rounded())
            return serialize(by: FormatIndicatedCacheSerializer.jpeg(quality: max(percent, 1)))
        }
        return serialize(by: FormatIndicatedCacheSerializer(format: format))
    }

    /// Appends a ``TintImageProcessor`` with `color` (Kingfisher's `tint(color:)`).
    public func tint(color: AlcedoColor) -> KF.Builder { appendProcessor(TintImageProcessor(tint: color)) }

    /// Appends an ``OverlayImageProcessor`` (Kingfisher's `overlay(color:fraction:)`, default fraction 0.5).
    public func overlay(color: AlcedoColor, fraction: CGFloat = 0.5) -> KF.Builder {
        appendProcessor(OverlayImageProcessor(overlay: color, fraction: fraction))
    }

    /// Appends a ``BlurImageProcessor`` (Kingfisher's `blur(radius:)` with a `CGFloat`).
    @_disfavoredOverload
    public func blur(radius: CGFloat) -> KF.Builder { appendProcessor(BlurImageProcessor(blurRadius: Double(radius))) }
}

extension KF {
    /// Kingfisher's `KF.ImageResource`: ``ImageResource``, a URL with an explicit cache key.
    public typealias ImageResource = Alcedo.ImageResource
}
