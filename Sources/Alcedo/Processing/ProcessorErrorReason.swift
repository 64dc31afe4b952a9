/// Why the image could not be made: the bytes did not decode, a processor failed, or the image
/// could not be encoded.
public enum ProcessorErrorReason: Sendable, Equatable, CustomStringConvertible {
    /// A processor gave no image (Kingfisher's reason): a processor written in Kingfisher's
    /// shape returned `nil` from ``ImageProcessor/process(item:options:)``. `item` is what it
    /// was given.
    case processingFailed(processor: any ImageProcessor, item: ImageProcessItem)
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
        case .processingFailed(let processor, let item):
            let name = processor.identifier.isEmpty ? "\(type(of: processor))" : processor.identifier
            return "\(name) gave no image for \(item)"
        case .decodingFailed(let reason):
            return "\(reason)"
        case .encodingFailed(let reason):
            return "\(reason)"
        case .invalidParameter(let processor, let message):
            return "\(processor): \(message)"
        case .outputTooLarge(let processor, let size, let limit):
            return "\(processor): an output of \(size) is over the limit of \(limit)"
        case .workingMemoryTooLarge(let processor, let size, let bytes, let limit):
            return "\(processor): an output of \(size) would take \(bytes) bytes of working memory, over the limit of \(limit)"
        case .memoryBudgetExceeded(let reason):
            return "\(reason)"
        }
    }
}

extension ProcessorErrorReason {
    /// Two reasons are equal when they are the same case with equal values; processors are
    /// compared by ``ImageProcessor/identifier``.
    public static func == (lhs: ProcessorErrorReason, rhs: ProcessorErrorReason) -> Bool {
        switch (lhs, rhs) {
        case let (.processingFailed(p1, i1), .processingFailed(p2, i2)): return p1.identifier == p2.identifier && i1 == i2
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
