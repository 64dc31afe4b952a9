#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why a request failed before a usable response arrived. A connection that fails or breaks
/// (refused, reset, timed out, DNS, TLS) is Kingfisher's
/// `.responseError(reason: .URLSessionError(error:))` with a ``NetworkErrorReason``.
public enum RequestErrorReason: Sendable, CustomStringConvertible {
    /// The URL cannot be requested (no host, or a scheme no loader of the downloader reads:
    /// `http` and `https`, and `s3` or `local` with those loaders).
    case invalidURL(String)
    /// A `file://` URL was given as a URL or a ``Resource`` without
    /// ``AlcedoOptionsInfoItem/allowLocalFiles``. Nothing was read: the message says nothing
    /// about whether the path exists.
    case localFileNotAllowed(URL)
    /// The request modifier returned `nil` for the request to this URL (Kingfisher's name).
    case emptyRequest(URL)
    /// The loader refused the source before reading anything: a denied S3 bucket, a path that
    /// leaves a local folder's root. `reason` says which rule refused it.
    case sourceNotAllowed(URL, reason: String)
    /// The caller, or every caller of a coalesced request, cancelled (Kingfisher's name and
    /// shape). `task` is the download (its ``SessionDataTask/originalURL``), `token` which of
    /// its callers left; ``cancelled`` matches any of them:
    /// `case .requestError(reason: .taskCancelled(task: let task, token: let token))`,
    /// `case .requestError(reason: .cancelled)`.
    case taskCancelled(task: SessionDataTask, token: SessionDataTask.CancelToken)
    /// A redirect pointed back to a URL already visited in the same chain.
    case redirectLoop(URL)
    /// The server redirected more times than allowed.
    case tooManyRedirects(URL, limit: Int)
    /// A redirect's `Location` is missing from a 3xx that needs one, or is not an http(s) URL.
    case invalidRedirect(URL, location: String?)

    /// The reason in one line.
    public var description: String {
        switch self {
        case .invalidURL(let url): return "invalid URL: \(url)"
        case .localFileNotAllowed(let url):
            return "local files are not loaded from a URL unless the request allows them (.allowLocalFiles): \(url.absoluteString)"
        case .emptyRequest(let url): return "the request modifier refused the request to \(url.absoluteString)"
        case .sourceNotAllowed(let url, let reason): return "the source \(url.absoluteString) is not allowed: \(reason)"
        case .taskCancelled: return "cancelled"
        case .redirectLoop(let url): return "redirect loop: \(url.absoluteString) was already visited"
        case .tooManyRedirects(let url, let limit): return "more than \(limit) redirects, the last to \(url.absoluteString)"
        case .invalidRedirect(let url, let location):
            return "invalid redirect from \(url.absoluteString): Location \(location.map { "\"\($0)\"" } ?? "missing")"
        }
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
