import Alcedo
import Foundation

/// How a result is encoded for the response: the format asked for (or the automatic choice),
/// the quality, the JPEG background and the `max_bytes` bound.
struct ResponseEncoding: Sendable, Hashable {
    /// The format in the URL, `nil` for the automatic choice.
    var requested: ImageFormat?
    /// Whether the automatic choice may pick WebP (the client accepts it).
    var acceptsWebP: Bool
    var quality: Int
    var background: RGBA?
    var maxBytes: Int

    /// The output format for an image whose source was `source`.
    func format(source: ImageFormat) -> ImageFormat {
        ImageService.outputFormat(requested: requested, source: source, acceptsWebP: acceptsWebP)
    }

    /// Part of the variant's cache key: everything that changes the response's bytes.
    var identifier: String {
        let format = requested?.rawValue ?? (acceptsWebP ? "auto+webp" : "auto")
        let background = background.map { "\($0.red).\($0.green).\($0.blue)" } ?? "-"
        return "\(format),q\(quality),bg\(background),mb\(maxBytes)"
    }
}

/// The imgproxy processing plus the response's encoding, as the ImageManager's processor: its
/// identifier names the encoding too, so the variant the caches keep (on disk and in a shared
/// tier) is the response's very bytes, written by ``ResponseSerializer``, and a hit is sent
/// without encoding again.
struct ServedVariantProcessor: ImageProcessor {
    let processing: ImgproxyProcessor
    let encoding: ResponseEncoding

    var identifier: String { "\(processing.identifier)|\(encoding.identifier)" }
    var decodingTarget: (size: PixelSize, mode: ContentMode)? { processing.decodingTarget }

    func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        try processing.process(image)
    }
}

/// Stores a served variant as the response's bytes: encoded as ``ResponseEncoding`` says
/// (flattened for JPEG, quality lowered for `max_bytes`), from the processed image's source format.
struct ResponseSerializer: CacheSerializer {
    let encoding: ResponseEncoding

    func data(with image: AlcedoImage, original: Data?) throws(AlcedoError) -> Data {
        try ImageService.encode(image, as: encoding.format(source: image.sourceFormat), quality: encoding.quality,
                                background: encoding.background, maxBytes: encoding.maxBytes)
    }

    func image(with data: Data, options: DecodingOptions) throws(AlcedoError) -> AlcedoImage {
        try ImageCodecRegistry.shared.decode(data, options: options)
    }
}
