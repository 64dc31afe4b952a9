import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A small HTTP/1.1 server on 127.0.0.1 that serves the demo's sample images, so the demo
/// shows real downloads without anything leaving the machine.
///
/// Every sample is served at `/NAME` with `Content-Type`, `Content-Length`, a strong `ETag`,
/// `Last-Modified` and `Cache-Control: max-age=3600`. A `GET` or `HEAD` whose `If-None-Match`
/// lists the sample's entity tag (or `*`) is answered `304 Not Modified` without a body; so is
/// one without `If-None-Match` whose `If-Modified-Since` equals the `Last-Modified` sent (clients
/// echo the value back). Unknown paths get `404`, other methods `405`. Keep-alive is honoured.
final class DemoHTTPServer: Sendable {
    /// What the server answered so far.
    struct Statistics: Sendable, Equatable {
        /// `200` responses.
        var ok = 0
        /// `304` responses.
        var notModified = 0
        /// Any other status (`404`, `405`).
        var failed = 0
        /// Body bytes sent.
        var bodyBytes = 0
    }

    /// The port the server listens on.
    let port: Int
    private let log: DemoServerLog
    private let channel: any Channel

    private init(port: Int, log: DemoServerLog, channel: any Channel) {
        self.port = port
        self.log = log
        self.channel = channel
    }

    /// Starts serving `samples` on 127.0.0.1:`port` (0: a free port the system picks).
    static func start(samples: [DemoSample], port: Int = 0) async throws -> DemoHTTPServer {
        let routes = Dictionary(samples.map { ("/" + $0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let log = DemoServerLog()
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(DemoRequestHandler(routes: routes, log: log))
                }
            }
        let channel = try await bootstrap.bind(host: "127.0.0.1", port: port).get()
        guard let boundPort = channel.localAddress?.port else {
            try? await channel.close()
            throw CLIFailure(path: "127.0.0.1:\(port)", reason: "the server socket has no port")
        }
        return DemoHTTPServer(port: boundPort, log: log, channel: channel)
    }

    /// The URL of `path` (`/valley.jpg`) on this server.
    func url(_ path: String) -> URL {
        // The path is one of the sample names, which are plain file names.
        URL(string: "http://127.0.0.1:\(port)\(path.hasPrefix("/") ? path : "/" + path)")
            ?? URL(fileURLWithPath: "/")
    }

    /// What the server answered so far.
    var statistics: Statistics { log.snapshot }

    /// Stops listening; open connections close as their requests end.
    func shutdown() async {
        try? await channel.close()
    }
}

/// The server's counters, shared by every connection.
final class DemoServerLog: Sendable {
    private let counts = Mutex(DemoHTTPServer.Statistics())

    var snapshot: DemoHTTPServer.Statistics { counts.withLock { $0 } }

    func record(_ status: HTTPResponseStatus, bodyBytes: Int) {
        counts.withLock {
            switch status {
            case .ok: $0.ok += 1
            case .notModified: $0.notModified += 1
            default: $0.failed += 1
            }
            $0.bodyBytes += bodyBytes
        }
    }
}

/// Answers the requests of one connection.
private final class DemoRequestHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let routes: [String: DemoSample]
    private let log: DemoServerLog
    private var head: HTTPRequestHead?

    init(routes: [String: DemoSample], log: DemoServerLog) {
        self.routes = routes
        self.log = log
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
        case .body:
            break
        case .end:
            guard let head else { return }
            self.head = nil
            respond(to: head, context: context)
        }
    }

    private func respond(to request: HTTPRequestHead, context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Server", value: "alcedo-demo")
        var status = HTTPResponseStatus.ok
        var body: Data?
        let path = request.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""

        if request.method != .GET && request.method != .HEAD {
            status = .methodNotAllowed
            headers.add(name: "Allow", value: "GET, HEAD")
            body = Data()
        } else if let sample = routes[path] {
            headers.add(name: "ETag", value: sample.etag)
            headers.add(name: "Last-Modified", value: sample.lastModified)
            headers.add(name: "Cache-Control", value: "max-age=3600")
            if Self.isNotModified(request.headers, sample) {
                status = .notModified
            } else {
                headers.add(name: "Content-Type", value: sample.contentType)
                body = sample.data
            }
        } else {
            status = .notFound
            headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
            body = Data("not found\n".utf8)
        }
        if let body { headers.add(name: "Content-Length", value: String(body.count)) }
        if !request.isKeepAlive { headers.add(name: "Connection", value: "close") }

        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))), promise: nil)
        var sent = 0
        if let body, !body.isEmpty, request.method != .HEAD {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
            sent = body.count
        }
        log.record(status, bodyBytes: sent)
        let channel = context.channel
        let keepAlive = request.isKeepAlive
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            if !keepAlive { channel.close(promise: nil) }
        }
    }

    /// `true` when the request's validators match `sample`: `If-None-Match` first, then
    /// `If-Modified-Since` (compared as the exact string the server sent).
    private static func isNotModified(_ headers: HTTPHeaders, _ sample: DemoSample) -> Bool {
        let noneMatch = headers[canonicalForm: "If-None-Match"]
        if !noneMatch.isEmpty {
            return noneMatch.contains { tag in
                let trimmed = tag.trimmingSpaces()
                return trimmed == "*" || trimmed == sample.etag || trimmed == "W/" + sample.etag
            }
        }
        guard let since = headers.first(name: "If-Modified-Since") else { return false }
        return since.trimmingSpaces() == sample.lastModified
    }
}
