#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why the image could not be made: Kingfisher 8's single case and error code (4001), so that
/// `switch reason { case .processingFailed(let processor, let item): … }` compiles unchanged.
///
/// Alcedo says more: when the bytes did not decode, the image could not be encoded, a
/// parameter was out of range, a limit or a memory budget refused the work, the `processor`
/// of ``processingFailed(processor:item:)`` is a ``FailedImageProcessor`` carrying the
/// ``Cause``, which ``cause`` reads: `if case .decodingFailed(let why)? = reason.cause`.
public enum ProcessorErrorReason: Sendable, Equatable, CustomStringConvertible {
    /// A processor gave no image (4001). `item` is what it was given (empty data when the
    /// failure came before there was anything to give); ``cause`` says why, when Alcedo knows.
    case processingFailed(processor: any ImageProcessor, item: ImageProcessItem)

    /// Why Alcedo could not make the image: the detail of ``ProcessorErrorReason/processingFailed(processor:item:)``.
    public enum Cause: Sendable, Equatable, CustomStringConvertible {
        /// The bytes could not be decoded into an image; the reason names the format and the fault.
        case decodingFailed(DecodingErrorReason)
        /// The image could not be encoded; the reason names the format and the fault.
        case encodingFailed(EncodingErrorReason)
        /// A parameter is out of range (a non-positive size, a negative radius, a fraction outside
        /// `0...1`, a number that is not finite…). `processor` is the processor's type name,
        /// `message` names the parameter, the accepted range and the value given.
        case invalidParameter(processor: String, message: String)
        /// The processor would produce an image larger than `limit` pixels per frame or bytes in
        /// all (the limits of ``DecodingLimits/default``), so it refused before allocating.
        case outputTooLarge(processor: String, size: PixelSize, limit: Int)
        /// Producing an output of `size` would take `bytes` of working memory besides the output
        /// (the resampler's weight tables and rows), over `limit` (``DecodingLimits/maxWorkingMemory``
        /// of ``DecodingLimits/default``), so the processor refused before allocating.
        case workingMemoryTooLarge(processor: String, size: PixelSize, bytes: Int, limit: Int)
        /// A ``MemoryBudget`` refused the work before it started: it could never fit, or too many
        /// jobs wait already (``AlcedoError/memoryBudgetError(reason:)`` builds it).
        case memoryBudgetExceeded(MemoryBudgetErrorReason)

        /// One line naming the processor and what was wrong.
        public var description: String {
            switch self {
            case .decodingFailed(let reason): return "\(reason)"
            case .encodingFailed(let reason): return "\(reason)"
            case .invalidParameter(let processor, let message): return "\(processor): \(message)"
            case .outputTooLarge(let processor, let size, let limit):
                return "\(processor): an output of \(size) is over the limit of \(limit)"
            case .workingMemoryTooLarge(let processor, let size, let bytes, let limit):
                return "\(processor): an output of \(size) would take \(bytes) bytes of working memory, over the limit of \(limit)"
            case .memoryBudgetExceeded(let reason): return "\(reason)"
            }
        }

        public static func == (lhs: Cause, rhs: Cause) -> Bool {
            switch (lhs, rhs) {
            case let (.decodingFailed(a), .decodingFailed(b)): return a == b
            case let (.encodingFailed(a), .encodingFailed(b)): return a == b
            case let (.invalidParameter(p1, m1), .invalidParameter(p2, m2)): return p1 == p2 && m1 == m2
            case let (.outputTooLarge(p1, s1, l1), .outputTooLarge(p2, s2, l2)): return p1 == p2 && s1 == s2 && l1 == l2
            case let (.workingMemoryTooLarge(p1, s1, b1, l1), .workingMemoryTooLarge(p2, s2, b2, l2)):
                return p1 == p2 && s1 == s2 && b1 == b2 && l1 == l2
            case let (.memoryBudgetExceeded(a), .memoryBudgetExceeded(b)): return "\(a)" == "\(b)"
            default: return false
            }
        }
    }

    /// One line naming the processor and what was wrong.
    public var description: String {
        switch self {
        case .processingFailed(let processor as FailedImageProcessor, _):
            return processor.cause.description
        case .processingFailed(let processor, let item):
            let name = processor.identifier.isEmpty ? "\(type(of: processor))" : processor.identifier
            return "\(name) gave no image for \(item)"
        }
    }

    /// Kingfisher's error code: 4001.
    public var errorCode: Int { 4001 }

    /// Why Alcedo could not make the image, when it knows more than "the processor gave no image".
    public var cause: Cause? {
        if case .processingFailed(let processor as FailedImageProcessor, _) = self { return processor.cause }
        return nil
    }

    /// ``processingFailed(processor:item:)`` with ``Cause/decodingFailed(_:)``.
    public static func decodingFailed(_ reason: DecodingErrorReason) -> ProcessorErrorReason { failed(.decodingFailed(reason)) }
    /// ``processingFailed(processor:item:)`` with ``Cause/encodingFailed(_:)``.
    public static func encodingFailed(_ reason: EncodingErrorReason) -> ProcessorErrorReason { failed(.encodingFailed(reason)) }
    /// ``processingFailed(processor:item:)`` with ``Cause/invalidParameter(processor:message:)``.
    public static func invalidParameter(processor: String, message: String) -> ProcessorErrorReason {
        failed(.invalidParameter(processor: processor, message: message))
    }
    /// ``processingFailed(processor:item:)`` with ``Cause/outputTooLarge(processor:size:limit:)``.
    public static func outputTooLarge(processor: String, size: PixelSize, limit: Int) -> ProcessorErrorReason {
        failed(.outputTooLarge(processor: processor, size: size, limit: limit))
    }
    /// ``processingFailed(processor:item:)`` with ``Cause/workingMemoryTooLarge(processor:size:bytes:limit:)``.
    public static func workingMemoryTooLarge(processor: String, size: PixelSize, bytes: Int, limit: Int) -> ProcessorErrorReason {
        failed(.workingMemoryTooLarge(processor: processor, size: size, bytes: bytes, limit: limit))
    }
    /// ``processingFailed(processor:item:)`` with ``Cause/memoryBudgetExceeded(_:)``.
    public static func memoryBudgetExceeded(_ reason: MemoryBudgetErrorReason) -> ProcessorErrorReason {
        failed(.memoryBudgetExceeded(reason))
    }

    private static func failed(_ cause: Cause) -> ProcessorErrorReason {
        .processingFailed(processor: FailedImageProcessor(cause: cause), item: .data(Data()))
    }
}

extension ProcessorErrorReason {
    /// Two reasons are equal when their processors have the same ``ImageProcessor/identifier``,
    /// their items are equal and their causes are equal.
    public static func == (lhs: ProcessorErrorReason, rhs: ProcessorErrorReason) -> Bool {
        switch (lhs, rhs) {
        case let (.processingFailed(p1, i1), .processingFailed(p2, i2)):
            return p1.identifier == p2.identifier && i1 == i2 && lhs.cause == rhs.cause
        }
    }
}

/// The processor reported by ``ProcessorErrorReason/processingFailed(processor:item:)`` when
/// Alcedo knows why the image could not be made: the processor that was running (by default
/// ``DefaultImageProcessor``, the decoding step) and the ``ProcessorErrorReason/Cause``.
/// Running it throws that cause again.
public struct FailedImageProcessor: ImageProcessor {
    /// The processor that was running when the work failed (default ``DefaultImageProcessor``).
    public let processor: any ImageProcessor
    /// Why it failed.
    public let cause: ProcessorErrorReason.Cause

    /// Creates the record of `processor` (default ``DefaultImageProcessor``) failing for `cause`.
    public init(processor: any ImageProcessor = DefaultImageProcessor.default, cause: ProcessorErrorReason.Cause) {
        self.processor = processor
        self.cause = cause
    }

    /// The failed processor's identifier.
    public var identifier: String { processor.identifier }

    /// Throws the cause again.
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        throw .processorError(reason: .processingFailed(processor: self, item: .image(image)))
    }
}
