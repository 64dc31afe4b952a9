#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turns an image into the bytes the disk cache stores, and those bytes back into an image.
///
/// ``ImageCache`` uses ``DefaultCacheSerializer`` unless told otherwise; use
/// ``FormatIndicatedCacheSerializer`` to store every image in one format.
///
/// A serializer has two shapes of each method: Kingfisher's, which answer `nil` on failure
/// (``data(with:original:)``, ``image(with:options:)``), and Alcedo's, which throw a typed
/// error saying why (``serializedData(with:original:)``, ``deserializedImage(with:options:)``;
/// the cache calls these). Each has a default that calls the other, so a serializer
/// implements at least one of each pair, and code written for Kingfisher, such as a serializer
/// forwarding to `DefaultCacheSerializer.default.data(with:original:)`, compiles unchanged.
public protocol CacheSerializer: Sendable {
    /// Kingfisher's shape: the bytes to store for `image`, or `nil` when it cannot be
    /// serialized (reported as ``CacheErrorReason/cannotSerializeImage(image:original:serializer:)``).
    /// - Parameters:
    ///   - image: the image to store.
    ///   - original: the bytes `image` was decoded from, when it is exactly what they decode
    ///     to (``ImageCache`` passes `nil` for processed variants).
    func data(with image: AlcedoImage, original: Data?) -> Data?

    /// Kingfisher's shape: the image stored as `data`, or `nil` when it does not decode.
    /// `options` are the request's options.
    func image(with data: Data, options: AlcedoParsedOptionsInfo) -> AlcedoImage?

    /// Alcedo's shape of ``data(with:original:)``: the bytes to store for `image`, or the error
    /// that says why there are none.
    func serializedData(with image: AlcedoImage, original: Data?) throws(AlcedoError) -> Data

    /// Alcedo's shape of ``image(with:options:)``: the image stored as `data`, or the error
    /// that says why it does not decode.
    func deserializedImage(with data: Data, options: DecodingOptions) throws(AlcedoError) -> AlcedoImage

    /// Whether ``data(with:original:)`` stores the original bytes when it gets them
    /// (Kingfisher's `originalDataUsed`). Default `false`.
    var originalDataUsed: Bool { get }

    /// The format ``data(with:original:)`` writes for an image decoded from `source`
    /// (`animated`: it has more than one frame), when the serializer knows it; a
    /// ``MemoryBudget`` costs the encoding by it. Default `nil`: not known, costed as WebP.
    func encodedFormat(forSource source: ImageFormat, animated: Bool) -> ImageFormat?
}

extension CacheSerializer {
    /// `nil`: the format written is not known in advance.
    public func encodedFormat(forSource source: ImageFormat, animated: Bool) -> ImageFormat? { nil }

    /// `false`, as in Kingfisher.
    public var originalDataUsed: Bool { false }

    /// Kingfisher's shape, for serializers that implement Alcedo's: `nil` when it throws.
    public func data(with image: AlcedoImage, original: Data?) -> Data? {
        do throws(AlcedoError) {
            return try serializedData(with: image, original: original)
        } catch {
            return nil
        }
    }

    /// Kingfisher's shape, for serializers that implement Alcedo's: `nil` when it throws.
    public func image(with data: Data, options: AlcedoParsedOptionsInfo) -> AlcedoImage? {
        try? deserializedImage(with: data, options: options.decodingOptions)
    }

    /// Alcedo's shape, for serializers that implement Kingfisher's: throws
    /// ``CacheErrorReason/cannotSerializeImage(image:original:serializer:)`` for `nil`.
    public func serializedData(with image: AlcedoImage, original: Data?) throws(AlcedoError) -> Data {
        guard let bytes = data(with: image, original: original) else {
            throw .cacheError(reason: .cannotSerializeImage(image: image, original: original, serializer: self))
        }
        return bytes
    }

    /// Alcedo's shape, for serializers that implement Kingfisher's: the request's options are
    /// those of a plain request with these decoding options; `nil` becomes
    /// ``ProcessorErrorReason/processingFailed(processor:item:)`` with the bytes, as
    /// Kingfisher reports data that does not decode.
    public func deserializedImage(with data: Data, options: DecodingOptions) throws(AlcedoError) -> AlcedoImage {
        var parsed = AlcedoParsedOptionsInfo(nil)
        parsed.onlyLoadFirstFrame = options.firstFrameOnly
        parsed.decodingLimits = options.limits
        parsed.colorManagement = options.colorManagement
        guard let image = image(with: data, options: parsed) else {
            throw .processorError(reason: .processingFailed(processor: DefaultImageProcessor.default, item: .data(data)))
        }
        return image
    }
}
