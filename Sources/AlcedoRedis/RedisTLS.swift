import Alcedo
import NIOSSL

/// The TLS side of `rediss://` nodes: one client context per storage, trusting
/// ``RedisConfiguration/caFile`` when given, and which errors are TLS handshake failures.
enum RedisTLS {
    /// The client context for the storage's TLS nodes: ``RedisConfiguration/tlsConfiguration``
    /// (default: `makeClientConfiguration()`, full verification), its trust roots replaced by the
    /// certificates of ``RedisConfiguration/caFile`` when that is set.
    /// - Throws: ``Alcedo/SharedStorageErrorReason/invalidConfiguration(_:)`` when the CA file
    ///   cannot be read, holds no PEM certificate, or the context cannot be made.
    static func makeContext(_ configuration: RedisConfiguration) throws(AlcedoError) -> NIOSSLContext {
        func invalid(_ message: String) -> AlcedoError {
            .cacheError(reason: .sharedStorageError(reason: .invalidConfiguration(message)))
        }
        var tls = configuration.tlsConfiguration ?? .makeClientConfiguration()
        if let path = configuration.caFile {
            let certificates: [NIOSSLCertificate]
            do {
                certificates = try NIOSSLCertificate.fromPEMFile(path)
            } catch {
                throw invalid("cannot read the Redis CA file \"\(path)\": \(error)")
            }
            guard !certificates.isEmpty else { throw invalid("the Redis CA file \"\(path)\" holds no PEM certificate") }
            tls.trustRoots = .certificates(certificates)
        }
        do {
            return try NIOSSLContext(configuration: tls)
        } catch {
            throw invalid("cannot set up TLS for Redis: \(error)")
        }
    }

    /// Whether `error` is the TLS handshake failing (an untrusted or mismatched certificate, a
    /// peer that does not speak TLS), rather than the connection dropping.
    static func isHandshakeFailure(_ error: any Error) -> Bool {
        if error is BoringSSLError { return true }
        if let error = error as? NIOSSLError, case .handshakeFailed = error { return true }
        return false
    }
}
