import AsyncHTTPClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
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

    private struct State {
        var configuration: Configuration
        var client: HTTPClient
        /// Clients replaced by a configuration change, still finishing their requests; shut
        /// down with the loader.
        var retired: [HTTPClient] = []
        var isShutDown = false
    }

    private let state: Mutex<State>

    /// The loader's settings. Settable while it runs (thread-safe): requests that start after a
    /// change use a new client with the new settings; those in flight finish on the old one.
    public var configuration: Configuration {
        get { state.withLock { $0.configuration } }
        set {
            // Only a real change needs a new client.
            let current = self.configuration
            guard newValue.connectTimeout != current.connectTimeout || newValue.readTimeout != current.readTimeout
                || newValue.maximumConnectionsPerHost != current.maximumConnectionsPerHost
                || newValue.idleConnectionTimeout != current.idleConnectionTimeout
                || newValue.dnsOverride != current.dnsOverride else { return }
            let client = Self.makeClient(newValue)
            let unused: HTTPClient? = state.withLock { state in
                guard !state.isShutDown else { return client }
                state.retired.append(state.client)
                state.client = client
                state.configuration = newValue
                return nil
            }
            if let unused { _ = unused.shutdown() }
        }
    }

    private var client: HTTPClient { state.withLock { $0.client } }

    /// Creates a loader with its own client on the process-wide NIO event loop group.
    public init(configuration: Configuration = Configuration()) {
        state = Mutex(State(configuration: configuration, client: Self.makeClient(configuration)))
    }

    private static func makeClient(_ configuration: Configuration) -> HTTPClient {
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
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
    }

    deinit {
        let clients = state.withLock { $0.isShutDown ? [] : [$0.client] + $0.retired }
        // Not blocking: a client keeps itself alive until its connections are closed.
        for client in clients { _ = client.shutdown() }
    }

    public func load(_ request: DownloadRequest) async throws -> ImageDataLoaderResponse {
        // The client converts the port and host without checking them (a port above 65,535
        // stops the process): nothing unchecked reaches it, whoever calls this loader.
        try RequestURLCheck.validateHTTPURL(request.url)
        var clientRequest = HTTPClientRequest(url: (LoopbackRouting.route(request.url) ?? request.url).absoluteString)
        clientRequest.method = .GET
        for field in request.headers {
            clientRequest.headers.add(name: field.name, value: field.value)
        }
        let response: HTTPClientResponse
        do {
            response = try await client.execute(clientRequest, deadline: .distantFuture)
        } catch where Self.isStaleConnection(error) && !Task.isCancelled {
            // A pooled keep-alive connection the server had closed while idle (without
            // `Connection: close`): the request never reached a live server and no response
            // byte arrived, so this GET is sent once more, on a fresh connection, as browsers
            // and the client's own retry policy do. A second failure is reported.
            do {
                response = try await client.execute(clientRequest, deadline: .distantFuture)
            } catch {
                throw mapError(error, url: request.url)
            }
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
        let clients: [HTTPClient] = state.withLock { state in
            guard !state.isShutDown else { return [] }
            state.isShutDown = true
            return [state.client] + state.retired
        }
        for client in clients { try? await client.shutdown() }
    }

    /// `true` for the errors of a connection found closed before any byte of the response
    /// arrived (`execute` returns when the response head has arrived, so these come before it):
    /// the remote end closed it, I/O on a channel already closed, end of file, reset or broken pipe.
    static func isStaleConnection(_ error: any Error) -> Bool {
        switch error {
        case let error as HTTPClientError:
            return error == .remoteConnectionClosed
        case let error as ChannelError:
            return error == .ioOnClosedChannel || error == .eof || error == .outputClosed
        case let error as IOError:
            return error.errnoCode == ECONNRESET || error.errnoCode == EPIPE
        default:
            return false
        }
    }

    /// Turns the client's errors into the ones ``ImageDataLoading`` names.
    fileprivate func mapError(_ error: any Error, url: URL) -> any Error {
        guard let clientError = error as? HTTPClientError else { return error }
        switch clientError {
        case .cancelled:
            return CancellationError()
        case .connectTimeout, .getConnectionFromPoolTimeout:
            return AlcedoError.networkError(reason: .connectTimedOut(url, limit: configuration.connectTimeout))
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
