import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// A loopback HTTP/1.1 file server on SwiftNIO: every file of a folder, held in memory, at
/// `/<name>` with `Content-Length` and keep-alive; and `/stall`, a 1 MB body that stops
/// after its first 1 KB and never ends.
enum FileServer {
    static func run(directory: URL) async throws {
        var files: [String: ByteBuffer] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let data = try Data(contentsOf: directory.appendingPathComponent(name))
            files["/" + name] = ByteBuffer(bytes: data)
        }
        let table = files
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 512)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(FileHandler(files: table))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        FileHandle.standardOutput.write(Data("PORT \(channel.localAddress?.port ?? 0)\n".utf8))
        try await channel.closeFuture.get()
    }
}

private final class FileHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let files: [String: ByteBuffer]
    private var head: HTTPRequestHead?

    init(files: [String: ByteBuffer]) {
        self.files = files
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            let path = String(head.uri.split(separator: "?").first ?? "")
            if path == "/stall" {
                let headers = HTTPHeaders([("Content-Length", "1048576"), ("Content-Type", "image/jpeg")])
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
                var start = context.channel.allocator.buffer(capacity: 1024)
                start.writeBytes([0xFF, 0xD8, 0xFF, 0xE0])
                start.writeRepeatingByte(0, count: 1020)
                context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(start))), promise: nil)
                return
            }
            guard let body = files[path] else {
                let headers = HTTPHeaders([("Content-Length", "0")])
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .notFound, headers: headers))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                return
            }
            let headers = HTTPHeaders([("Content-Length", String(body.readableBytes)), ("Content-Type", "image/jpeg")])
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
