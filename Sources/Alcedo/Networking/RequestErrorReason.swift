import Foundation

/// Why a request failed before a usable response arrived.
public enum RequestErrorReason: Sendable, CustomStringConvertible {
    /// The URL cannot be requested (no host, an unsupported scheme…).
    case invalidURL(String)
    /// The caller, or every caller of a coalesced request, cancelled.
    case cancelled

    public var description: String {
        switch self {
        case .invalidURL(let url): return "invalid URL: \(url)"
        case .cancelled: return "cancelled"
        }
    }
}
