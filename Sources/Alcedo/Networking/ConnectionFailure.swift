#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore
import NIOPosix
import NIOSSL
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Names a transport error: refused, unreachable, DNS, TLS or reset become their own
/// ``NetworkErrorReason``; anything else stays ``NetworkErrorReason/networkFailure(_:underlying:)``.
enum ConnectionFailure {
    /// The reason for `error`, raised while requesting `url`.
    static func reason(for error: any Error, url: URL) -> NetworkErrorReason {
        named(error, url: url) ?? .networkFailure(url, underlying: error)
    }

    private static func named(_ error: any Error, url: URL) -> NetworkErrorReason? {
        switch error {
        case let error as IOError:
            return reason(errno: error.errnoCode, url: url)
        case let error as NIOConnectionError:
            // Every address failed to connect: the first failure names the cause.
            if let first = error.connectionErrors.first { return named(first.error, url: url) }
            if error.dnsAError != nil || error.dnsAAAAError != nil { return .dnsFailure(url, host: error.host) }
            return nil
        case let error as SocketAddressError.UnknownHost:
            return .dnsFailure(url, host: error.host)
        case let error as NIOSSLError:
            return .tlsFailure(url, message: tlsMessage(error))
        case let error as BoringSSLError:
            return .tlsFailure(url, message: tlsMessage(error))
        case is NIOSSLExtraError:
            return .tlsFailure(url, message: "\(error)")
        case let error as POSIXError:
            return reason(errno: error.code.rawValue, url: url)
        default:
            return nil
        }
    }

    private static func reason(errno code: CInt, url: URL) -> NetworkErrorReason? {
        switch code {
        case ECONNREFUSED: return .connectionRefused(url)
        case EHOSTUNREACH, ENETUNREACH, EHOSTDOWN, ENETDOWN: return .hostUnreachable(url)
        case ECONNRESET, ECONNABORTED, EPIPE: return .connectionReset(url)
        default: return nil
        }
    }

    /// The TLS library's reason in one line, without its error-stack noise.
    private static func tlsMessage(_ error: NIOSSLError) -> String {
        switch error {
        case .handshakeFailed(let inner): return "handshake failed: \(tlsMessage(inner))"
        case .shutdownFailed(let inner): return "shutdown failed: \(tlsMessage(inner))"
        case .uncleanShutdown: return "the connection was closed without a TLS shutdown"
        case .unableToValidateCertificate: return "the certificate could not be validated"
        case .noCertificateToValidate: return "the server sent no certificate"
        default: return "\(error)"
        }
    }

    private static func tlsMessage(_ error: BoringSSLError) -> String {
        switch error {
        case .sslError(let stack), .unknownError(let stack):
            // Each entry reads "Error: <code> error:<hex>:<library>:<function>:<REASON> at <file>:<line>".
            let reasons = stack.map { entry -> String in
                let text = "\(entry)"
                let body = text.components(separatedBy: " at ").first ?? text
                let reason = body.split(separator: ":").last.map(String.init) ?? body
                return reason.lowercased().replacing(literal: "_", with: " ")
            }
            return reasons.isEmpty ? "\(error)" : reasons.joined(separator: "; ")
        default:
            return "\(error)"
        }
    }
}

extension AlcedoError {
    /// `true` when the connection failed or broke: refused, unreachable, DNS, TLS, reset, or
    /// another ``NetworkErrorReason/networkFailure(_:underlying:)`` (not the timeouts).
    public var isConnectionFailure: Bool {
        guard let reason = networkReason else { return false }
        return !reason.isTimeout
    }
}
