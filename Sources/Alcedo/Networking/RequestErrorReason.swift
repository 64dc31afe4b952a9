#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why a request failed before a usable response arrived: Kingfisher 8's case set and error
/// codes (1001…1006), so that a `switch` written for Kingfisher compiles unchanged. A
/// connection that fails or breaks (refused, reset, timed out, DNS, TLS) is Kingfisher's
/// `.responseError(reason: .URLSessionError(error:))` with a ``NetworkErrorReason``.
///
/// Alcedo's own refusals (a local file, a denied source, a redirect loop…) are
/// ``invalidURL(request:)``, with the detail in its ``InvalidRequest`` value:
/// `case .requestError(reason: .invalidURL(request: .redirectLoop(let url)))`.
public enum RequestErrorReason: Sendable, CustomStringConvertible {
    /// The request modifier returned `nil`, so no request was sent (1001). As Kingfisher's, the
    /// case has no value: the URL is the one the caller asked for.
    case emptyRequest
    /// The URL cannot be requested, or Alcedo refused it before reading anything; the value
    /// says why (1002).
    case invalidURL(request: InvalidRequest)
    /// The caller, or every caller of a coalesced request, cancelled (1003). `task` is the
    /// download (its ``SessionDataTask/originalURL``), `token` which of its callers left;
    /// ``cancelled`` matches any of them:
    /// `case .requestError(reason: .taskCancelled(task: let task, token: let token))`,
    /// `case .requestError(reason: .cancelled)`.
    case taskCancelled(task: SessionDataTask, token: SessionDataTask.CancelToken)
    /// A Live Photo request was cancelled (1004). Kingfisher's case; Alcedo never reports it
    /// (Live Photos need Apple's Photos framework).
    case livePhotoTaskCancelled(source: LivePhotoSource)
    /// The Swift task awaiting the request was cancelled (1005).
    case asyncTaskContextCancelled
    /// A data provider's loading was cancelled (1006).
    case dataProviderCancelled(provider: any ImageDataProvider)

    /// Why a request was refused before anything was read: the detail of
    /// ``RequestErrorReason/invalidURL(request:)``.
    public enum InvalidRequest: Sendable, CustomStringConvertible {
        /// The URL cannot be requested (no host, or a scheme no loader of the downloader reads:
        /// `http` and `https`, and `s3` or `local` with those loaders).
        case malformed(String)
        /// A `file://` URL was given as a URL or a ``Resource`` without
        /// ``AlcedoOptionsInfoItem/allowLocalFiles``. Nothing was read: the message says nothing
        /// about whether the path exists.
        case localFileNotAllowed(URL)
        /// The loader refused the source before reading anything: a denied S3 bucket, a path that
        /// leaves a local folder's root. `reason` says which rule refused it.
        case sourceNotAllowed(URL, reason: String)
        /// A redirect pointed back to a URL already visited in the same chain.
        case redirectLoop(URL)
        /// The server redirected more times than allowed.
        case tooManyRedirects(URL, limit: Int)
        /// A redirect's `Location` is missing from a 3xx that needs one, or is not an http(s) URL.
        case invalidRedirect(URL, location: String?)
        /// A request modifier or a redirect handler returned a request without a URL (Kingfisher's
        /// `invalidURL(request:)` for a request whose `url` is `nil`); ``url`` is `nil`.
        case missingURL

        /// The URL refused, when it parsed (Kingfisher's `request.url`).
        public var url: URL? {
            switch self {
            case .malformed(let text): return URL(string: text)
            case .localFileNotAllowed(let url), .sourceNotAllowed(let url, _), .redirectLoop(let url),
                 .tooManyRedirects(let url, _), .invalidRedirect(let url, _):
                return url
            case .missingURL: return nil
            }
        }

        /// The reason in one line.
        public var description: String {
            switch self {
            case .malformed(let url): return "invalid URL: \(url)"
            case .localFileNotAllowed(let url):
                return "local files are not loaded from a URL unless the request allows them (.allowLocalFiles): \(url.absoluteString)"
            case .sourceNotAllowed(let url, let reason): return "the source \(url.absoluteString) is not allowed: \(reason)"
            case .redirectLoop(let url): return "redirect loop: \(url.absoluteString) was already visited"
            case .tooManyRedirects(let url, let limit): return "more than \(limit) redirects, the last to \(url.absoluteString)"
            case .invalidRedirect(let url, let location):
                return "invalid redirect from \(url.absoluteString): Location \(location.map { "\"\($0)\"" } ?? "missing")"
            case .missingURL: return "the request has no URL"
            }
        }
    }

    /// The reason in one line.
    public var description: String {
        switch self {
        case .invalidURL(let request): return request.description
        case .emptyRequest: return "the request modifier returned nil, so no request was sent"
        case .taskCancelled, .asyncTaskContextCancelled: return "cancelled"
        case .livePhotoTaskCancelled: return "the Live Photo request was cancelled"
        case .dataProviderCancelled(let provider): return "loading from the data provider \(provider.cacheKey) was cancelled"
        }
    }

    /// Kingfisher's error code: 1001…1006.
    public var errorCode: Int {
        switch self {
        case .emptyRequest: return 1001
        case .invalidURL: return 1002
        case .taskCancelled: return 1003
        case .livePhotoTaskCancelled: return 1004
        case .asyncTaskContextCancelled: return 1005
        case .dataProviderCancelled: return 1006
        }
    }

    /// The detail of ``invalidURL(request:)``, else `nil`.
    public var invalidRequest: InvalidRequest? {
        if case .invalidURL(let request) = self { return request }
        return nil
    }

    /// ``invalidURL(request:)`` with ``InvalidRequest/malformed(_:)``.
    public static func invalidURL(_ text: String) -> RequestErrorReason { .invalidURL(request: .malformed(text)) }
    /// ``invalidURL(request:)`` with ``InvalidRequest/localFileNotAllowed(_:)``.
    public static func localFileNotAllowed(_ url: URL) -> RequestErrorReason { .invalidURL(request: .localFileNotAllowed(url)) }
    /// ``invalidURL(request:)`` with ``InvalidRequest/sourceNotAllowed(_:reason:)``.
    public static func sourceNotAllowed(_ url: URL, reason: String) -> RequestErrorReason {
        .invalidURL(request: .sourceNotAllowed(url, reason: reason))
    }
    /// ``invalidURL(request:)`` with ``InvalidRequest/redirectLoop(_:)``.
    public static func redirectLoop(_ url: URL) -> RequestErrorReason { .invalidURL(request: .redirectLoop(url)) }
    /// ``invalidURL(request:)`` with ``InvalidRequest/tooManyRedirects(_:limit:)``.
    public static func tooManyRedirects(_ url: URL, limit: Int) -> RequestErrorReason {
        .invalidURL(request: .tooManyRedirects(url, limit: limit))
    }
    /// ``invalidURL(request:)`` with ``InvalidRequest/invalidRedirect(_:location:)``.
    public static func invalidRedirect(_ url: URL, location: String?) -> RequestErrorReason {
        .invalidURL(request: .invalidRedirect(url, location: location))
    }
}

extension URL {
    /// `host:port` for messages (the port only when the URL names one).
    var alcedoHostAndPort: String {
        guard let host, !host.isEmpty else { return absoluteString }
        return port.map { "\(host):\($0)" } ?? host
    }
}

extension Duration {
    /// The duration in seconds for messages, such as `15 s` or `0.25 s`.
    var alcedoSeconds: String {
        let (seconds, attoseconds) = components
        let value = Double(seconds) + Double(attoseconds) / 1e18
        return value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }

    /// The duration as a `TimeInterval`.
    var alcedoTimeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
