import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A host and port to listen on, read from imgproxy's `host:port` form (`IMGPROXY_BIND`,
/// `IMGPROXY_PROMETHEUS_BIND`).
public struct BindAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address or host name (`0.0.0.0` when the text named none, as `:8080` does).
    public var host: String
    /// The port (0 picks a free one).
    public var port: Int

    /// Creates an address.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`, `:PORT` (every IPv4 interface, as Go's listener reads it) or
    /// `[IPV6]:PORT`.
    /// - Throws: ``ServerConfigurationError/invalidValue(_:message:)`` when there is no port
    ///   in 0...65535 after the last `:`.
    public init(parsing text: String, name: String = "bind address") throws(ServerConfigurationError) {
        let trimmed = text.trimmingSpaces()
        guard let colon = trimmed.lastIndex(of: ":"), let port = Int(trimmed[trimmed.index(after: colon)...]),
              (0...65535).contains(port) else {
            throw .invalidValue(name, message: "\"\(text)\" is not HOST:PORT with a port in 0...65535")
        }
        var host = String(trimmed[..<colon])
        let bracketed = host.hasPrefix("[") && host.hasSuffix("]")
        if bracketed { host = String(host.dropFirst().dropLast()) }
        guard !host.contains(literal: ":") || (bracketed && IPAddress(host) != nil) else {
            throw .invalidValue(name, message: "\"\(text)\": write an IPv6 address in brackets, [::1]:8080")
        }
        self.init(host: host.isEmpty ? "0.0.0.0" : host, port: port)
    }

    /// `HOST:PORT` (`[HOST]:PORT` for IPv6).
    public var description: String { host.contains(literal: ":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
