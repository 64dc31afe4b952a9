extension AlcedoError: CustomDebugStringConvertible {
    /// The case and its reason's case, then the one-line description, for logs:
    /// `AlcedoError.responseError(.URLSessionError(.connectionRefused)): network error: connection refused by 127.0.0.1:8080 (…)`.
    /// `String(reflecting: error)` and `debugPrint(error)` give this.
    public var debugDescription: String {
        let stage: String
        let reason: Any
        switch self {
        case .requestError(let value): (stage, reason) = ("requestError", value)
        case .responseError(.URLSessionError(let value as NetworkErrorReason)):
            return "AlcedoError.responseError(.URLSessionError(.\(Self.caseName(of: value)))): \(description)"
        case .responseError(let value): (stage, reason) = ("responseError", value)
        case .cacheError(let value): (stage, reason) = ("cacheError", value)
        case .processorError(let value): (stage, reason) = ("processorError", value)
        case .imageSettingError(let value): (stage, reason) = ("imageSettingError", value)
        }
        // Alcedo's detail inside Kingfisher's case, when there is one: `.invalidURL(.redirectLoop)`.
        let detail: Any? = switch self {
        case .requestError(let value): value.invalidRequest
        case .responseError(let value): value.invalidResponse ?? value.objectStorageError
        case .cacheError(let value): value.storageFailure
        case .processorError(let value): value.cause
        case .imageSettingError(let value): value.dataProviderFailure
        }
        let inner = detail.map { "(.\(Self.caseName(of: $0)))" } ?? ""
        return "AlcedoError.\(stage)(.\(Self.caseName(of: reason))\(inner)): \(description)"
    }

    /// The name of the case of a reason enum.
    static func caseName(of reason: Any) -> String {
        // A case with a payload is named by its only child; the reasons' few cases without
        // one are named here.
        if let label = Mirror(reflecting: reason).children.first?.label { return label }
        switch reason {
        case let reason as ImageSettingErrorReason: if case .emptySource = reason { return "emptySource" }
        case let reason as DecodingErrorReason: if case .emptyData = reason { return "emptyData" }
        default: break
        }
        return "\(reason)"
    }
}
