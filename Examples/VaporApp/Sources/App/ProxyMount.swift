import AlcedoServer
import HTTPTypes
import Hummingbird
import NIOCore
import NIOConcurrencyHelpers
import Vapor

/// Alcedo's image proxy (`alcedo serve`'s imgproxy or thumbor URLs) mounted in a Vapor app
/// under a path prefix: `GET /proxy/insecure/rs:fit:300:200/plain/https://example.com/a.jpg`.
///
/// The proxy is AlcedoServer's own ``ImageProxyMiddleware``: the request is handed to it as
/// a Hummingbird request with the raw target (plain source URLs keep their percent-encoding)
/// and its answer is copied back into a Vapor response. Signing, the source guard, format
/// negotiation, `ETag`s and `304`s, and the server's metrics are AlcedoServer's.
public struct ImageProxyMount: Sendable {
    /// The proxy's request handling (its caches, pipeline and metrics).
    public let service: ImageService
    /// The prefix the proxy answers under, such as `/proxy`.
    public let prefix: String
    private let middleware: ImageProxyMiddleware<MountedProxyContext>

    /// A proxy configured by `configuration`, answering under `prefix` (no trailing `/`).
    public init(configuration: ImageServerConfiguration, prefix: String) {
        service = ImageService(configuration: configuration)
        self.prefix = prefix
        middleware = ImageProxyMiddleware(service: service, prefix: prefix)
    }

    /// Adds `GET` and `HEAD` routes for every path under ``prefix`` to `routes`.
    public func mount(on routes: any RoutesBuilder) {
        let components = prefix.split(separator: "/").map { PathComponent(stringLiteral: String($0)) } + [.catchall]
        routes.on(.GET, components) { request in try await self.respond(to: request) }
        routes.on(.HEAD, components) { request in try await self.respond(to: request) }
    }

    /// Answers one Vapor request through the proxy.
    public func respond(to request: Vapor.Request) async throws -> Vapor.Response {
        var fields = HTTPFields()
        for (name, value) in request.headers {
            if let fieldName = HTTPField.Name(name) { fields.append(HTTPField(name: fieldName, value: value)) }
        }
        let head = HTTPRequest(method: HTTPRequest.Method(request.method.rawValue) ?? .get, scheme: "http",
                               authority: request.headers.first(name: .host), path: request.url.string,
                               headerFields: fields)
        let context = MountedProxyContext(source: MountedProxySource(logger: request.logger))
        let answer = try await middleware.handle(Hummingbird.Request(head: head, body: RequestBody(buffer: ByteBuffer())),
                                                 context: context) { _, _ in Hummingbird.Response(status: .notFound) }
        let collected = CollectedBody()
        try await answer.body.write(CollectingBodyWriter(target: collected))
        var headers = HTTPHeaders()
        for field in answer.headers { headers.add(name: field.name.rawName, value: field.value) }
        return Vapor.Response(status: HTTPResponseStatus(statusCode: answer.status.code), headers: headers,
                              body: .init(buffer: collected.buffer))
    }

    /// Releases the proxy's resources (its HTTP connections, caches); call when the app stops.
    public func shutdown() async { await service.shutdown() }
}

/// Where a mounted proxy's requests come from: the Vapor request's logger.
struct MountedProxySource: RequestContextSource {
    let logger: Logger
}

/// The Hummingbird request context the mounted proxy runs in.
struct MountedProxyContext: RequestContext {
    typealias Source = MountedProxySource
    var coreContext: CoreRequestContextStorage
    init(source: MountedProxySource) { coreContext = .init(source: source) }
}

/// The response bytes the proxy wrote (results are bounded by the proxy's own limits).
final class CollectedBody: Sendable {
    private let storage = NIOLockedValueBox(ByteBuffer())
    var buffer: ByteBuffer { storage.withLockedValue { $0 } }
    func append(_ part: ByteBuffer) { storage.withLockedValue { buffer in var part = part; buffer.writeBuffer(&part) } }
}

struct CollectingBodyWriter: ResponseBodyWriter {
    let target: CollectedBody
    mutating func write(_ buffer: ByteBuffer) async throws { target.append(buffer) }
    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
