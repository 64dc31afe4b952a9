/// Why an operation of a shared cache tier (``SharedCacheStorage``) failed. ``ImageCache``
/// treats every one of these as a miss; they reach callers only through a storage's own API
/// (for example its start-up check).
public enum SharedStorageErrorReason: Sendable, Hashable, CustomStringConvertible {
    /// The storage's settings are invalid (a bad URL, a zero pool size…).
    case invalidConfiguration(String)
    /// No connection to the node could be made (refused, unreachable, TLS handshake failed).
    case connectionFailed(node: String, description: String)
    /// The TLS handshake with the node failed: its certificate is not trusted (a CA missing
    /// from the trust roots), does not name the host, or the node does not speak TLS.
    case tlsFailed(node: String, description: String)
    /// The connection to the node closed while a command was waiting for its reply.
    case connectionClosed(node: String)
    /// The node did not answer `command` within `timeout`.
    case timedOut(node: String, command: String, timeout: Duration)
    /// The node refused the credentials (`AUTH`), or asks for some that were not given.
    case authenticationFailed(node: String, message: String)
    /// The node answered `command` with an error reply.
    case serverError(node: String, command: String, message: String)
    /// The node's reply broke the protocol or one of the client's limits (length caps, nesting).
    case malformedReply(node: String, description: String)
    /// The node is skipped: its circuit breaker is open after repeated failures.
    case nodeUnavailable(node: String)

    public var description: String {
        switch self {
        case .invalidConfiguration(let message):
            return "invalid shared cache configuration: \(message)"
        case .connectionFailed(let node, let description):
            return "cannot connect to \(node): \(description)"
        case .tlsFailed(let node, let description):
            return "TLS handshake with \(node) failed: \(description)"
        case .connectionClosed(let node):
            return "the connection to \(node) closed before the reply"
        case .timedOut(let node, let command, let timeout):
            return "\(node) did not answer \(command) within \(timeout)"
        case .authenticationFailed(let node, let message):
            return "\(node) refused authentication: \(message)"
        case .serverError(let node, let command, let message):
            return "\(node) answered \(command) with an error: \(message)"
        case .malformedReply(let node, let description):
            return "malformed reply from \(node): \(description)"
        case .nodeUnavailable(let node):
            return "\(node) is skipped after repeated failures (circuit breaker open)"
        }
    }
}
