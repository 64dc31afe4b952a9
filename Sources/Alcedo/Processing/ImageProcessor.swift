#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turns one image into another: resize, crop, round corners, blur…
///
/// A processor's ``identifier`` names it and its parameters; caches store a processed image
/// under `key@identifier`, so two processors with the same identifier must give the same
/// result. Compose processors with ``|>(_:_:)``: the identifiers are joined, so the cache key
/// changes with the chain. Processors run on all frames of an animated image.
public protocol ImageProcessor: Sendable {
    /// A string that names the processor and every parameter that changes its output.
    var identifier: String { get }

    /// A size the processor will shrink the image to, letting the decoder scale while decoding
    /// (JPEG DCT scaling, WebP scaled decode). Default `nil`: decode at full size.
    var decodingTarget: (size: PixelSize, mode: ContentMode)? { get }

    /// The size of this processor's result for an input of `size`, as ``process(_:)`` makes it,
    /// known before any pixel is decoded: a memory budget reserves for this result
    /// (``WorkingSetEstimate``, through ``DecodingOptions/processedSize``).
    ///
    /// Default: `size` fitted inside (`.aspectFit`) or covering (`.aspectFill`) the
    /// ``decodingTarget`` without enlarging it, as that target promises; `size` itself without a
    /// target. A processor that enlarges, crops or extends says so here.
    func outputSize(for size: PixelSize) -> PixelSize

    /// Bytes of the images this processor holds at once besides its input and its result, for
    /// an input of `size` (one frame): a rotated, flipped, trimmed or cropped copy made before
    /// the resize, for example. A memory budget reserves them too (``WorkingSetEstimate``,
    /// through ``DecodingOptions/processedSize``). The resampler's own rows are counted
    /// apart and belong not here.
    ///
    /// Default 0: the processor makes its result from its input directly.
    func intermediateBytes(for size: PixelSize) -> Int

    /// Processes `image`. Failures are ``AlcedoError/processorError(reason:)``.
    ///
    /// Implement this or Kingfisher's ``process(item:options:)``; each has a default that
    /// calls the other, so a processor must implement at least one.
    func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage

    /// Kingfisher's shape: the processed image, or `nil` when processing fails (reported as
    /// ``ProcessorErrorReason/processingFailed(processor:item:)``). `options` are the options
    /// of the request being processed. The pipeline gives `.image`: Alcedo decodes first.
    func process(item: ImageProcessItem, options: AlcedoParsedOptionsInfo) -> AlcedoImage?
}

extension ImageProcessor {
    public var decodingTarget: (size: PixelSize, mode: ContentMode)? { nil }

    public func outputSize(for size: PixelSize) -> PixelSize {
        guard let target = decodingTarget, target.size.width > 0, target.size.height > 0 else { return size }
        return target.mode == .aspectFit ? size.fitting(in: target.size) : size.filling(target.size)
    }

    public func intermediateBytes(for size: PixelSize) -> Int { 0 }

    /// A processor that runs `self` and then `next`, with the identifiers joined by `|>`.
    public func append(_ next: any ImageProcessor) -> any ImageProcessor {
        if self is DefaultImageProcessor { return next }
        if next is DefaultImageProcessor { return self }
        return ComposedImageProcessor(first: self, second: next)
    }
}

infix operator |>: AdditionPrecedence

/// Runs `left`, then `right`: `DownsamplingImageProcessor(size: s) |> RoundCornerImageProcessor(radius: .point(8))`.
public func |> (left: any ImageProcessor, right: any ImageProcessor) -> any ImageProcessor {
    left.append(right)
}

/// The processor that returns the image as it is; its identifier is the empty string, so the
/// processed cache key is the original key.
public struct DefaultImageProcessor: ImageProcessor {
    /// The shared identity processor.
    public static let `default` = DefaultImageProcessor()

    public init() {}

    public var identifier: String { "" }

    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage { image }
}

/// Two processors run one after the other (see ``|>(_:_:)``).
struct ComposedImageProcessor: ImageProcessor {
    let first: any ImageProcessor
    let second: any ImageProcessor

    var identifier: String { "\(first.identifier)|>\(second.identifier)" }

    /// Only the first processor's decoding target can be honoured: the decoder runs before it.
    var decodingTarget: (size: PixelSize, mode: ContentMode)? { first.decodingTarget }

    func outputSize(for size: PixelSize) -> PixelSize { second.outputSize(for: first.outputSize(for: size)) }

    /// The first one's intermediates while it runs; then its result, held while the second
    /// one runs, with the second one's intermediates. A resize followed by a crop makes only
    /// the crop: no resized image is held, only the resampler's rows for the crop.
    func intermediateBytes(for size: PixelSize) -> Int {
        if case let (resizing, cropping)? = resizeThenCrop {
            let target = resizing.outputSize(for: size)
            return ResamplerPlan.workingMemory(from: size, to: target, window: cropping.outputSize(for: target))
        }
        let middle = first.outputSize(for: size)
        let whileSecondRuns = WorkingSetEstimate.saturatingSum([WorkingSetEstimate.bytes(middle, frames: 1),
                                                                second.intermediateBytes(for: middle)])
        return max(first.intermediateBytes(for: size), whileSecondRuns)
    }

    func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        if case let (resizing, cropping)? = resizeThenCrop { return try resizing.process(image, croppedBy: cropping) }
        return try second.process(first.process(image))
    }

    /// The two processors when they are a ``ResizingImageProcessor`` and a
    /// ``CroppingImageProcessor``: run as one, the resize makes only the pixels the crop keeps.
    private var resizeThenCrop: (ResizingImageProcessor, CroppingImageProcessor)? {
        guard let resizing = first as? ResizingImageProcessor, let cropping = second as? CroppingImageProcessor else { return nil }
        return (resizing, cropping)
    }
}
