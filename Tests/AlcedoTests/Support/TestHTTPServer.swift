import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A real HTTP/1.1 server on 127.0.0.1 (a free port) for tests, with programmable routes.
///
/// ```swift
/// let server = try await TestHTTPServer.start()
/// defer { server.stop() }          // or `try await server.shutdown()`
/// server.route("/a.png", .ok(pngBytes, contentType: "image/png"))
/// server.route("/slow", TestHTTPServer.Response.ok(bytes).delayed(by: .milliseconds(200)))
/// server.route("/echo") { request in .ok(Data(request.headers["X-Token"].joined().utf8)) }
/// server.route("/flaky", sequence: [.status(500), .ok(bytes)])
/// let url = server.url("/a.png")
/// server.requestCount("/a.png")    // requests that reached the path
/// ```
///
/// A response can be delayed, streamed in chunks, stall in the middle of its body, be cut
/// short, announce a `Content-Length` that lies, redirect, or answer conditional requests
/// with `304` from its ``Response/etag`` and ``Response/lastModified``. ``hold(_:)`` keeps
/// every response of a path waiting until ``release(_:)``. Paths are matched without the
/// query; an unknown path gets 404.
final class TestHTTPServer: Sendable {
    /// A request as the server received it.
    struct Request: Sendable {
        let method: HTTPMethod
        /// The path without the query.
        let path: String
        /// The full request target, query included.
        let uri: String
        let headers: HTTPHeaders
    }

    /// How `Content-Length` is sent.
    enum ContentLength: Sendable {
        /// The body's real length.
        case automatic
        /// No `Content-Length`: the body is sent with chunked transfer encoding.
        case none
        /// This value, whatever the body's length (a server that lies).
        case value(Int)
    }

    /// What the server answers.
    struct Response: Sendable {
        var status: Int = 200
        var headers: [(String, String)] = []
        var body = Data()
        var contentLength: ContentLength = .automatic
        /// Waits this long before sending the status line.
        var headDelay: Duration = .zero
        /// Sends the body in pieces of this size (default: all at once)…
        var chunkSize: Int?
        /// …waiting this long between pieces.
        var chunkInterval: Duration = .zero
        /// Sends this many body bytes, then nothing more until the client goes away.
        var stallAfter: Int?
        /// Sends this many body bytes, then closes the connection.
        var closeAfter: Int?
        /// Close the connection instead of answering: not one response byte is sent.
        var dropsConnection = false
        /// Sent as `ETag`; a request whose `If-None-Match` lists it gets `304`.
        var etag: String?
        /// Sent as `Last-Modified` (an HTTP-date); a request whose `If-Modified-Since` is not
        /// older (and that has no `If-None-Match`) gets `304`.
        var lastModified: String?
        /// Header fields sent with a `304`, replacing those of the same name.
        var notModifiedHeaders: [(String, String)] = []
        /// Answers nothing and resets the connection (a TCP RST: `SO_LINGER` 0, then close).
        var resetsConnection = false
        /// Sends the body in pieces ending at these offsets (then the rest), each piece after
        /// the first only once ``pieceGate`` opens it: a test decides when the next bytes go.
        var pieceEnds: [Int] = []
        var pieceGate: PieceGate?

        init(status: Int = 200, headers: [(String, String)] = [], body: Data = Data()) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        /// `200` with `body` and an optional `Content-Type`.
        static func ok(_ body: Data, contentType: String? = nil) -> Response {
            Response(status: 200, headers: contentType.map { [("Content-Type", $0)] } ?? [], body: body)
        }

        /// A redirect to `location` (default status 302).
        static func redirect(to location: String, status: Int = 302) -> Response {
            Response(status: status, headers: [("Location", location)])
        }

        /// No response: the connection is reset as soon as the request has arrived.
        static var reset: Response {
            var response = Response()
            response.resetsConnection = true
            return response
        }

        /// An empty (or textual) response with `status`.
        static func status(_ status: Int, headers: [(String, String)] = [], body: String = "") -> Response {
            Response(status: status, headers: headers, body: Data(body.utf8))
        }

        /// The same response, sent after `delay`.
        func delayed(by delay: Duration) -> Response {
            var copy = self
            copy.headDelay = delay
            return copy
        }

        /// The same response with its body sent in pieces of `size` bytes, `interval` apart.
        func chunked(_ size: Int, every interval: Duration = .zero) -> Response {
            var copy = self
            copy.chunkSize = size
            copy.chunkInterval = interval
            return copy
        }

        /// The same response with its body cut at `ends` (then the rest), piece `i` (from 1)
        /// sent once `gate` has opened it.
        func paced(at ends: [Int], gate: PieceGate) -> Response {
            var copy = self
            copy.pieceEnds = ends
            copy.pieceGate = gate
            return copy
        }

        /// The same response with one more header field.
        func header(_ name: String, _ value: String) -> Response {
            var copy = self
            copy.headers.append((name, value))
            return copy
        }
    }

    typealias Handler = @Sendable (Request) -> Response

    private struct State {
        var routes: [String: Handler] = [:]
        var requests: [String: [Request]] = [:]
        var log: [String] = []
        var aborted: [String: Int] = [:]
        var held: Set<String> = []
        var waiting: [String: [@Sendable () -> Void]] = [:]
        var connections: [ObjectIdentifier: any Channel] = [:]
        var connectionCount = 0
        var closesReusedConnections = false
        var inFlight = 0
        var maximumInFlight = 0
        var droppedRequests = 0
    }

    private let state = Mutex(State())
    private let channel: Mutex<(any Channel)?> = Mutex(nil)
    /// The port the server listens on.
    let port: Int

    private init(port: Int) {
        self.port = port
    }

    /// Starts a server on 127.0.0.1 with a free port.
    static func start() async throws -> TestHTTPServer {
        let box = Mutex<TestHTTPServer?>(nil)
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    guard let server = box.withLock({ $0 }) else { throw ChannelError.ioOnClosedChannel }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(ConnectionHandler(server: server))
                }
            }
        let serverChannel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
        guard let port = serverChannel.localAddress?.port else {
            try await serverChannel.close()
            throw ChannelError.unknownLocalAddress
        }
        let server = TestHTTPServer(port: port)
        server.channel.withLock { $0 = serverChannel }
        box.withLock { $0 = server }
        return server
    }

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }

    /// Answers requests to `path` with `response`.
    func route(_ path: String, _ response: Response) {
        route(path) { _ in response }
    }

    /// Answers requests to `path` with what `handler` returns (called on a NIO thread).
    func route(_ path: String, handler: @escaping Handler) {
        state.withLock { $0.routes[path] = handler }
    }

    /// Forgets every route: each path answers 404 again.
    func removeAllRoutes() {
        state.withLock { $0.routes = [:] }
    }

    /// Answers the first request to `path` with the first response, the second with the
    /// second, and so on; the last response answers every later request.
    func route(_ path: String, sequence responses: [Response]) {
        let served = Mutex(0)
        route(path) { _ in
            let index = served.withLock { count in
                defer { count += 1 }
                return count
            }
            return responses[min(index, responses.count - 1)]
        }
    }

    /// How many requests reached `path` (counted when their head arrives).
    func requestCount(_ path: String) -> Int {
        state.withLock { $0.requests[path]?.count ?? 0 }
    }

    /// The requests that reached `path`, in order.
    func requests(_ path: String) -> [Request] {
        state.withLock { $0.requests[path] ?? [] }
    }

    /// The paths of every request received, in arrival order.
    var requestLog: [String] { state.withLock { $0.log } }

    /// How many responses to `path` were cut off because the client closed the connection first.
    func abortedCount(_ path: String) -> Int {
        state.withLock { $0.aborted[path] ?? 0 }
    }

    /// How many connections clients opened.
    var connectionCount: Int { state.withLock { $0.connectionCount } }

    /// With `true`, the server behaves as one that closes idle keep-alive connections without
    /// having said `Connection: close`: every response says `keep-alive`, but a request that
    /// arrives on a connection already used is answered by closing the connection, with no
    /// response byte (the request a client sent just as the server closed the idle connection).
    func closeReusedConnections(_ closes: Bool) {
        state.withLock { $0.closesReusedConnections = closes }
    }

    /// The most requests the server was answering (or holding) at the same time so far: a
    /// limit on concurrent requests is checked with it at the end of a test, without waiting.
    var maximumConcurrentRequests: Int { state.withLock { $0.maximumInFlight } }

    /// How many requests were dropped by ``closeReusedConnections(_:)``.
    var droppedRequests: Int { state.withLock { $0.droppedRequests } }

    /// Whether a request arriving as the connection's `number`th (from 1) is dropped; counts it.
    fileprivate func drops(requestNumber number: Int) -> Bool {
        state.withLock { state in
            guard state.closesReusedConnections, number > 1 else { return false }
            state.droppedRequests += 1
            return true
        }
    }

    /// Makes responses to `path` wait until ``release(_:)``.
    func hold(_ path: String) {
        state.withLock { _ = $0.held.insert(path) }
    }

    /// Sends the responses waiting for `path` and stops holding it.
    func release(_ path: String) {
        let waiting = state.withLock { state in
            state.held.remove(path)
            return state.waiting.removeValue(forKey: path) ?? []
        }
        for resume in waiting { resume() }
    }

    /// Closes every connection and the listening socket.
    func shutdown() async throws {
        let (connections, listener) = closeables()
        for connection in connections { try? await connection.close() }
        try await listener?.close()
    }

    /// Closes every connection and the listening socket without waiting.
    func stop() {
        let (connections, listener) = closeables()
        for connection in connections { connection.close(promise: nil) }
        listener?.close(promise: nil)
    }

    private func closeables() -> ([any Channel], (any Channel)?) {
        let connections = state.withLock { state in
            defer { state.connections = [:] }
            return Array(state.connections.values)
        }
        return (connections, channel.withLock { channel in
            defer { channel = nil }
            return channel
        })
    }

    // MARK: Called by the connection handler

    fileprivate func connectionOpened(_ channel: any Channel) {
        state.withLock { state in
            state.connections[ObjectIdentifier(channel)] = channel
            state.connectionCount += 1
        }
    }

    fileprivate func connectionClosed(_ channel: any Channel, abortedPath: String?) {
        state.withLock { state in
            state.connections[ObjectIdentifier(channel)] = nil
            if let abortedPath {
                state.aborted[abortedPath, default: 0] += 1
                state.inFlight -= 1
            }
        }
    }

    /// A response was sent whole (or dropped on purpose).
    fileprivate func responseEnded() {
        state.withLock { $0.inFlight -= 1 }
    }

    /// Records `request` and returns its response, or `nil` after queuing `resume` when the path is held.
    fileprivate func receive(_ request: Request, resume: @escaping @Sendable () -> Void) -> Response? {
        let handler: Handler? = state.withLock { state in
            state.requests[request.path, default: []].append(request)
            state.log.append(request.path)
            state.inFlight += 1
            state.maximumInFlight = max(state.maximumInFlight, state.inFlight)
            if state.held.contains(request.path) {
                state.waiting[request.path, default: []].append(resume)
                return nil
            }
            return state.routes[request.path] ?? { _ in .status(404, body: "not found") }
        }
        return handler.map { Self.answer($0(request), to: request) }
    }

    /// The response for a released held request.
    fileprivate func response(for request: Request) -> Response {
        let handler = state.withLock { $0.routes[request.path] } ?? { _ in .status(404, body: "not found") }
        return Self.answer(handler(request), to: request)
    }

    /// Turns `response` into a 304 when `request` is conditional and its validators match.
    private static func answer(_ response: Response, to request: Request) -> Response {
        var response = response
        if let etag = response.etag { response.headers.append(("ETag", etag)) }
        if let lastModified = response.lastModified { response.headers.append(("Last-Modified", lastModified)) }
        guard response.status == 200 else { return response }
        let notModified: Bool
        if let ifNoneMatch = request.headers.first(name: "If-None-Match") {
            let tags = ifNoneMatch.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            notModified = response.etag.map { etag in tags.contains("*") || tags.contains(etag) } ?? false
        } else if let since = request.headers.first(name: "If-Modified-Since"), let lastModified = response.lastModified,
                  let sinceDate = TestHTTPDate.parse(since), let modifiedDate = TestHTTPDate.parse(lastModified) {
            notModified = modifiedDate <= sinceDate
        } else {
            notModified = false
        }
        guard notModified else { return response }
        var reply = Response(status: 304)
        let replaced = Set(response.notModifiedHeaders.map { $0.0.lowercased() })
        reply.headers = response.headers.filter { field in
            ["etag", "last-modified", "cache-control", "expires", "date"].contains(field.0.lowercased())
                && !replaced.contains(field.0.lowercased())
        } + response.notModifiedHeaders
        reply.headDelay = response.headDelay
        return reply
    }
}

/// Reads and writes IMF-fixdates for the test server (independent of the library's parser).
enum TestHTTPDate {
    private static func formatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }

    static func string(_ date: Date) -> String { formatter().string(from: date) }
    static func parse(_ text: String) -> Date? { formatter().date(from: text) }
}

/// Serves one connection: reads requests, writes the routed responses with their delays.
private final class ConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: TestHTTPServer
    private var requestHead: HTTPRequestHead?
    /// The path whose response is being written, until its end is sent.
    private var pendingPath: String?
    private var pendingTasks: [Scheduled<Void>] = []
    private var requestsOnConnection = 0

    init(server: TestHTTPServer) {
        self.server = server
    }

    func channelActive(context: ChannelHandlerContext) {
        server.connectionOpened(context.channel)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        for task in pendingTasks { task.cancel() }
        pendingTasks = []
        server.connectionClosed(context.channel, abortedPath: pendingPath)
        pendingPath = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            requestHead = head
        case .body:
            break
        case .end:
            guard let head = requestHead else { return }
            requestHead = nil
            requestsOnConnection += 1
            if server.drops(requestNumber: requestsOnConnection) {
                context.close(promise: nil)
                return
            }
            let path = String(head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            let request = TestHTTPServer.Request(method: head.method, path: path, uri: head.uri, headers: head.headers)
            pendingPath = path
            let keepAlive = head.isKeepAlive
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let server = self.server
            let resume: @Sendable () -> Void = {
                loopBound.eventLoop.execute {
                    let (handler, context) = loopBound.value
                    guard context.channel.isActive else { return }
                    handler.send(server.response(for: request), keepAlive: keepAlive, context: context)
                }
            }
            if let response = server.receive(request, resume: resume) {
                send(response, keepAlive: keepAlive, context: context)
            }
        }
    }

    private func after(_ delay: Duration, context: ChannelHandlerContext, _ body: @escaping () -> Void) {
        guard delay > .zero else { return body() }
        let task = context.eventLoop.assumeIsolated().scheduleTask(in: delay.nio) { body() }
        pendingTasks.append(task)
    }

    private func send(_ response: TestHTTPServer.Response, keepAlive: Bool, context: ChannelHandlerContext) {
        if response.resetsConnection {
            let channel = context.channel
            let lingering = (channel as? any SocketOptionProvider)?.setSoLinger(linger(l_onoff: 1, l_linger: 0))
                ?? channel.eventLoop.makeSucceededVoidFuture()
            lingering.whenComplete { _ in channel.close(promise: nil) }
            return
        }
        after(response.headDelay, context: context) { [self] in
            if response.dropsConnection {
                pendingPath = nil
                server.responseEnded()
                context.close(promise: nil)
                return
            }
            var headers = HTTPHeaders(response.headers)
            switch response.contentLength {
            case .automatic: headers.replaceOrAdd(name: "Content-Length", value: String(response.body.count))
            case .value(let length): headers.replaceOrAdd(name: "Content-Length", value: String(length))
            case .none: if response.status != 304 { headers.replaceOrAdd(name: "Transfer-Encoding", value: "chunked") }
            }
            if response.status == 304 { headers.remove(name: "Content-Length") }
            let closes = !keepAlive || response.closeAfter != nil
            headers.replaceOrAdd(name: "Connection", value: closes ? "close" : "keep-alive")
            let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
            context.writeAndFlush(wrapOutboundOut(.head(head)), promise: nil)
            var body = response.body
            var cut: (count: Int, close: Bool)?
            if let stall = response.stallAfter { cut = (stall, false) }
            if let close = response.closeAfter { cut = (close, true) }
            if let cut { body = body.prefix(cut.count) }
            writeBody(body, response: response, context: context) { [self] in
                if let cut {
                    if cut.close { context.close(promise: nil) }
                    return
                }
                pendingPath = nil
                server.responseEnded()
                context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
                    if closes { context.close(promise: nil) }
                }
            }
        }
    }

    private func writeBody(_ body: Data, response: TestHTTPServer.Response, context: ChannelHandlerContext,
                           then done: @escaping () -> Void) {
        guard !body.isEmpty else { return done() }
        if let gate = response.pieceGate {
            return writePieces(body, from: 0, ends: response.pieceEnds + [body.count], index: 0, gate: gate,
                               context: context, then: done)
        }
        let size = response.chunkSize ?? body.count
        let piece = body.prefix(size)
        let rest = body.dropFirst(piece.count)
        var buffer = context.channel.allocator.buffer(capacity: piece.count)
        buffer.writeBytes(piece)
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        if rest.isEmpty { return done() }
        after(response.chunkInterval, context: context) { [self] in
            guard context.channel.isActive else { return }
            writeBody(Data(rest), response: response, context: context, then: done)
        }
    }
}

extension ConnectionHandler {
    /// Sends piece `index` (bytes `from..<ends[index]`) once `gate` opens it, then the next.
    fileprivate func writePieces(_ body: Data, from start: Int, ends: [Int], index: Int, gate: PieceGate,
                                 context: ChannelHandlerContext, then done: @escaping () -> Void) {
        guard index < ends.count else { return done() }
        let loopBound = NIOLoopBound((self, context, done), eventLoop: context.eventLoop)
        gate.whenOpened(index) {
            loopBound.eventLoop.execute {
                let (handler, context, done) = loopBound.value
                guard context.channel.isActive else { return }
                let end = min(max(ends[index], start), body.count)
                if end > start {
                    var buffer = context.channel.allocator.buffer(capacity: end - start)
                    buffer.writeBytes(body[(body.startIndex + start)..<(body.startIndex + end)])
                    context.writeAndFlush(handler.wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
                }
                handler.writePieces(body, from: end, ends: ends, index: index + 1, gate: gate, context: context, then: done)
            }
        }
    }
}

/// Lets a test release the pieces of a paced response one by one (piece 0 goes at once).
final class PieceGate: Sendable {
    private let state = Mutex((opened: 0, waiting: [(Int, @Sendable () -> Void)]()))

    init() {}

    /// Lets every piece up to `index` go.
    func open(_ index: Int) {
        let ready = state.withLock { state -> [@Sendable () -> Void] in
            state.opened = max(state.opened, index)
            let opened = state.opened
            let ready = state.waiting.filter { $0.0 <= opened }.map(\.1)
            state.waiting.removeAll { $0.0 <= opened }
            return ready
        }
        for resume in ready { resume() }
    }

    /// Lets every piece go.
    func openAll() { open(Int.max) }

    fileprivate func whenOpened(_ index: Int, _ resume: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if index <= state.opened { return true }
            state.waiting.append((index, resume))
            return false
        }
        if now { resume() }
    }
}

extension Duration {
    /// The duration as a NIO `TimeAmount`.
    var nio: TimeAmount {
        let (seconds, attoseconds) = components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
