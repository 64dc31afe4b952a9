import NIOCore
import NIOSSL
import Synchronization

/// A command on its way to the server, with the promise its reply completes.
struct RedisRequest: Sendable {
    let commands: [[RedisArgument]]
    let promises: [EventLoopPromise<RESPValue>]
}

/// Writes commands and matches replies to them in order: any number of commands may be in
/// flight on one connection (pipelining). A decoding error, an unexpected reply or the end of
/// the connection fails every waiting command and closes the connection.
final class RedisCommandHandler: ChannelDuplexHandler {
    typealias InboundIn = RESPValue
    typealias OutboundIn = RedisRequest
    typealias OutboundOut = ByteBuffer

    private var waiting = CircularBuffer<EventLoopPromise<RESPValue>>(initialCapacity: 16)
    private let node: String
    private var closedError: Error?
    private let closeReason: RedisCloseReason

    init(node: String, closeReason: RedisCloseReason) {
        self.node = node
        self.closeReason = closeReason
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let request = unwrapOutboundIn(data)
        if let closedError {
            request.promises.forEach { $0.fail(closedError) }
            promise?.fail(closedError)
            return
        }
        var buffer = context.channel.allocator.buffer(capacity: 64)
        for command in request.commands { RESPEncoder.encode(command, into: &buffer) }
        waiting.append(contentsOf: request.promises)
        context.write(wrapOutboundOut(buffer), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let value = unwrapInboundIn(data)
        guard let promise = waiting.popFirst() else {
            failAll(context: context, RedisConnectionError.malformed("a reply nobody asked for"))
            return
        }
        promise.succeed(value)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if let decoding = error as? RESPDecodingError {
            failAll(context: context, RedisConnectionError.malformed(decoding.description))
        } else if RedisTLS.isHandshakeFailure(error) {
            failAll(context: context, RedisConnectionError.tls(String(describing: error)))
        } else {
            failAll(context: context, RedisConnectionError.io(String(describing: error)))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        let error = closedError ?? RedisConnectionError.closed
        closedError = error
        while let promise = waiting.popFirst() { promise.fail(error) }
        context.fireChannelInactive()
    }

    private func failAll(context: ChannelHandlerContext, _ error: RedisConnectionError) {
        if closedError == nil {
            closedError = error
            closeReason.record(error)
        }
        while let promise = waiting.popFirst() { promise.fail(error) }
        context.close(promise: nil)
    }
}

/// Why a connection closed, kept beyond its pipeline: a command written after the close never
/// reaches ``RedisCommandHandler`` (the pipeline is torn down), so the write's failure is
/// answered with this reason (a TLS handshake that failed before the first command, say).
final class RedisCloseReason: Sendable {
    private let reason = Mutex<RedisConnectionError?>(nil)

    /// The first reason recorded, if any.
    var value: RedisConnectionError? { reason.withLock { $0 } }

    /// Records `error` unless a reason is known already.
    func record(_ error: RedisConnectionError) {
        reason.withLock { if $0 == nil { $0 = error } }
    }
}

/// What went wrong on one connection, before it is turned into a
/// ``Alcedo/SharedStorageErrorReason`` naming the node.
enum RedisConnectionError: Error, Sendable {
    case closed
    case malformed(String)
    case io(String)
    case tls(String)
    case timedOut
}
