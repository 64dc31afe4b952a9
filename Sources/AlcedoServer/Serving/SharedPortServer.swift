#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Alcedo
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOExtras
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// An HTTP/1 server whose listening socket shares its port with other processes
/// (`SO_REUSEPORT`): the kernel spreads new connections over every process listening there.
///
/// `alcedo serve --processes N` runs N worker processes, each with one of these: a worker that
/// dies takes its own connections with it while the others go on accepting on the same port.
/// Requests are answered by the same router, with the same `Date` and `Server` headers and the
/// same error handling as Hummingbird's `Application`; SIGTERM stops accepting and lets open
/// requests finish, as it does there.
struct SharedPortServer<Responder: HTTPResponder>: Service
where Responder.Context: InitializableFromSource<ApplicationRequestContextSource> {
    let responder: Responder
    let host: String
    let port: Int
    let http1: HTTP1Channel.Configuration
    let serverName: String
    let logger: Logger
    let onListening: @Sendable (any Channel) async -> Void

    func run() async throws {
        let responder = self.responder
        let logger = self.logger
        let serverName = self.serverName
        let childChannel = HTTP1Channel(responder: { request, responseWriter, channel in
            let context = Responder.Context(source: ApplicationRequestContextSource(channel: channel, logger: logger))
            var response: Response
            do {
                response = try await responder.respond(to: request, context: context)
            } catch let error as HTTPParserError {
                throw error
            } catch {
                response = Response(status: .internalServerError, body: .init())
            }
            response.headers[.date] = HTTPDate.string(from: Date())
            response.headers[.server] = serverName
            do {
                try await responseWriter.write(response: response.head, body: response.body)
            } catch is HTTPParserError {
                // Not the parser's error: that one makes the channel write a second response.
                throw ParseErrorWhileWritingResponse()
            }
        }, configuration: http1)

        let group = MultiThreadedEventLoopGroup.singleton
        let quiescing = ServerQuiescingHelper(group: group)
        let listener = try await ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(ChannelOptions.socketOption(NIOBSDSocket.Option(rawValue: SO_REUSEPORT)), value: 1)
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(quiescing.makeServerChannelHandler(channel: channel))
                }
            }
            .bind(host: host, port: port, serverBackPressureStrategy: nil) { channel in
                childChannel.setup(channel: channel, logger: logger)
            }
        await withGracefulShutdownHandler {
            await onListening(listener.channel)
            await withDiscardingTaskGroup { tasks in
                do {
                    try await listener.executeThenClose { inbound in
                        for try await connection in inbound {
                            tasks.addTask { await childChannel.handle(value: connection, logger: logger) }
                        }
                    }
                } catch {
                    logger.error("accepting connections failed: \(error)")
                }
            }
        } onGracefulShutdown: {
            // Stops accepting, closes idle connections and lets open requests finish.
            let done = listener.channel.eventLoop.makePromise(of: Void.self)
            quiescing.initiateShutdown(promise: done)
        }
    }
}

/// The request could not be read while its response was written: the connection is closed.
private struct ParseErrorWhileWritingResponse: Error {}
