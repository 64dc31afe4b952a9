/// Every error Alcedo throws: one enum, with a nested reason per stage, as Kingfisher's
/// `KingfisherError` has. The ``description`` says what went wrong in one line.
public enum AlcedoError: Error, Sendable, CustomStringConvertible {
    /// The request could not be made or was stopped before a response (invalid URL, refused
    /// by a modifier, cancelled, timed out, network failure…).
    case requestError(reason: RequestErrorReason)
    /// The server answered, but not with an acceptable image body.
    case responseError(reason: ResponseErrorReason)
    /// The memory or disk cache failed.
    case cacheError(reason: CacheErrorReason)
    /// The bytes could not be decoded into an image.
    case decodingError(reason: DecodingErrorReason)
    /// The image could not be encoded.
    case encodingError(reason: EncodingErrorReason)
    /// A processor could not process the image.
    case processorError(reason: ProcessorErrorReason)
    /// The pipeline could not give the caller an image: a data provider failed, every
    /// alternative source failed, or a binding's request was superseded by a newer one.
    case imageSettingError(reason: ImageSettingErrorReason)
    /// A ``MemoryBudget`` refused the work: it could never fit, or too many jobs wait already.
    case memoryBudgetError(reason: MemoryBudgetErrorReason)

    public var description: String {
        switch self {
        case .requestError(let reason): return "request error: \(reason)"
        case .responseError(let reason): return "response error: \(reason)"
        case .cacheError(let reason): return "cache error: \(reason)"
        case .decodingError(let reason): return "decoding error: \(reason)"
        case .encodingError(let reason): return "encoding error: \(reason)"
        case .processorError(let reason): return "processor error: \(reason)"
        case .imageSettingError(let reason): return "image setting error: \(reason)"
        case .memoryBudgetError(let reason): return "memory budget error: \(reason)"
        }
    }
}
