import Foundation

/// Why a response was not accepted.
public enum ResponseErrorReason: Sendable, CustomStringConvertible {
    /// The status code is not among the accepted ones.
    case invalidStatusCode(Int)

    public var description: String {
        switch self {
        case .invalidStatusCode(let code): return "unacceptable status code \(code)"
        }
    }
}
