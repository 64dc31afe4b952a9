#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why the pipeline could not give the caller an image, beyond the failures of one stage
/// (download, cache, decoding, processing), which keep their own reasons: Kingfisher 8's case
/// set and error codes (5001…5006), so that a `switch` written for Kingfisher compiles unchanged.
///
/// A data provider's failure is ``dataProviderError(provider:error:)``: a custom provider's
/// own error as it threw it, Alcedo's providers' failures (a missing file, bad base64…) as a
/// ``DataProviderFailure`` (``dataProviderFailure`` reads it).
public enum ImageSettingErrorReason: Sendable, CustomStringConvertible {
    /// A binding was asked to load `nil`: there is nothing to load (5001).
    case emptySource
    /// A binding dropped this result because a newer request was made on the same target
    /// (5002). `result` is the image the superseded request got, if it got one (the superseded
    /// request runs to its end and is cached, as in Kingfisher); `error` is its failure otherwise.
    indirect case notCurrentSourceTask(result: RetrieveImageResult?, error: AlcedoError?, source: Source)
    /// A data provider failed (5003): `error` is what it threw, or a ``DataProviderFailure``
    /// for Alcedo's providers.
    case dataProviderError(provider: any ImageDataProvider, error: any Error)
    /// The source and every ``AlcedoOptionsInfoItem/alternativeSources(_:)`` failed, tried in
    /// order (5004); each failure is listed with its source.
    case alternativeSourcesExhausted([PropagationError])
    /// A binding dropped a Live Photo result for a newer request (5005). Kingfisher's case;
    /// Alcedo never reports it (Live Photos need Apple's Photos framework).
    case notCurrentLivePhotoSourceTask(result: RetrieveLivePhotoResult?, error: (any Error)?, source: LivePhotoSource)
    /// A Live Photo could not be made from its resources (5006). Kingfisher's case; Alcedo
    /// never reports it.
    case livePhotoResultError(result: RetrieveLivePhotoResult?, error: (any Error)?, source: LivePhotoSource)

    /// Why one of Alcedo's data providers failed: the `error` of
    /// ``ImageSettingErrorReason/dataProviderError(provider:error:)``.
    public enum DataProviderFailure: Error, Sendable, CustomStringConvertible {
        /// The file of a ``LocalFileImageDataProvider`` does not exist.
        case fileNotFound(URL)
        /// The path of a ``LocalFileImageDataProvider`` is not a regular file (a folder, a device…).
        case notARegularFile(URL)
        /// The file of a ``LocalFileImageDataProvider`` is larger than its limit.
        case fileTooLarge(URL, size: Int, limit: Int)
        /// Reading the file of a ``LocalFileImageDataProvider`` failed with `errno`.
        case fileReadFailed(URL, errno: Int32)
        /// The string of a ``Base64ImageDataProvider`` is not valid base64 (`length` characters).
        case invalidBase64(cacheKey: String, length: Int)

        public var description: String {
            switch self {
            case .fileNotFound(let url):
                return "no file at \(url.path)"
            case .notARegularFile(let url):
                return "\(url.path) is not a regular file"
            case .fileTooLarge(let url, let size, let limit):
                return "\(url.path) is \(size) bytes, over the limit of \(limit)"
            case .fileReadFailed(let url, let code):
                return "cannot read \(url.path): \(String(cString: strerror(code))) (errno \(code))"
            case .invalidBase64(let cacheKey, let length):
                return "the \(length) characters given for \(cacheKey) are not valid base64"
            }
        }
    }

    public var description: String {
        switch self {
        case .emptySource:
            return "no source to load"
        case .notCurrentSourceTask(_, let error, let source):
            let outcome = error.map { " (it ended with: \($0))" } ?? ""
            return "the request for \(source) was superseded by a newer request on the same target\(outcome)"
        case .dataProviderError(_, let error as DataProviderFailure):
            return error.description
        case .dataProviderError(let provider, let error):
            return "the data provider for \(provider.cacheKey) failed: \(error)"
        case .alternativeSourcesExhausted(let failures):
            let list = failures.map { "\($0.source): \($0.error)" }.joined(separator: "; ")
            return "all \(failures.count) sources failed: \(list)"
        case .notCurrentLivePhotoSourceTask(_, _, let source):
            return "the Live Photo request for \(source) was superseded by a newer request"
        case .livePhotoResultError(_, let error, let source):
            return "no Live Photo from \(source)" + (error.map { ": \($0)" } ?? "")
        }
    }

    /// Kingfisher's error code: 5001…5006.
    public var errorCode: Int {
        switch self {
        case .emptySource: return 5001
        case .notCurrentSourceTask: return 5002
        case .dataProviderError: return 5003
        case .alternativeSourcesExhausted: return 5004
        case .notCurrentLivePhotoSourceTask: return 5005
        case .livePhotoResultError: return 5006
        }
    }

    /// The failure of one of Alcedo's data providers this reason carries, else `nil`.
    public var dataProviderFailure: DataProviderFailure? {
        if case .dataProviderError(_, let failure as DataProviderFailure) = self { return failure }
        return nil
    }

    /// ``dataProviderError(provider:error:)`` for a local file's failure.
    static func localFile(_ url: URL, _ failure: DataProviderFailure) -> ImageSettingErrorReason {
        .dataProviderError(provider: LocalFileImageDataProvider(fileURL: url), error: failure)
    }
}

/// Kingfisher's name for one failed source of a request with alternative sources: ``SourceFailure``.
public typealias PropagationError = SourceFailure

/// One failed source of a request with alternative sources.
public struct SourceFailure: Sendable, CustomStringConvertible {
    /// The source that was tried.
    public let source: Source
    /// Why it failed.
    public let error: AlcedoError

    public init(source: Source, error: AlcedoError) {
        self.source = source
        self.error = error
    }

    public var description: String { "\(source): \(error)" }
}
