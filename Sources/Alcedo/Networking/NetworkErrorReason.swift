#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why the connection to the server failed or broke: the error inside Kingfisher's
/// `.responseError(reason: .URLSessionError(error:))`, which is where Alcedo reports it, so
/// that code written for Kingfisher matches it:
///
/// ```swift
/// case .responseError(reason: .URLSessionError(let error)):
///     print(error.localizedDescription)   // "connection refused by 127.0.0.1:9 (…)"
/// ```
///
/// Match a case with `case .responseError(reason: .URLSessionError(NetworkErrorReason.connectionRefused))`,
/// or read ``AlcedoError/networkReason``.
public enum NetworkErrorReason: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// No connection to the server could be made within the connect timeout.
    case connectTimedOut(URL, limit: Duration)
    /// The whole download (one attempt, from sending the request to the last body byte) took
    /// longer than the total timeout: a slow or stalled server.
    case timedOut(URL, limit: Duration)
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
        case .connectTimedOut(let url, let limit):
            return "could not connect to \(url.host ?? url.absoluteString) within \(limit.alcedoSeconds)"
        case .timedOut(let url, let limit):
            return "\(url.absoluteString) did not finish downloading within \(limit.alcedoSeconds)"
        case .connectionRefused(let url): return "connection refused by \(url.alcedoHostAndPort) (\(url.absoluteString))"
        case .hostUnreachable(let url): return "host unreachable: \(url.alcedoHostAndPort) (\(url.absoluteString))"
        case .dnsFailure(let url, let host): return "cannot resolve host name \(host) (\(url.absoluteString))"
        case .tlsFailure(let url, let message): return "TLS failure with \(url.alcedoHostAndPort): \(message) (\(url.absoluteString))"
        case .connectionReset(let url):
            return "connection reset by \(url.alcedoHostAndPort) before the response was complete (\(url.absoluteString))"
        case .networkFailure(let url, let underlying): return "network failure for \(url.absoluteString): \(underlying)"
        }
    }

    /// The one-line ``description``: what `localizedDescription` returns.
    public var errorDescription: String? { description }

    /// The URL that was being requested.
    public var url: URL {
        switch self {
        case .connectTimedOut(let url, _), .timedOut(let url, _), .connectionRefused(let url), .hostUnreachable(let url),
             .dnsFailure(let url, _), .tlsFailure(let url, _), .connectionReset(let url), .networkFailure(let url, _):
            return url
        }
    }

    /// `true` for the two timeouts.
    public var isTimeout: Bool {
        switch self {
        case .connectTimedOut, .timedOut: return true
        default: return false
        }
    }

    var codeOffset: Int {
        switch self {
        case .connectTimedOut: return 0
        case .timedOut: return 1
        case .connectionRefused: return 2
        case .hostUnreachable: return 3
        case .dnsFailure: return 4
        case .tlsFailure: return 5
        case .connectionReset: return 6
        case .networkFailure: return 7
        }
    }
}

extension AlcedoError {
    /// A connection failure, where Kingfisher reports it:
    /// `.responseError(reason: .URLSessionError(error: reason))`.
    public static func networkError(reason: NetworkErrorReason) -> AlcedoError {
        .responseError(reason: .URLSessionError(error: reason))
    }

    /// Why the connection failed, when this is a connection failure; `nil` otherwise.
    public var networkReason: NetworkErrorReason? {
        if case .responseError(reason: .URLSessionError(let error)) = self { return error as? NetworkErrorReason }
        return nil
    }
}
