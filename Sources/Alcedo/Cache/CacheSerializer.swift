#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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

    /// Kingfisher's shape of ``data(with:original:)-(AlcedoImage,_)``: the bytes, or `nil`
    /// when the image cannot be serialized (reported as
    /// ``CacheErrorReason/cannotSerializeImage(image:original:serializer:)``).
    ///
    /// Implement either shape of each method; each has a default that calls the other, so a
    /// serializer must implement at least one of each pair.
    @_disfavoredOverload
    func data(with image: AlcedoImage, original: Data?) -> Data?

    /// Kingfisher's shape of ``image(with:options:)-(_,DecodingOptions)``: the image, or `nil`
    /// when `data` does not decode. `options` are the request's options.
    func image(with data: Data, options: AlcedoParsedOptionsInfo) -> AlcedoImage?

    /// The format ``data(with:original:)`` writes for an image decoded from `source`
    /// (`animated`: it has more than one frame), when the serializer knows it; a
    /// ``MemoryBudget`` costs the encoding by it. Default `nil`: not known, costed as WebP.
    func encodedFormat(forSource source: ImageFormat, animated: Bool) -> ImageFormat?
}

extension CacheSerializer {
    /// `nil`: the format written is not known in advance.
    public func encodedFormat(forSource source: ImageFormat, animated: Bool) -> ImageFormat? { nil }

    /// Kingfisher's shape, for serializers that implement Alcedo's: `nil` when it throws.
    @_disfavoredOverload
    public func data(with image: AlcedoImage, original: Data?) -> Data? {
        do throws(AlcedoError) {
            let data: Data = try data(with: image, original: original)
            return data
        } catch {
            return nil
        }
    }

    /// Kingfisher's shape, for serializers that implement Alcedo's: `nil` when it throws.
    public func image(with data: Data, options: AlcedoParsedOptionsInfo) -> AlcedoImage? {
        try? image(with: data, options: options.decodingOptions)
    }

    /// Alcedo's shape, for serializers that implement Kingfisher's: throws
    /// ``CacheErrorReason/cannotSerializeImage(image:original:serializer:)`` for `nil`.
    public func data(with image: AlcedoImage, original: Data?) throws(AlcedoError) -> Data {
        let kingfisherShape: (AlcedoImage, Data?) -> Data? = data(with:original:)
        guard let bytes = kingfisherShape(image, original) else {
            throw .cacheError(reason: .cannotSerializeImage(image: image, original: original, serializer: self))
        }
        return bytes
    }

    /// Alcedo's shape, for serializers that implement Kingfisher's: the request's options are
    /// those of a plain request with these decoding options; `nil` becomes
    /// ``ProcessorErrorReason/processingFailed(processor:item:)`` with the bytes, as
    /// Kingfisher reports data that does not decode.
    public func image(with data: Data, options: DecodingOptions) throws(AlcedoError) -> AlcedoImage {
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
