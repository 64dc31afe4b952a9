import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// A loopback HTTP/1.1 server answering `GET /<name>` with files held in memory, keep-alive,
/// on a free port of 127.0.0.1. Every participant of the benchmark downloads from it.
final class FileServer: Sendable {
    let port: Int
    private let channel: any Channel

    private init(port: Int, channel: any Channel) {
        self.port = port
        self.channel = channel
    }

    /// Starts serving `files` (name to bytes) on `group`.
    static func start(files: [String: Data], group: MultiThreadedEventLoopGroup) async throws -> FileServer {
        let buffers = files.mapValues { ByteBuffer(bytes: $0) }
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(Handler(files: buffers))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        guard let port = channel.localAddress?.port else { throw ChannelError.unknownLocalAddress }
        return FileServer(port: port, channel: channel)
    }

    /// `http://127.0.0.1:<port>/`.
    var baseURL: String { "http://127.0.0.1:\(port)/" }

    func stop() async {
        try? await channel.close()
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let files: [String: ByteBuffer]
        private var head: HTTPRequestHead?

        init(files: [String: ByteBuffer]) {
            self.files = files
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let request): head = request
            case .body: break
            case .end:
                guard let request = head else { return }
                head = nil
                let name = String(request.uri.dropFirst().prefix { $0 != "?" })
                var headers = HTTPHeaders()
                let body = files[name]
                headers.add(name: "Content-Length", value: String(body?.readableBytes ?? 0))
                headers.add(name: "Content-Type", value: body == nil ? "text/plain" : "image/jpeg")
                headers.add(name: "Connection", value: request.isKeepAlive ? "keep-alive" : "close")
                let status: HTTPResponseStatus = body == nil ? .notFound : .ok
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))),
                              promise: nil)
                if let body { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
                let keepAlive = request.isKeepAlive
                context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
                    if !keepAlive { context.close(promise: nil) }
                }
            }
        }
    }
}
