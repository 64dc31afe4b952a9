#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a processor written in Kingfisher's shape is given: an image, or the bytes of one.
///
/// Alcedo decodes with its own codecs before the processors run, so the pipeline gives
/// ``image(_:)``; ``data(_:)`` reaches a processor only when code calls
/// ``ImageProcessor/process(item:options:)`` with bytes itself.
public enum ImageProcessItem: Sendable, Equatable, CustomStringConvertible {
    /// A decoded image.
    case image(AlcedoImage)
    /// Encoded image bytes.
    case data(Data)

    /// One line: `image 30x20`, `data (1234 bytes)`, `data (empty)`, or for bytes that are not an image
    /// `data (5 bytes, not an image: "<html")` (text when they are text, hex otherwise);
    /// never the pixels or all the bytes.
    public var description: String {
        switch self {
        case .image(let image): return "image \(image.width)x\(image.height)"
        case .data(let data):
            if data.isEmpty { return "data (empty)" }
            guard ImageFormat.sniff(data) == .unknown else { return "data (\(data.count) bytes)" }
            return "data (\(data.count) bytes, not an image: \(ImageDownloader.excerpt(of: data)))"
        }
    }
}

/// The options of the request a processor runs for, while it runs, for the processors that
/// read them in Kingfisher's `process(item:options:)`.
enum ProcessingContext {
    @TaskLocal static var options: AlcedoParsedOptionsInfo?
}

extension ImageProcessor {
    /// Kingfisher's shape, for processors that implement only ``process(_:)``: runs it on the
    /// image (decoding `.data` first with the request's decoding options), and gives `nil` when
    /// it throws.
    public func process(item: ImageProcessItem, options: AlcedoParsedOptionsInfo) -> AlcedoImage? {
        switch item {
        case .image(let image):
            return try? process(image)
        case .data(let data):
            guard let image = try? ImageCodecRegistry.shared.decode(data, options: options.decodingOptions) else { return nil }
            return try? process(image)
        }
    }

    /// Alcedo's shape, for processors that implement only Kingfisher's
    /// ``process(item:options:)``: calls it with the image and the options of the request being
    /// processed, and throws ``ProcessorErrorReason/processingFailed(processor:item:)`` when it
    /// gives `nil`.
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        let options = ProcessingContext.options ?? AlcedoParsedOptionsInfo(nil)
        guard let result = process(item: .image(image), options: options) else {
            throw .processorError(reason: .processingFailed(processor: self, item: .image(image)))
        }
        return result
    }
}
