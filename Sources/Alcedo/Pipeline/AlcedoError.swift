/// Every error Alcedo throws: one enum, with a nested reason per stage, as Kingfisher's
/// `KingfisherError` has, and with exactly Kingfisher's five cases, so that a `switch`
/// written for Kingfisher is exhaustive here too. The ``description`` says what went wrong in
/// one line; `localizedDescription` gives the same line (see ``errorDescription``).
///
/// Decoding and encoding are the two ends of the processing stage (Kingfisher's
/// `DefaultImageProcessor` is what decodes there), so their failures are
/// ``processorError(reason:)`` with Kingfisher's single
/// ``ProcessorErrorReason/processingFailed(processor:item:)``, whose
/// ``ProcessorErrorReason/cause`` is `.decodingFailed` or `.encodingFailed`. ``decodingError(reason:)`` and
/// ``encodingError(reason:)`` build them; ``decodingReason`` and ``encodingReason`` read them.
public enum AlcedoError: Error, Sendable, CustomStringConvertible {
    /// The request could not be made or was stopped before a response (invalid URL, refused
    /// by a modifier, cancelled, timed out, network failure…).
    case requestError(reason: RequestErrorReason)
    /// The server answered, but not with an acceptable image body.
    case responseError(reason: ResponseErrorReason)
    /// The memory or disk cache failed.
    case cacheError(reason: CacheErrorReason)
    /// The image could not be made: the bytes did not decode, a processor failed, or the
    /// image could not be encoded.
    case processorError(reason: ProcessorErrorReason)
    /// The pipeline could not give the caller an image: a data provider failed, every
    /// alternative source failed, or a binding's request was superseded by a newer one.
    case imageSettingError(reason: ImageSettingErrorReason)

    /// The bytes could not be decoded: `.processorError(reason: .decodingFailed(reason))`.
    public static func decodingError(reason: DecodingErrorReason) -> AlcedoError {
        .processorError(reason: .decodingFailed(reason))
    }

    /// The image could not be encoded: `.processorError(reason: .encodingFailed(reason))`.
    public static func encodingError(reason: EncodingErrorReason) -> AlcedoError {
        .processorError(reason: .encodingFailed(reason))
    }

    /// A ``MemoryBudget`` refused the work (it could never fit, or too many jobs wait already):
    /// `.processorError(reason: .memoryBudgetExceeded(reason))`, inside Kingfisher's five cases.
    public static func memoryBudgetError(reason: MemoryBudgetErrorReason) -> AlcedoError {
        .processorError(reason: .memoryBudgetExceeded(reason))
    }

    /// Why a ``MemoryBudget`` refused the work, when it did; `nil` otherwise.
    public var memoryBudgetReason: MemoryBudgetErrorReason? {
        if case .processorError(let processorReason) = self, case .memoryBudgetExceeded(let reason)? = processorReason.cause {
            return reason
        }
        return nil
    }

    /// Why decoding failed, when this is a decoding failure; `nil` otherwise.
    public var decodingReason: DecodingErrorReason? {
        if case .decodingFailed(let reason)? = processorCause { return reason }
        return nil
    }

    /// Why encoding failed, when this is an encoding failure; `nil` otherwise.
    public var encodingReason: EncodingErrorReason? {
        if case .encodingFailed(let reason)? = processorCause { return reason }
        return nil
    }

    /// Why Alcedo could not make the image (``ProcessorErrorReason/cause``), when this is a
    /// processor error that says; `nil` otherwise.
    public var processorCause: ProcessorErrorReason.Cause? {
        if case .processorError(let reason) = self { return reason.cause }
        return nil
    }

    public var description: String {
        switch self {
        case .requestError(let reason): return "request error: \(reason)"
        case .responseError(.URLSessionError(let error as NetworkErrorReason)): return "network error: \(error)"
        case .responseError(let reason): return "response error: \(reason)"
        case .cacheError(let reason): return "cache error: \(reason)"
        case .processorError(let reason):
            switch reason.cause {
            case .decodingFailed(let cause)?: return "decoding error: \(cause)"
            case .encodingFailed(let cause)?: return "encoding error: \(cause)"
            case .memoryBudgetExceeded(let cause)?: return "memory budget error: \(cause)"
            default: return "processor error: \(reason)"
            }
        case .imageSettingError(let reason): return "image setting error: \(reason)"
        }
    }
}
