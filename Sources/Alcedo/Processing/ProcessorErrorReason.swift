/// Why a processor could not process an image.
public enum ProcessorErrorReason: Sendable, Equatable, CustomStringConvertible {
    /// A parameter is out of range (a non-positive size, a negative radius…).
    case invalidParameter(processor: String, message: String)

    public var description: String {
        switch self {
        case .invalidParameter(let processor, let message): return "\(processor): \(message)"
        }
    }
}
