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

    /// A number per stage, as Kingfisher's `errorCode`: 1001… for request errors, 2001… for
    /// response errors (2101… for connection failures, by ``NetworkErrorReason``), 3001… for cache errors, 4001… for processor errors (4001 a processor
    /// that gave no image, 4101… decoding, 4201… encoding), 5001… for image setting errors.
    public var errorCode: Int {
        switch self {
        case .requestError(let reason): return 1001 + reason.codeOffset
        case .responseError(let reason): return 2001 + reason.codeOffset
        case .cacheError(let reason): return 3001 + reason.codeOffset
        case .processorError(let reason): return 4001 + reason.codeOffset
        case .imageSettingError(let reason): return 5001 + reason.codeOffset
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

extension RequestErrorReason {
    var codeOffset: Int {
        switch self {
        case .emptyRequest: return 0
        case .invalidURL: return 1
        case .taskCancelled: return 2
        case .localFileNotAllowed: return 3
        case .redirectLoop: return 6
        case .tooManyRedirects: return 7
        case .invalidRedirect: return 8
        case .sourceNotAllowed: return 15
        }
    }
}

extension ResponseErrorReason {
    var codeOffset: Int {
        switch self {
        case .invalidHTTPStatusCode: return 0
        case .URLSessionError(let error as NetworkErrorReason): return 100 + error.codeOffset
        case .URLSessionError: return 3
        case .bodyTooLarge: return 1
        case .lengthMismatch: return 2
        case .rejected: return 4
        case .objectStorageError: return 5
        }
    }
}

extension CacheErrorReason {
    var codeOffset: Int {
        switch self {
        case .imageNotExisting: return 0
        case .cannotCreateDirectory: return 1
        case .cannotListDirectory: return 2
        case .diskFull: return 3
        case .readOnly: return 4
        case .writeFailed: return 5
        case .readFailed: return 6
        case .removeFailed: return 7
        case .metadataTooLarge: return 8
        case .corruptEntry: return 9
        case .sharedStorageError: return 10
        case .cannotSerializeImage: return 11
        }
    }
}

extension ProcessorErrorReason {
    var codeOffset: Int {
        switch self {
        case .processingFailed: return 0
        case .invalidParameter: return 1
        case .outputTooLarge: return 2
        case .workingMemoryTooLarge: return 3
        case .memoryBudgetExceeded: return 4
        case .decodingFailed: return 100
        case .encodingFailed: return 200
        }
    }
}

extension ImageSettingErrorReason {
    var codeOffset: Int {
        switch self {
        case .emptySource: return 0
        case .notCurrentSourceTask: return 1
        case .dataProviderError: return 2
        case .alternativeSourcesExhausted: return 3
        case .fileNotFound: return 4
        case .notARegularFile: return 5
        case .fileTooLarge: return 6
        case .fileReadFailed: return 7
        case .invalidBase64: return 8
        }
    }
}
