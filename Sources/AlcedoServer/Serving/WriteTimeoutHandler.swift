import Hummingbird
import HummingbirdCore
import NIOCore
import NIOHTTPTypes

/// Closes a connection whose response is not written within the write timeout
/// (``ImageServerConfiguration/writeResponseTimeout``), counted from the response's head to
/// the moment its last byte is handed to the kernel, as imgproxy's
/// `IMGPROXY_WRITE_RESPONSE_TIMEOUT` does. A client that reads a large response a byte a
/// second would otherwise keep its connection and the response's buffer forever; no
/// processing slot or budget reservation is held while a response is written, so the timeout
/// bounds memory and connections, not processing.
///
/// One handler per connection, on its event loop; pipelined responses are timed one after
/// another.
final class WriteTimeoutHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTP1Channel.Value.OutboundPart
    typealias OutboundOut = HTTP1Channel.Value.OutboundPart

    private let timeout: TimeAmount
    private let onTimeout: @Sendable () -> Void
    private var timer: Scheduled<Void>?
    /// Which response the timer is for: a completed write of an earlier response's end does
    /// not stop the timer of the next one.
    private var generation = 0

    /// - Parameters:
    ///   - timeout: the most one response may take to write.
    ///   - onTimeout: called when a connection is closed for it (to count it).
    init(timeout: TimeAmount, onTimeout: @escaping @Sendable () -> Void = {}) {
        self.timeout = timeout
        self.onTimeout = onTimeout
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head):
            if head.status.kind != .informational { start(context) }
            context.write(data, promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            let written = promise ?? context.eventLoop.makePromise()
            let ended = generation
            written.futureResult.assumeIsolated().whenComplete { _ in
                guard self.generation == ended else { return }
                self.timer?.cancel()
                self.timer = nil
            }
            context.write(data, promise: written)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    private func start(_ context: ChannelHandlerContext) {
        timer?.cancel()
        generation += 1
        let started = generation
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            guard self.generation == started else { return }
            self.timer = nil
            self.onTimeout()
            context.close(promise: nil)
        }
    }
}

extension NIOAsyncChannel {
    /// What the channel writes: for ``HTTP1Channel``, the HTTP response parts (named here so
    /// that the handler needs no import of their module).
    typealias OutboundPart = Outbound
}
