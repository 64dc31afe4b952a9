#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore
import NIOHTTP1
import Synchronization

/// The default loader for `http` and `https` URLs: Alcedo's own HTTP/1.1 client on SwiftNIO's
/// shared event loops, with idle connections kept per host.
///
/// It waits without spinning (a request held by a stalled server costs no CPU) and keeps
/// sub-second timeouts, where Linux's `URLSession` does neither. Everything an origin sends is
/// checked before it is acted on: a status line whose code is not an HTTP status (`HTTP/1.1 000`,
/// `099`) or an unrequested `101` is a rejected response, malformed framing is SwiftNIO's
/// decoder error, and the body is read from the socket only as fast as it is consumed. So no
/// origin can make the process trap, as one could through a general-purpose client that
/// asserts on such responses. Redirects are not followed here: ``ImageDownloader`` follows
/// them itself.
///
/// Call ``shutdown()`` when done with a loader you created; a loader dropped without it
/// closes its idle connections in the background.
public final class HTTPImageLoader: ImageDataLoading {
    /// Settings of the client.
    public struct Configuration: Sendable {
        /// How long establishing a connection (TCP) may take (default 10 s).
        public var connectTimeout: Duration
        /// How long the connection may stay silent while a response is awaited or streams
        /// (default `nil`: no limit here; the downloader's total timeout still applies).
        public var readTimeout: Duration?
        /// Idle connections kept open per host for later requests (default 8).
        public var maximumConnectionsPerHost: Int
        /// How long an idle connection is kept (default 60 s).
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

        var settings: HTTP1Client.Settings {
            HTTP1Client.Settings(connectTimeout: connectTimeout, readTimeout: readTimeout,
                                 maximumIdleConnectionsPerHost: maximumConnectionsPerHost,
                                 idleConnectionTimeout: idleConnectionTimeout, dnsOverride: dnsOverride)
        }
    }

    private struct State {
        var configuration: Configuration
        var client: HTTP1Client
        /// Clients replaced by a configuration change, still finishing their requests; shut
        /// down with the loader.
        var retired: [HTTP1Client] = []
        var isShutDown = false
    }

    private let state: Mutex<State>

    /// The loader's settings. Settable while it runs (thread-safe): requests that start after a
    /// change use a new client with the new settings; those in flight finish on the old one.
    public var configuration: Configuration {
        get { state.withLock { $0.configuration } }
        set {
            // Only a real change needs a new client.
            guard newValue.settings != self.configuration.settings else { return }
            let client = HTTP1Client(settings: newValue.settings)
            let unused: HTTP1Client? = state.withLock { state in
                guard !state.isShutDown else { return client }
                state.retired.append(state.client)
                state.client = client
                state.configuration = newValue
                return nil
            }
            if let unused { Task { await unused.shutdown() } }
        }
    }

    private var client: HTTP1Client { state.withLock { $0.client } }

    /// Creates a loader with its own connection pool on the process-wide NIO event loop group.
    public init(configuration: Configuration = Configuration()) {
        state = Mutex(State(configuration: configuration, client: HTTP1Client(settings: configuration.settings)))
    }

    deinit {
        let clients = state.withLock { $0.isShutDown ? [] : [$0.client] + $0.retired }
        guard !clients.isEmpty else { return }
        Task { for client in clients { await client.shutdown() } }
    }

    public func load(_ request: DownloadRequest) async throws -> ImageDataLoaderResponse {
        try await send(method: .GET, url: request.url, headers: request.headers, body: nil)
    }

    /// Sends an idempotent request (GET, PUT, DELETE; a POST only when repeating it is
    /// harmless) with a body held in memory (`nil`: none): what the object-store client sends.
    func send(method: HTTPMethod, url: URL, headers: HTTPHeaderFields, body: ByteBuffer?) async throws -> ImageDataLoaderResponse {
        // Ports, hosts and lengths are checked before any socket code sees them, whoever
        // calls this loader.
        try RequestURLCheck.validateHTTPURL(url)
        let routed = LoopbackRouting.route(url) ?? url
        guard let target = HTTP1Client.Target(routed) else {
            throw AlcedoError.requestError(reason: .invalidURL(request: .malformed(routed.absoluteString)))
        }
        let response: HTTP1Response
        do {
            // Inside a traced request, the origin or store gets the trace context (`traceparent`).
            let sent = TraceContextPropagation.adding(to: headers)
            response = try await client.send(target, method: method, headers: sent.map { ($0.name, $0.value) }, body: body)
        } catch {
            throw mapError(error, url: url)
        }
        var fields = HTTPHeaderFields()
        for (name, value) in response.headers {
            fields.add(name: name, value: value)
        }
        return ImageDataLoaderResponse(statusCode: response.status, headers: fields,
                                       body: ImageDataBody(ByteBufferChunks(base: response.body, url: url, loader: self)))
    }

    /// Closes the loader's idle connections; requests that start afterwards still work on
    /// new connections, which are not kept.
    public func shutdown() async {
        let clients: [HTTP1Client] = state.withLock { state in
            guard !state.isShutDown else { return [] }
            state.isShutDown = true
            return [state.client] + state.retired
        }
        for client in clients { await client.shutdown() }
    }

    /// Turns the client's errors into the ones ``ImageDataLoading`` names.
    fileprivate func mapError(_ error: any Error, url: URL) -> any Error {
        switch error {
        case let error as HTTP1ClientError:
            switch error {
            case .malformedStatus(let code):
                let message = code == 101 ? "the origin switched protocols though none was asked for"
                    : "the status line's code \(code) is not an HTTP status code"
                return AlcedoError.responseError(reason: .invalidURLResponse(response: .rejected(url, message: message)))
            case .closedBeforeResponse, .closedDuringBody:
                return AlcedoError.networkError(reason: .connectionReset(url))
            case .readTimeout:
                return AlcedoError.networkError(reason: .timedOut(url, limit: configuration.readTimeout ?? .zero))
            }
        case let error as ChannelError:
            if case .connectTimeout = error {
                return AlcedoError.networkError(reason: .connectTimedOut(url, limit: configuration.connectTimeout))
            }
            return error
        case let error as HTTPParserError where error == .invalidEOFState:
            // The origin closed the connection inside a head or a body.
            return AlcedoError.networkError(reason: .connectionReset(url))
        case let error as HTTPParserError:
            return AlcedoError.responseError(reason: .invalidURLResponse(
                response: .rejected(url, message: "the response is not valid HTTP/1.1 (\(error))")))
        default:
            return error
        }
    }
}

/// The old name of ``HTTPImageLoader``, from when async-http-client carried its requests.
@available(*, deprecated, renamed: "HTTPImageLoader")
public typealias AsyncHTTPClientImageLoader = HTTPImageLoader

/// The client's body as `Data` chunks, with its errors mapped.
private struct ByteBufferChunks: AsyncSequence, Sendable {
    typealias Element = Data

    let base: HTTP1ResponseBody
    let url: URL
    let loader: HTTPImageLoader

    func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator(), url: url, loader: loader) }

    struct Iterator: AsyncIteratorProtocol {
        var base: HTTP1ResponseBody.AsyncIterator
        let url: URL
        let loader: HTTPImageLoader

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
