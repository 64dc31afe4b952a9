#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// `KingfisherError`'s members on ``AlcedoError``, and `LocalizedError`, so that
// `print("Job failed: \(error.localizedDescription)")` prints the reason.

extension AlcedoError: LocalizedError {
    /// The one-line ``description``: what `localizedDescription` returns.
    public var errorDescription: String? { description }

    /// `true` when the request was cancelled (``RequestErrorReason/cancelled``), as Kingfisher's
    /// `isTaskCancelled`.
    public var isTaskCancelled: Bool {
        if case .requestError(reason: .taskCancelled) = self { return true }
        return false
    }

    /// `true` when the server answered with a status code that is not accepted; with `code`,
    /// only when it is that code (Kingfisher's `isInvalidResponseStatusCode(_:)`).
    public func isInvalidResponseStatusCode(_ code: Int) -> Bool {
        if case .responseError(reason: .invalidHTTPStatusCode(let response)) = self { return response.statusCode == code }
        return false
    }

    /// `true` when the server answered with a status code that is not accepted.
    public var isInvalidResponseStatusCode: Bool {
        if case .responseError(reason: .invalidHTTPStatusCode) = self { return true }
        return false
    }

    /// `true` when a binding dropped the result for a newer request on the same target
    /// (Kingfisher's `isNotCurrentTask`).
    public var isNotCurrentTask: Bool {
        if case .imageSettingError(reason: .notCurrentSourceTask) = self { return true }
        return false
    }

    /// Kingfisher's error code of the reason: 1001… for request errors, 2001… for response
    /// errors, 3001… for cache errors, 4001 for processor errors, 5001… for image setting
    /// errors, each case numbered as in Kingfisher 8.
    public var errorCode: Int {
        switch self {
        case .requestError(let reason): return reason.errorCode
        case .responseError(let reason): return reason.errorCode
        case .cacheError(let reason): return reason.errorCode
        case .processorError(let reason): return reason.errorCode
        case .imageSettingError(let reason): return reason.errorCode
        }
    }
}

// Kingfisher's `CustomNSError` members. `CustomNSError` itself lives in full Foundation on
// Linux, which would bring CoreFoundation and ICU into every executable; the standard library's
// `Error` requirements `_domain` and `_code` give `NSError` bridging (`error as NSError`) the same
// domain and code without it, and `LocalizedError` gives its localized description.
extension AlcedoError {
    /// `"Alcedo.Error"`: the domain of every Alcedo error (Kingfisher's `KingfisherError.domain`).
    public static let domain = "Alcedo.Error"

    /// ``domain``: the domain of the error bridged to `NSError`.
    public static var errorDomain: String { domain }

    /// The one-line ``description`` under `NSLocalizedDescription`, as Kingfisher's
    /// `errorUserInfo`.
    public var errorUserInfo: [String: Any] { ["NSLocalizedDescription": description] }

    /// ``errorDomain``, read by `NSError` bridging.
    public var _domain: String { Self.errorDomain }

    /// ``errorCode``, read by `NSError` bridging.
    public var _code: Int { errorCode }
}
