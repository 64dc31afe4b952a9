import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// A loader that checks the address it connects to before every request, redirects included
/// (the downloader follows redirects itself, through the loader).
///
/// It resolves the host itself, refuses the request when any of its addresses is forbidden
/// by the ``SourceGuard``, and then connects to exactly the address it checked: the request
/// goes through an ``HTTPImageLoader`` whose DNS override pins the host name to
/// that address (TLS still verifies the certificate for the host name). A DNS answer that
/// changes between the check and the connection (rebinding) therefore cannot take the
/// request elsewhere.
public final class GuardedImageLoader: ImageDataLoading {
    /// The checks applied.
    public let sourceGuard: SourceGuard
    private let configuration: HTTPImageLoader.Configuration
    private let direct: HTTPImageLoader
    private let pinned = Mutex<[String: HTTPImageLoader]>([:])
    /// Pinned clients kept for reuse; past this many, the oldest set is dropped (each client
    /// closes its connections once its last request is over).
    private static let pinnedLimit = 64

    /// Creates a loader that checks every connection with `sourceGuard`.
    public init(sourceGuard: SourceGuard, configuration: HTTPImageLoader.Configuration = .init()) {
        self.sourceGuard = sourceGuard
        self.configuration = configuration
        direct = HTTPImageLoader(configuration: configuration)
    }

    public func load(_ request: DownloadRequest) async throws -> ImageDataLoaderResponse {
        guard let host = request.url.host, !host.isEmpty else { throw SourceRefusal("\(request.url.absoluteString) has no host") }
        if sourceGuard.allowPrivateNetworks || sourceGuard.trustedHosts.contains(host.lowercased()) {
            return try await direct.load(request)
        }
        if let literal = IPAddress(host) {
            try sourceGuard.checkAddress(literal, host: host)
            return try await direct.load(request)
        }
        let addresses = try await IPAddress.resolve(host)
        for address in addresses { try sourceGuard.checkAddress(address, host: host) }
        return try await client(host: host, address: addresses[0]).load(request)
    }

    private func client(host: String, address: IPAddress) -> HTTPImageLoader {
        let key = "\(host)|\(address)"
        return pinned.withLock { clients in
            if let client = clients[key] { return client }
            if clients.count >= Self.pinnedLimit { clients.removeAll() }
            var settings = configuration
            settings.dnsOverride = [host: address.description]
            let client = HTTPImageLoader(configuration: settings)
            clients[key] = client
            return client
        }
    }

    public func shutdown() async {
        await direct.shutdown()
        let clients = pinned.withLock { clients in
            defer { clients.removeAll() }
            return Array(clients.values)
        }
        for client in clients { await client.shutdown() }
    }
}
