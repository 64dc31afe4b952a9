import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// The default loader: swift-server's async-http-client on SwiftNIO's shared event loops.
///
/// It waits without spinning (a request held by a stalled server costs no CPU) and keeps
/// sub-second timeouts, where Linux's `URLSession` does neither. Redirects are not followed
/// here: ``ImageDownloader`` follows them itself.
///
/// Call ``shutdown()`` when done with a loader you created; a loader dropped without it
/// shuts its client down in the background.
public final class AsyncHTTPClientImageLoader: ImageDataLoading {
    /// Settings of the underlying client.
    public struct Configuration: Sendable {
        /// How long establishing a connection (TCP and TLS) may take (default 10 s).
        public var connectTimeout: Duration
        /// How long the connection may stay silent while a response is awaited or streams
        /// (default `nil`: no limit here; the downloader's total timeout still applies).
        public var readTimeout: Duration?
        /// Connections kept open per host (default 8, at least the downloader's per-host limit).
        public var maximumConnectionsPerHost: Int
        /// How long an idle pooled connection is kept (default 60 s).
        public var idleConnectionTimeout: Duration
        /// Host names connected to at a given address instead of the one DNS gives (default
        /// empty). TLS still checks the certificate against the host name, so a caller that
        /// resolved and vetted an address can make sure the connection goes exactly there.
        public var dnsOverride: [String: String] = [:]

        /// Creates settings; every parameter defaults to the value stated on its property.
        public init(connectTimeout: Duration = .seconds(10), readTimeout: Duration? = nil,
                    maximumConnectionsPerHost: Int = 8, idleConnectionTimeout: Duration = .seconds(60)) {
            self.connectTimeout = connectTimeout
            self.readTimeout = readTimeout
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
            self.idleConnectionTimeout = idleConnectionTimeout
        }
    }

    /// The settings the loader was created with.
    public let configuration: Configuration
    private let client: HTTPClient
    private let isShutDown = Mutex(false)

    /// Creates a loader with its own client on the process-wide NIO event loop group.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        var pool = HTTPClient.Configuration.ConnectionPool(
            idleTimeout: configuration.idleConnectionTimeout.timeAmount,
            concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, configuration.maximumConnectionsPerHost))
        // The downloader's retry strategy decides about retrying; a refused connection is reported at once.
        pool.retryConnectionEstablishment = false
        var clientConfiguration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: configuration.connectTimeout.timeAmount, read: configuration.readTimeout?.timeAmount),
            connectionPool: pool,
            decompression: .disabled)
        clientConfiguration.dnsOverride = configuration.dnsOverride
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
    }

    deinit {
        if !isShutDown.withLock({ $0 }) {
            // Not blocking: the client keeps itself alive until its connections are closed.
            _ = client.shutdown()
        }
    }

    public func load(_ request: DownloadRequest) async throws -> ImageDataLoaderResponse {
        var clientRequest = HTTPClientRequest(url: request.url.absoluteString)
        clientRequest.method = .GET
        for field in request.headers {
            clientRequest.headers.add(name: field.name, value: field.value)
        }
        let response: HTTPClientResponse
        do {
            response = try await client.execute(clientRequest, deadline: .distantFuture)
        } catch {
            throw mapError(error, url: request.url)
        }
        var headers = HTTPHeaderFields()
        for (name, value) in response.headers {
            headers.add(name: name, value: value)
        }
        return ImageDataLoaderResponse(statusCode: Int(response.status.code), headers: headers,
                                       body: ImageDataBody(ByteBufferChunks(base: response.body, url: request.url, loader: self)))
    }

    public func shutdown() async {
        let alreadyShutDown = isShutDown.withLock { state in
            defer { state = true }
            return state
        }
        guard !alreadyShutDown else { return }
        try? await client.shutdown()
    }

    /// Turns the client's errors into the ones ``ImageDataLoading`` names.
    fileprivate func mapError(_ error: any Error, url: URL) -> any Error {
        guard let clientError = error as? HTTPClientError else { return error }
        switch clientError {
        case .cancelled:
            return CancellationError()
        case .connectTimeout, .getConnectionFromPoolTimeout:
            return AlcedoError.requestError(reason: .connectTimedOut(url, limit: configuration.connectTimeout))
        default:
            return error
        }
    }
}

/// The client's body as `Data` chunks, with its errors mapped.
private struct ByteBufferChunks: AsyncSequence, Sendable {
    typealias Element = Data

    let base: HTTPClientResponse.Body
    let url: URL
    let loader: AsyncHTTPClientImageLoader

    func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator(), url: url, loader: loader) }

    struct Iterator: AsyncIteratorProtocol {
        var base: HTTPClientResponse.Body.AsyncIterator
        let url: URL
        let loader: AsyncHTTPClientImageLoader

        mutating func next() async throws -> Data? {
            do {
                guard let buffer = try await base.next() else { return nil }
                return Data(sharing: buffer)
            } catch {
                throw loader.mapError(error, url: url)
            }
        }
    }
}

extension Data {
    /// The readable bytes of `buffer`, without copying them: the `Data` keeps the buffer's
    /// storage alive, and NIO will not write into storage that is still referenced.
    init(sharing buffer: ByteBuffer) {
        self = buffer.withUnsafeReadableBytesWithStorageManagement { bytes, storage in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return Data() }
            _ = storage.retain()
            return Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: bytes.count,
                        deallocator: .custom { _, _ in storage.release() })
        }
    }
}

extension Duration {
    /// The duration as a NIO `TimeAmount` (nanosecond precision).
    var timeAmount: TimeAmount {
        let (seconds, attoseconds) = components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
