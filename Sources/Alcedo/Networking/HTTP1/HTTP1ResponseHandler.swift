#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore
import NIOHTTP1

/// A response head as the origin sent it, and its body.
struct HTTP1Response: Sendable {
    /// The status code: 100 to 999, nothing else gets this far.
    var status: Int
    var headers: HTTPHeaders
    var body: HTTP1ResponseBody
}

/// The body of one response: its chunks as they arrive, read from the socket only while the
/// consumer keeps up (at most `highWatermark` chunks wait).
typealias HTTP1ResponseBody = NIOThrowingAsyncSequenceProducer<
    ByteBuffer, any Error, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark, HTTP1BodyDemand>

/// Why a connection could not deliver a response, in the client's own terms (mapped to
/// ``AlcedoError`` by the loader).
enum HTTP1ClientError: Error, Sendable, Equatable {
    /// The status line's code is not an HTTP status code (below 100 or above 999), or the
    /// origin switched protocols though none was asked for.
    case malformedStatus(Int)
    /// The connection closed before a response head arrived.
    case closedBeforeResponse
    /// The connection closed before the body's end.
    case closedDuringBody
    /// Nothing arrived for the read timeout.
    case readTimeout
}

/// Tells the connection's handler that the consumer of one response's body wants more of it, or
/// is done with it. The response is named: on a kept-alive connection these calls can arrive
/// after the next response has started, and must not touch it.
struct HTTP1BodyDemand: NIOAsyncSequenceProducerDelegate {
    let handler: NIOLoopBound<HTTP1ResponseHandler>
    /// Which response of the connection this body is.
    let response: Int

    func produceMore() {
        let handler = self.handler, response = self.response
        handler.eventLoop.execute { handler.value.consumerWantsMore(response: response) }
    }

    func didTerminate() {
        let handler = self.handler, response = self.response
        handler.eventLoop.execute { handler.value.consumerTerminated(response: response) }
    }
}

/// The last handler of an origin connection: sends one request at a time and turns the
/// decoder's parts into an ``HTTP1Response`` whose body honours the consumer's pace.
///
/// Every status code the decoder can produce is checked here before anything else sees it:
/// a code below 100 (`HTTP/1.1 000`, `099`) is a malformed response, never an "informational"
/// one to skip, and a `101` that was not asked for ends the connection. All state lives on the
/// channel's event loop.
final class HTTP1ResponseHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    private enum State {
        /// No request in flight; the connection may be pooled.
        case idle
        case awaitingHead(EventLoopPromise<HTTP1Response>)
        case streaming(HTTP1ResponseBody.Source, keepAlive: Bool)
        case closed
    }

    private var state = State.idle
    /// The number of the response in flight (or the last one): bodies' calls name it.
    private var responseNumber = 0
    /// Why the connection failed while no request was in flight (a TLS handshake refused as
    /// soon as it connected): the next request is failed with it.
    private var idleError: (any Error)?
    private var context: ChannelHandlerContext?
    /// The consumer has room for more body chunks.
    private var demand = true
    /// A read was asked for while there was no demand; issued once demand comes back.
    private var pendingRead = false
    /// Called on the event loop when a response ended and the connection can carry another.
    var onReusable: (() -> Void)?

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    /// Sends `head` and completes `promise` with the response head, or fails it.
    func start(_ head: HTTPRequestHead, body: ByteBuffer? = nil, promise: EventLoopPromise<HTTP1Response>) {
        guard case .idle = state, let context, context.channel.isActive else {
            promise.fail(idleError ?? HTTP1ClientError.closedBeforeResponse)
            return
        }
        state = .awaitingHead(promise)
        responseNumber += 1
        demand = true
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if let body, body.readableBytes > 0 { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        if pendingRead {
            pendingRead = false
            context.read()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            receivedHead(head, context: context)
        case .body(let buffer):
            guard case .streaming(let source, _) = state else { return }
            if source.yield(buffer) == .stopProducing { demand = false }
        case .end:
            receivedEnd(context: context)
        }
    }

    private func receivedHead(_ head: HTTPResponseHead, context: ChannelHandlerContext) {
        guard case .awaitingHead(let promise) = state else { return }
        let code = Int(head.status.code)
        // 1xx heads other than 101 never get here: the decoder drops them. A code below 100 is
        // not a status at all, and 101 without an upgrade request leaves a connection that
        // no longer speaks HTTP.
        guard (100...999).contains(code), code != 101 else {
            state = .closed
            promise.fail(HTTP1ClientError.malformedStatus(code))
            context.close(promise: nil)
            return
        }
        let body = HTTP1ResponseBody.makeSequence(
            backPressureStrategy: .init(lowWatermark: 2, highWatermark: 8), finishOnDeinit: true,
            delegate: HTTP1BodyDemand(handler: NIOLoopBound(self, eventLoop: context.eventLoop), response: responseNumber))
        state = .streaming(body.source, keepAlive: head.isKeepAlive)
        promise.succeed(HTTP1Response(status: code, headers: head.headers, body: body.sequence))
    }

    private func receivedEnd(context: ChannelHandlerContext) {
        switch state {
        case .streaming(let source, let keepAlive):
            source.finish()
            if keepAlive {
                state = .idle
                // An idle connection reads, so that an origin closing it is noticed at once.
                consumerWantsMore(response: responseNumber)
                onReusable?()
            } else {
                state = .closed
                context.close(promise: nil)
            }
        case .awaitingHead, .idle, .closed:
            break
        }
    }

    func consumerWantsMore(response: Int) {
        guard response == responseNumber else { return }
        demand = true
        if pendingRead, let context {
            pendingRead = false
            context.read()
        }
    }

    func consumerTerminated(response: Int) {
        // The body was read to its end (its response is over) or dropped while it streams:
        // only the latter matters, and only for the response in flight.
        guard response == responseNumber, case .streaming(let source, _) = state, let context else { return }
        state = .closed
        source.finish()
        context.close(promise: nil)
    }

    func read(context: ChannelHandlerContext) {
        if demand {
            context.read()
        } else {
            pendingRead = true
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        onReusable = nil
        fail(HTTP1ClientError.closedBeforeResponse)
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? IdleStateHandler.IdleStateEvent, event == .read {
            switch state {
            case .awaitingHead, .streaming:
                fail(HTTP1ClientError.readTimeout)
                context.close(promise: nil)
            case .idle, .closed:
                break
            }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Ends the request in flight with `error`: before the head, the caller gets it; after
    /// it, the body's consumer does.
    private func fail(_ error: any Error) {
        switch state {
        case .awaitingHead(let promise):
            state = .closed
            if case HTTP1ClientError.closedBeforeResponse = error {
                promise.fail(error)
            } else if let error = error as? ChannelError, error == .eof || error == .ioOnClosedChannel {
                promise.fail(HTTP1ClientError.closedBeforeResponse)
            } else {
                promise.fail(error)
            }
        case .streaming(let source, _):
            state = .closed
            if case HTTP1ClientError.closedBeforeResponse = error {
                source.finish(HTTP1ClientError.closedDuringBody)
            } else {
                source.finish(error)
            }
        case .idle:
            state = .closed
            if idleError == nil { idleError = error }
        case .closed:
            if idleError == nil { idleError = error }
        }
    }
}
