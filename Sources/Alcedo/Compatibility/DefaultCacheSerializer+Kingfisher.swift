import Foundation

// Kingfisher's name for the default serializer's encoding quality.
extension DefaultCacheSerializer {
    /// The quality of the JPEG, WebP and other lossy encodings the serializer makes, from 0 to 1
    /// (Kingfisher's `compressionQuality`): ``encodingOptions``' `quality` over 100. Default 0.9
    /// (quality 90; Kingfisher's default is 1). Setting it sets that quality to the value times
    /// 100, rounded, held between 1 and 100, the scale of
    /// `image.kf.jpegRepresentation(compressionQuality:)`. It matters only when the image is
    /// encoded: with ``preferCacheOriginalData`` (the default) and the original bytes given,
    /// they are stored as they are.
    public var compressionQuality: CGFloat {
        get { CGFloat(encodingOptions.quality) / 100 }
        set {
            let value = newValue.isFinite ? Double(newValue) : 1
            encodingOptions.quality = min(100, max(1, Int((value * 100).rounded())))
        }
    }
}
