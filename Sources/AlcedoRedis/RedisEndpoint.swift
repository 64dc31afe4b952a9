import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where one Redis node is and how to log in: parsed from `redis://[user[:password]@]host[:port][/db]`
/// (`rediss://` for TLS). Default port 6379, database 0.
public struct RedisEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The host name or address.
    public var host: String
    /// The TCP port. Default 6379.
    public var port: Int
    /// The ACL user for `AUTH`, or `nil` for the default user.
    public var user: String?
    /// The password for `AUTH`, or `nil` to send no `AUTH`.
    public var password: String?
    /// The database selected with `SELECT`. Default 0.
    public var database: Int
    /// Connect with TLS (`rediss://`). Default `false`.
    public var usesTLS: Bool

    /// Creates an endpoint from its parts.
    public init(host: String, port: Int = 6379, user: String? = nil, password: String? = nil, database: Int = 0,
                usesTLS: Bool = false) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.usesTLS = usesTLS
    }

    /// Parses a `redis://` or `rediss://` URL.
    /// - Throws: ``Alcedo/SharedStorageErrorReason/invalidConfiguration(_:)`` (in a cache error)
    ///   for another scheme, a missing host, a bad port or database.
    public init(url text: String) throws(AlcedoError) {
        func invalid(_ why: String) -> AlcedoError {
            .cacheError(reason: .sharedStorageError(reason: .invalidConfiguration("\(why) in Redis URL \"\(Self.redacted(text))\"")))
        }
        guard let components = URLComponents(string: text) else { throw invalid("not a URL") }
        switch components.scheme?.lowercased() {
        case "redis": usesTLS = false
        case "rediss": usesTLS = true
        default: throw invalid("scheme is not redis:// or rediss://")
        }
        guard let host = components.host, !host.isEmpty else { throw invalid("no host") }
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        port = components.port ?? 6379
        guard (1...65_535).contains(port) else { throw invalid("port out of range") }
        let user = components.user?.percentDecoded
        let password = components.password?.percentDecoded
        if let password {
            self.user = (user?.isEmpty ?? true) ? nil : user
            self.password = password
        } else {
            // `redis://secret@host`: a lone user part is the password, as redis-cli reads it.
            self.user = nil
            self.password = (user?.isEmpty ?? true) ? nil : user
        }
        var path = Substring(components.path)
        while path.first == "/" { path.removeFirst() }
        while path.last == "/" { path.removeLast() }
        if path.isEmpty {
            database = 0
        } else if let number = Int(path), number >= 0 {
            database = number
        } else {
            throw invalid("database \"\(path)\" is not a number")
        }
    }

    /// `redis://host:port/db`, without credentials: how the node is named in logs, errors and metrics.
    public var description: String {
        let host = self.host.contains(literal: ":") ? "[\(self.host)]" : self.host
        return "\(usesTLS ? "rediss" : "redis")://\(host):\(port)" + (database == 0 ? "" : "/\(database)")
    }

    private static func redacted(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@"), let scheme = text.range(ofLiteral: "://") else { return text }
        return String(text[..<scheme.upperBound]) + "***" + String(text[at...])
    }
}
