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
/// (download, cache, decoding, processing), which keep their own reasons.
public enum ImageSettingErrorReason: Sendable, CustomStringConvertible {
    /// A binding was asked to load `nil`: there is nothing to load.
    case emptySource
    /// A binding dropped this result because a newer request was made on the same target
    /// (Kingfisher's `notCurrentSourceTask`). `result` is the image the superseded request
    /// got, if it got one (the superseded request runs to its end and is cached, as in
    /// Kingfisher); `error` is its failure otherwise.
    indirect case notCurrentSourceTask(result: RetrieveImageResult?, error: AlcedoError?, source: Source)
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
    /// A custom ``ImageDataProvider`` failed with this message.
    case dataProviderError(cacheKey: String, message: String)
    /// The source and every ``AlcedoOptionsInfoItem/alternativeSources(_:)`` failed, tried in
    /// order; each failure is listed with its source.
    case alternativeSourcesExhausted([SourceFailure])

    public var description: String {
        switch self {
        case .emptySource:
            return "no source to load"
        case .notCurrentSourceTask(_, let error, let source):
            let outcome = error.map { " (it ended with: \($0))" } ?? ""
            return "the request for \(source) was superseded by a newer request on the same target\(outcome)"
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
        case .dataProviderError(let cacheKey, let message):
            return "the data provider for \(cacheKey) failed: \(message)"
        case .alternativeSourcesExhausted(let failures):
            let list = failures.map { "\($0.source): \($0.error)" }.joined(separator: "; ")
            return "all \(failures.count) sources failed: \(list)"
        }
    }
}

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
