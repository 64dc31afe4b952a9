import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An error's HTTP answer: the status, and the one-line reason sent as text and in the
/// `X-Alcedo-Error` header.
struct ErrorStatus: Sendable, Equatable {
    let status: Int
    let reason: String
    /// What the server's log says about it when that must not reach the client (why an
    /// object store refused access), else `nil`.
    var log: String?

    /// The queue is full: 429 with `Retry-After`.
    static let queueFull = ErrorStatus(status: 429, reason: "too many requests: the processing queue is full")

    /// Maps any error the image route can meet. Bad input never maps to 500.
    init(_ error: any Error) {
        switch error {
        case let error as ImgproxyURLError:
            self.init(status: error.status, reason: error.description)
        case let error as SourceRefusal:
            self.init(status: 403, reason: error.description)
        case let error as AlcedoError:
            self = Self.map(error)
        case let error as ErrorStatus.Thrown:
            self = error.status
        default:
            self.init(status: 500, reason: "internal error: \(error)")
        }
    }

    init(status: Int, reason: String, log: String? = nil) {
        self.status = status
        self.reason = reason
        self.log = log
    }

    /// An ``ErrorStatus`` thrown as it is.
    struct Thrown: Error {
        let status: ErrorStatus
    }

    private static func map(_ error: AlcedoError) -> ErrorStatus {
        let text = error.description
        switch error {
        case .requestError(let reason):
            switch reason {
            case .invalidURL(.malformed): return ErrorStatus(status: 400, reason: text)
            case .emptyRequest, .invalidURL(.missingURL), .invalidURL(.localFileNotAllowed), .invalidURL(.sourceNotAllowed):
                return ErrorStatus(status: 403, reason: text)
            case .taskCancelled, .asyncTaskContextCancelled, .dataProviderCancelled, .livePhotoTaskCancelled:
                return ErrorStatus(status: 503, reason: text)
            case .invalidURL(.redirectLoop), .invalidURL(.tooManyRedirects), .invalidURL(.invalidRedirect):
                return ErrorStatus(status: 502, reason: text)
            }
        case .responseError(let reason):
            switch reason {
            case .URLSessionError(let storageError as ObjectStorageError):
                switch storageError.category {
                case .notFound: return ErrorStatus(status: 404, reason: text)
                case .accessDenied:
                    // The client learns only that access was refused; the log names the cause
                    // (AccessDenied, SignatureDoesNotMatch, InvalidAccessKeyId…).
                    return ErrorStatus(status: 403, reason: "source refused: the object store denied access to \(storageError.url.absoluteString)",
                                       log: "the object store refused \(storageError.url.absoluteString): \(storageError.code)"
                                           + (storageError.message.map { " (\($0))" } ?? "")
                                           + (storageError.requestID.map { ", request ID \($0)" } ?? ""))
                case .throttled, .other: return ErrorStatus(status: 502, reason: text)
                }
            case .URLSessionError(let error):
                switch error as? NetworkErrorReason {
                case .connectTimedOut, .timedOut: return ErrorStatus(status: 504, reason: text)
                case .networkFailure(_, let underlying as SourceRefusal):
                    return ErrorStatus(status: 403, reason: underlying.description)
                default: return ErrorStatus(status: 502, reason: text)
                }
            case .invalidHTTPStatusCode(let response):
                return ErrorStatus(status: response.statusCode == 404 || response.statusCode == 410 ? 404 : 502, reason: text)
            case .invalidURLResponse(.bodyTooLarge): return ErrorStatus(status: 422, reason: text)
            case .invalidURLResponse(.lengthMismatch), .invalidURLResponse(.rejected), .dataModifyingFailed, .noURLResponse,
                 .cancelledByDelegate:
                return ErrorStatus(status: 502, reason: text)
            }
        case .processorError(let reason):
            switch reason.cause {
            case .decodingFailed?, .encodingFailed?, .outputTooLarge?, .workingMemoryTooLarge?, nil:
                return ErrorStatus(status: 422, reason: text)
            case .invalidParameter?: return ErrorStatus(status: 400, reason: text)
            case .memoryBudgetExceeded(.neverFits)?: return ErrorStatus(status: 422, reason: text)
            case .memoryBudgetExceeded(.queueFull)?: return ErrorStatus(status: 429, reason: "too many requests: " + text)
            }
        case .imageSettingError(let reason):
            if case .alternativeSourcesExhausted(let failures) = reason, let last = failures.last {
                return map(last.error)
            }
            return ErrorStatus(status: 502, reason: text)
        case .cacheError:
            return ErrorStatus(status: 500, reason: text)
        }
    }

    /// The reason fit for a header: printable ASCII, at most 300 characters.
    var headerValue: String {
        let printable = reason.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?" }
        return String(String(printable).prefix(300))
    }
}
