import Foundation

/// Turns an image into the bytes the disk cache stores, and those bytes back into an image.
///
/// ``ImageCache`` uses ``DefaultCacheSerializer`` unless told otherwise; use
/// ``FormatIndicatedCacheSerializer`` to store every image in one format.
public protocol CacheSerializer: Sendable {
    /// The bytes to store for `image`.
    /// - Parameters:
    ///   - image: the image to store.
    ///   - original: the bytes `image` was decoded from, when it is exactly what they decode
    ///     to (``ImageCache`` passes `nil` for processed variants).
    func data(with image: AlcedoImage, original: Data?) throws(AlcedoError) -> Data

    /// The image stored as `data`.
    func image(with data: Data, options: DecodingOptions) throws(AlcedoError) -> AlcedoImage

    /// The format ``data(with:original:)`` writes for an image decoded from `source`
    /// (`animated`: it has more than one frame), when the serializer knows it; a
    /// ``MemoryBudget`` costs the encoding by it. Default `nil`: not known, costed as WebP.
    func encodedFormat(forSource source: ImageFormat, animated: Bool) -> ImageFormat?
}

extension CacheSerializer {
    /// `nil`: the format written is not known in advance.
    public func encodedFormat(forSource source: ImageFormat, animated: Bool) -> ImageFormat? { nil }
}
