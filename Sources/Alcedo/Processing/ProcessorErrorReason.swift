/// Why a processor could not process an image.
public enum ProcessorErrorReason: Sendable, Equatable, CustomStringConvertible {
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

    /// One line naming the processor and what was wrong.
    public var description: String {
        switch self {
        case .invalidParameter(let processor, let message):
            return "\(processor): \(message)"
        case .outputTooLarge(let processor, let size, let limit):
            return "\(processor): an output of \(size) is over the limit of \(limit)"
        case .workingMemoryTooLarge(let processor, let size, let bytes, let limit):
            return "\(processor): an output of \(size) would take \(bytes) bytes of working memory, over the limit of \(limit)"
        }
    }
}
