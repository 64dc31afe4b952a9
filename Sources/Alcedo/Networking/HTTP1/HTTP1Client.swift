#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// Alcedo's HTTP/1.1 client for origin requests (GET) and object-store requests (PUT, DELETE,
/// POST with a body held in memory): one request at a time per connection, idle connections
/// kept per scheme, host and port.
///
/// Everything the origin sends is checked before it is acted on (status codes, framing by
/// SwiftNIO's decoder, the body's pace set by its consumer), so no response can reach a
/// precondition: the reason Alcedo does not hand origin traffic to a general-purpose client.
final class HTTP1Client: Sendable {
    struct Settings: Sendable, Equatable {
        var connectTimeout: Duration
        var readTimeout: Duration?
        var maximumIdleConnectionsPerHost: Int
        var idleConnectionTimeout: Duration
        var dnsOverride: [String: String]
    }

    /// Where a request goes, worked out from its URL.
    struct Target: Sendable {
        var isTLS: Bool
        /// The host to connect to: a name, or an IP address without brackets.
        var host: String
        var port: Int
        /// The `Host` header's value.
        var hostHeader: String
        /// The request line's target: the percent-encoded path (at least `/`) and query.
        var requestURI: String

        var key: PoolKey { PoolKey(isTLS: isTLS, host: host.lowercased(), port: port) }

        /// The target of an `http` or `https` URL, or `nil` when the URL has neither scheme
        /// or no host (``RequestURLCheck`` has vetted the rest).
        init?(_ url: URL) {
            guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
                  var host = url.host(percentEncoded: false), !host.isEmpty else { return nil }
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            isTLS = scheme == "https"
            let defaultPort = isTLS ? 443 : 80
            port = url.port ?? defaultPort
            self.host = host
            let bracketed = host.contains(":") ? "[\(host)]" : host
            hostHeader = port == defaultPort ? bracketed : "\(bracketed):\(port)"
            var uri = url.path(percentEncoded: true)
            if uri.isEmpty { uri = "/" }
            if let query = url.query(percentEncoded: true) { uri += "?" + query }
            requestURI = uri
        }
    }

    struct PoolKey: Hashable, Sendable {
        var isTLS: Bool
        var host: String
        var port: Int
    }

    /// One open connection and its handler.
    final class Connection: Sendable {
        let channel: any Channel
        let handler: NIOLoopBound<HTTP1ResponseHandler>
        let key: PoolKey
        let idleTimer = Mutex<Scheduled<Void>?>(nil)

        init(channel: any Channel, handler: NIOLoopBound<HTTP1ResponseHandler>, key: PoolKey) {
            self.channel = channel
            self.handler = handler
            self.key = key
        }
    }

    private struct Pool {
        var idle: [PoolKey: [Connection]] = [:]
        var isShutDown = false
    }

    let settings: Settings
    private let pool = Mutex(Pool())
    private let tlsContext: Mutex<NIOSSLContext?> = Mutex(nil)
    private var group: any EventLoopGroup { MultiThreadedEventLoopGroup.singleton }

    init(settings: Settings) {
        self.settings = settings
    }

    /// Sends a GET for `target` with `headers` and returns the response head; the body follows
    /// in the response.
    func get(_ target: Target, headers: [(name: String, value: String)]) async throws -> HTTP1Response {
        try await send(target, method: .GET, headers: headers, body: nil)
    }

    /// Sends `method` for `target` with `headers` and `body` (its `Content-Length` added; `nil`:
    /// none) and returns the response head; the body follows in the response. Only for
    /// idempotent requests: one that fails before any response byte is sent once more.
    func send(_ target: Target, method: HTTPMethod, headers: [(name: String, value: String)],
              body: ByteBuffer?) async throws -> HTTP1Response {
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: target.requestURI)
        if !headers.contains(where: { $0.name.lowercased() == "host" }) {
            head.headers.add(name: "Host", value: target.hostHeader)
        }
        for field in headers { head.headers.add(name: field.name, value: field.value) }
        if let body { head.headers.replaceOrAdd(name: "Content-Length", value: String(body.readableBytes)) }

        // A connection closed before any response byte (a pooled one the origin closed while
        // it waited, or a fresh one dropped at once) gets this GET once more, on a new
        // connection, as browsers do; a second such failure is reported.
        let first: Connection
        if let pooled = takeIdle(target.key) {
            first = pooled
        } else {
            first = try await connect(target)
        }
        do {
            return try await send(head, body: body, on: first)
        } catch HTTP1ClientError.closedBeforeResponse where !Task.isCancelled {}
        return try await send(head, body: body, on: try await connect(target))
    }

    /// Closes every idle connection; connections in use close when their response ends.
    func shutdown() async {
        let idle = pool.withLock { pool -> [Connection] in
            pool.isShutDown = true
            defer { pool.idle = [:] }
            return pool.idle.values.flatMap { $0 }
        }
        for connection in idle {
            connection.idleTimer.withLock { $0?.cancel() }
            try? await connection.channel.close()
        }
    }

    // MARK: Sending

    private func send(_ head: HTTPRequestHead, body: ByteBuffer?, on connection: Connection) async throws -> HTTP1Response {
        let promise = connection.channel.eventLoop.makePromise(of: HTTP1Response.self)
        let handler = connection.handler
        connection.channel.eventLoop.execute { handler.value.start(head, body: body, promise: promise) }
        let channel = connection.channel
        return try await withTaskCancellationHandler {
            do {
                return try await promise.futureResult.get()
            } catch {
                if Task.isCancelled { throw CancellationError() }
                throw error
            }
        } onCancel: {
            channel.close(promise: nil)
        }
    }

    // MARK: The pool

    private func takeIdle(_ key: PoolKey) -> Connection? {
        while let connection = pool.withLock({ pool -> Connection? in
            defer { if pool.idle[key]?.isEmpty == true { pool.idle[key] = nil } }
            return pool.idle[key]?.popLast()
        }) {
            connection.idleTimer.withLock { timer in
                timer?.cancel()
                timer = nil
            }
            if connection.channel.isActive { return connection }
        }
        return nil
    }

    /// Keeps `connection` for the next request to its host, or closes it when the pool is full
    /// or shut down. Called on the connection's event loop.
    private func park(_ connection: Connection) {
        let kept = pool.withLock { pool -> Bool in
            guard !pool.isShutDown,
                  pool.idle[connection.key, default: []].count < max(1, settings.maximumIdleConnectionsPerHost)
            else { return false }
            pool.idle[connection.key, default: []].append(connection)
            return true
        }
        guard kept else {
            connection.channel.close(promise: nil)
            return
        }
        let timer = connection.channel.eventLoop.scheduleTask(in: settings.idleConnectionTimeout.timeAmount) { [weak self] in
            self?.remove(connection)
            connection.channel.close(promise: nil)
        }
        connection.idleTimer.withLock { $0 = timer }
    }

    private func remove(_ connection: Connection) {
        pool.withLock { pool in
            pool.idle[connection.key]?.removeAll { $0 === connection }
            // No entry is kept for a host without idle connections: source URLs name any number of hosts.
            if pool.idle[connection.key]?.isEmpty == true { pool.idle[connection.key] = nil }
        }
    }

    // MARK: Connecting

    private func connect(_ target: Target) async throws -> Connection {
        let sslContext = target.isTLS ? try clientTLSContext() : nil
        let serverName = Self.isIPAddress(target.host) ? nil : target.host
        let readTimeout = settings.readTimeout
        // The handler of each channel made (one connection attempt per address), found again by
        // its channel: a lookup in the pipeline would miss it when the channel failed at once.
        let handlers = Mutex<[ObjectIdentifier: NIOLoopBound<HTTP1ResponseHandler>]>([:])
        var bootstrap = ClientBootstrap(group: group)
            .connectTimeout(settings.connectTimeout.timeAmount)
            .channelOption(.socketOption(.so_keepalive), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let operations = channel.pipeline.syncOperations
                    if let readTimeout {
                        try operations.addHandler(IdleStateHandler(readTimeout: readTimeout.timeAmount))
                    }
                    if let sslContext {
                        try operations.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverName))
                    }
                    try operations.addHTTPClientHandlers()
                    let handler = HTTP1ResponseHandler()
                    try operations.addHandler(handler)
                    let bound = NIOLoopBound(handler, eventLoop: channel.eventLoop)
                    handlers.withLock { $0[ObjectIdentifier(channel)] = bound }
                }
            }
        bootstrap = bootstrap.channelOption(.tcpOption(.tcp_nodelay), value: 1)
        let channel: any Channel
        if let address = settings.dnsOverride[target.host] {
            channel = try await bootstrap.connect(to: SocketAddress(ipAddress: address, port: target.port)).get()
        } else {
            channel = try await bootstrap.connect(host: target.host, port: target.port).get()
        }
        guard let bound = handlers.withLock({ $0[ObjectIdentifier(channel)] }) else {
            channel.close(promise: nil)
            throw HTTP1ClientError.closedBeforeResponse
        }
        let connection = Connection(channel: channel, handler: bound, key: target.key)
        // The handler holds its connection until the channel closes (it lets go then).
        try await channel.eventLoop.submit {
            bound.value.onReusable = { [weak self] in self?.park(connection) }
        }.get()
        return connection
    }

    private func clientTLSContext() throws -> NIOSSLContext {
        try tlsContext.withLock { context in
            if let context { return context }
            let made = try NIOSSLContext(configuration: .makeClientConfiguration())
            context = made
            return made
        }
    }

    private static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }
}
