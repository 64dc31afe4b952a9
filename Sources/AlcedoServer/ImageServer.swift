import Prometheus
import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals

/// `alcedo serve`: the image proxy as a Hummingbird application, with `/health`,
/// `/metrics` and the imgproxy routes.
///
/// ```swift
/// var configuration = ImageServerConfiguration()
/// configuration.port = 0                      // a free port
/// let server = ImageServer(configuration: configuration)
/// try await server.run { address in print("listening on \(address)") }   // until SIGTERM/SIGINT
/// ```
public struct ImageServer: Sendable {
    /// The configuration.
    public let configuration: ImageServerConfiguration
    /// The request handling.
    public let service: ImageService
    /// How long in-flight requests may take to finish after SIGTERM/SIGINT (default 10 s).
    public var shutdownGracePeriod: Duration = .seconds(10)
    /// Services run beside the server and shut down after it, such as a trace exporter
    /// (default none).
    public var additionalServices: [any Service] = []

    /// Creates the server (nothing listens until ``run(signals:onListening:)``).
    public init(configuration: ImageServerConfiguration) {
        self.configuration = configuration
        service = ImageService(configuration: configuration)
    }

    /// A router with `/health`, `/metrics` and the image proxy on every other path, for a
    /// request context of your own; all under ``ImageServerConfiguration/pathPrefix``. With
    /// ``ImageServerConfiguration/metricsAddress`` set, `/metrics` is left to
    /// ``makeMetricsRouter(context:)`` on that address.
    public func makeRouter<Context: RequestContext>(context: Context.Type) -> Router<Context> {
        let router = Router(context: Context.self)
        let prefix = configuration.pathPrefix
        router.add(middleware: RequestIDMiddleware())
        router.add(middleware: ImageProxyMiddleware(service: service, prefix: prefix))
        router.get(RouterPath(prefix + "/health")) { _, _ in "OK\n" }
        // thumbor's health check path, for load balancers set up for thumbor.
        if configuration.dialect == .thumbor { router.get(RouterPath(prefix + "/healthcheck")) { _, _ in "WORKING" } }
        if let extra = configuration.healthCheckPath, !extra.isEmpty, extra != "/health" {
            router.get(RouterPath(prefix + (extra.hasPrefix("/") ? extra : "/" + extra))) { _, _ in "OK\n" }
        }
        if configuration.metricsAddress == nil { addMetrics(to: router, path: prefix + "/metrics") }
        return router
    }

    /// A router with `/metrics` only, for ``ImageServerConfiguration/metricsAddress``.
    public func makeMetricsRouter<Context: RequestContext>(context: Context.Type) -> Router<Context> {
        let router = Router(context: Context.self)
        router.add(middleware: RequestIDMiddleware())
        addMetrics(to: router, path: "/metrics")
        return router
    }

    private func addMetrics<Context: RequestContext>(to router: Router<Context>, path: String) {
        let metrics = service.metrics
        // One of several workers: every worker's series, read from their own loopback ports.
        let workers = configuration.workerMetrics.map { ($0, HTTPImageLoader(configuration: .init(connectTimeout: .seconds(1)))) }
        router.get(RouterPath(path)) { _, _ -> Response in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4"
            var text = metrics.text()
            if let (settings, loader) = workers { text = await settings.combined(own: text, loader: loader) }
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
        }
    }

    /// A router with this process's own `/metrics/worker` only, for the other workers to read.
    private func makeWorkerMetricsRouter() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        let metrics = service.metrics
        router.get(RouterPath(WorkerMetrics.workerPath)) { _, _ -> Response in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.text())))
        }
        return router
    }

    /// The HTTP/1 connections' settings: the write timeout
    /// (``ImageServerConfiguration/writeResponseTimeout``) on each connection.
    func http1Configuration() -> HTTP1Channel.Configuration {
        guard let limit = configuration.writeResponseTimeout, limit > .zero else { return HTTP1Channel.Configuration() }
        let nanoseconds = limit.components.seconds * 1_000_000_000 + limit.components.attoseconds / 1_000_000_000
        let metrics = service.metrics
        return HTTP1Channel.Configuration(
            additionalChannelHandlers: [WriteTimeoutHandler(timeout: .nanoseconds(nanoseconds)) { metrics.writeTimeouts.increment() }])
    }

    /// Listens until one of `signals` arrives, then stops accepting, lets in-flight requests
    /// finish for up to ``shutdownGracePeriod`` and returns. Cancelling the calling task shuts
    /// the server down the same way (it returns once the grace period at most has passed).
    /// - Parameters:
    ///   - signals: the signals that shut down gracefully (default SIGTERM and SIGINT).
    ///   - onListening: called once with `http://HOST:PORT` (the real port when 0 was asked).
    public func run(signals: [UnixSignal] = [.sigterm, .sigint],
                    onListening: @escaping @Sendable (String) async -> Void = { _ in }) async throws {
        var logger = Logger(label: "alcedo.serve")
        logger.logLevel = configuration.logLevel ?? .warning
        let host = configuration.host
        let running: @Sendable (any Channel) async -> Void = { channel in
            let port = channel.localAddress?.port ?? 0
            let shownHost = host.contains(literal: ":") ? "[\(host)]" : host
            await onListening("http://\(shownHost):\(port)")
        }
        var services: [any Service]
        if configuration.sharesPort {
            services = [SharedPortServer(responder: makeRouter(context: ImageRequestContext.self).buildResponder(), host: host,
                                         port: configuration.port, http1: http1Configuration(), serverName: "Alcedo",
                                         logger: logger, onListening: running)]
        } else {
            services = [Application(
                router: makeRouter(context: ImageRequestContext.self),
                server: .http1(configuration: http1Configuration()),
                configuration: ApplicationConfiguration(address: .hostname(host, port: configuration.port), serverName: "Alcedo"),
                onServerRunning: running,
                logger: logger)]
        }
        if let workers = configuration.workerMetrics, workers.ports.indices.contains(workers.index) {
            services.append(SharedPortServer(responder: makeWorkerMetricsRouter().buildResponder(), host: "127.0.0.1",
                                             port: workers.ports[workers.index], http1: HTTP1Channel.Configuration(),
                                             serverName: "Alcedo", logger: logger, onListening: { _ in }))
        }
        if let metricsAddress = configuration.metricsAddress {
            services.append(Application(
                router: makeMetricsRouter(context: BasicRequestContext.self),
                configuration: ApplicationConfiguration(address: .hostname(metricsAddress.host, port: metricsAddress.port),
                                                        serverName: "Alcedo"),
                logger: logger))
        }
        // Started first, so they are shut down last: an exporter flushes the server's last spans.
        services = additionalServices + services
        // A service that ends, or fails, shuts the others down gracefully, never by cancelling
        // them: a listener cancelled while it holds accepted connections not yet handed to a
        // handler drops them, and NIO traps on a dropped connection's writer ("Deinited
        // NIOAsyncWriter without calling finish()"), which would end the process. A graceful
        // shutdown closes the listener first and serves what it had accepted.
        var groupConfiguration = ServiceGroupConfiguration(
            services: services.map {
                ServiceGroupConfiguration.ServiceConfiguration(service: $0, successTerminationBehavior: .gracefullyShutdownGroup,
                                                               failureTerminationBehavior: .gracefullyShutdownGroup)
            },
            gracefulShutdownSignals: signals, logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = shutdownGracePeriod
        let group = ServiceGroup(configuration: groupConfiguration)
        var returner: Task<Void, Never>?
        if configuration.returnsFreedMemory {
            ProcessMemory.limitArenas(to: configuration.mallocArenas)
            ProcessMemory.setLargeAllocationThreshold(configuration.largeAllocationThreshold)
            ProcessMemory.setTrimThreshold(configuration.trimThreshold)
            let memoryReturner = MemoryReturner(budget: service.memoryBudget)
            returner = Task { await memoryReturner.run() }
        }
        defer { returner?.cancel() }
        // The group runs in a task of its own, so that cancelling the caller does not cancel the
        // listeners (see above): it shuts the group down gracefully instead, and waits for it.
        let runningGroup = Task { try await group.run() }
        do {
            try await withTaskCancellationHandler {
                try await runningGroup.value
            } onCancel: {
                Task { await group.triggerGracefulShutdown() }
            }
        } catch {
            await service.shutdown()
            throw error
        }
        await service.shutdown()
    }
}
