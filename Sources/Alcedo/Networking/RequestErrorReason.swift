import Foundation

/// Why a request failed before a usable response arrived.
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
    /// The caller, or every caller of a coalesced request, cancelled.
    case cancelled
    /// No connection to the server could be made within the connect timeout.
    case connectTimedOut(URL, limit: Duration)
    /// The whole download (one attempt, from sending the request to the last body byte) took
    /// longer than the total timeout: a slow or stalled server.
    case timedOut(URL, limit: Duration)
    /// A redirect pointed back to a URL already visited in the same chain.
    case redirectLoop(URL)
    /// The server redirected more times than allowed.
    case tooManyRedirects(URL, limit: Int)
    /// A redirect's `Location` is missing from a 3xx that needs one, or is not an http(s) URL.
    case invalidRedirect(URL, location: String?)
    /// The server's host refused the connection: nothing listens on that port.
    case connectionRefused(URL)
    /// The host or its network cannot be reached (no route to it).
    case hostUnreachable(URL)
    /// The host name could not be resolved to an address (DNS).
    case dnsFailure(URL, host: String)
    /// The TLS handshake failed or TLS broke later: a certificate that does not verify, a server
    /// that does not speak TLS on that port, an unsupported protocol. `message` is the TLS
    /// library's reason.
    case tlsFailure(URL, message: String)
    /// The server reset or closed the connection before the response was complete.
    case connectionReset(URL)
    /// Any other failure of the connection (a protocol error…); `underlying` is the loader's error.
    case networkFailure(URL, underlying: any Error)

    /// The reason in one line.
    public var description: String {
        switch self {
        case .invalidURL(let url): return "invalid URL: \(url)"
        case .localFileNotAllowed(let url):
            return "local files are not loaded from a URL unless the request allows them (.allowLocalFiles): \(url.absoluteString)"
        case .emptyRequest(let url): return "the request modifier refused the request to \(url.absoluteString)"
        case .sourceNotAllowed(let url, let reason): return "the source \(url.absoluteString) is not allowed: \(reason)"
        case .cancelled: return "cancelled"
        case .connectTimedOut(let url, let limit):
            return "could not connect to \(url.host ?? url.absoluteString) within \(limit.alcedoSeconds)"
        case .timedOut(let url, let limit):
            return "\(url.absoluteString) did not finish downloading within \(limit.alcedoSeconds)"
        case .redirectLoop(let url): return "redirect loop: \(url.absoluteString) was already visited"
        case .tooManyRedirects(let url, let limit): return "more than \(limit) redirects, the last to \(url.absoluteString)"
        case .invalidRedirect(let url, let location):
            return "invalid redirect from \(url.absoluteString): Location \(location.map { "\"\($0)\"" } ?? "missing")"
        case .connectionRefused(let url): return "connection refused by \(url.alcedoHostAndPort) (\(url.absoluteString))"
        case .hostUnreachable(let url): return "host unreachable: \(url.alcedoHostAndPort) (\(url.absoluteString))"
        case .dnsFailure(let url, let host): return "cannot resolve host name \(host) (\(url.absoluteString))"
        case .tlsFailure(let url, let message): return "TLS failure with \(url.alcedoHostAndPort): \(message) (\(url.absoluteString))"
        case .connectionReset(let url):
            return "connection reset by \(url.alcedoHostAndPort) before the response was complete (\(url.absoluteString))"
        case .networkFailure(let url, let underlying): return "network failure for \(url.absoluteString): \(underlying)"
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
