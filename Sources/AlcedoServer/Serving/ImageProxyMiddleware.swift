#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Hummingbird

/// Mounts the image proxy in any Hummingbird router: `GET`/`HEAD` requests under ``prefix``
/// are answered as image paths of the configured dialect (imgproxy's `/info/…` as info
/// requests; thumbor's `/meta/…` inside the thumbor parser); everything else goes on to the
/// router's own routes.
///
/// ```swift
/// let service = ImageService(configuration: configuration)
/// let router = Router()
/// router.get("/hello") { _, _ in "hello" }
/// router.add(middleware: ImageProxyMiddleware(service: service, prefix: "/images"))
/// // GET /images/insecure/rs:fit:300:300/plain/https://example.com/cat.jpg
/// ```
///
/// Add it before the routes it must see past (Hummingbird applies middleware to routes added
/// after it, and to the not-found answer).
public struct ImageProxyMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The service that answers.
    public let service: ImageService
    /// The path prefix the proxy answers under, without a trailing `/` (default empty: every path).
    public let prefix: String

    /// Creates the middleware.
    /// - Parameters:
    ///   - service: answers the image and info requests.
    ///   - prefix: the path prefix (default empty: every path not taken by `/health` and `/metrics`).
    public init(service: ImageService, prefix: String = "") {
        self.service = service
        self.prefix = prefix.hasSuffix("/") ? String(prefix.dropLast()) : prefix
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let configuration = service.configuration
        let preflight = request.method == .options && configuration.allowOrigin != nil
        guard request.method == .get || request.method == .head || preflight else { return try await next(request, context) }
        // The raw target, not a decoded path: plain source URLs keep their percent-encoding.
        let target = request.uri.string
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? target
        guard path.hasPrefix(prefix + "/") else { return try await next(request, context) }
        if preflight { return withCORS(Response(status: .ok)) }
        let local = String(path.dropFirst(prefix.count))
        if local == "/health" || local == "/metrics" || local == "/" || local == "/favicon.ico"
            || (configuration.dialect == .thumbor && local == "/healthcheck") {
            return try await next(request, context)
        }
        if let extra = configuration.healthCheckPath, local == (extra.hasPrefix("/") ? extra : "/" + extra) {
            return try await next(request, context)
        }
        let clientIP = (context as? any RemoteAddressRequestContext)?.remoteAddress?.ipAddress
        let stages = service.startRequest(request, clientIP: clientIP, path: local)
        var response: Response
        if let secret = configuration.secret, !Self.authorized(request, secret: secret) {
            let refusal = ErrorStatus(status: 403, reason: "forbidden: the Authorization header does not carry the secret")
            stages.fail(type: "security", reason: refusal.reason)
            response = service.errorResponse(refusal)
            service.metrics.recordResponse(status: 403)
        } else if configuration.dialect == .imgproxy, local.hasPrefix("/info/") {
            response = await service.traced(request, route: prefix + "/info/{signature}/{options}/{source}", requestID: stages.requestID) {
                await service.info(path: String(local.dropFirst("/info".count)), request: request, stages: stages)
            }
        } else {
            let route = configuration.dialect == .thumbor ? "/{signature}/{options}/{image}" : "/{signature}/{options}/{source}"
            response = await service.traced(request, route: prefix + route, requestID: stages.requestID) { await service.image(path: local, request: request, stages: stages) }
        }
        service.finishRequest(request, response: &response, path: local, stages: stages)
        return withCORS(response)
    }

    /// Adds the CORS headers when ``ImageServerConfiguration/allowOrigin`` is set.
    private func withCORS(_ response: Response) -> Response {
        guard let origin = service.configuration.allowOrigin else { return response }
        var response = response
        response.headers[.accessControlAllowOrigin] = origin
        response.headers[.accessControlAllowMethods] = "GET, OPTIONS"
        return response
    }

    /// Whether `Authorization` is `Bearer SECRET`, compared in constant time.
    static func authorized(_ request: Request, secret: String) -> Bool {
        let given = Array((request.headers[.authorization] ?? "").utf8)
        let expected = Array(("Bearer " + secret).utf8)
        guard given.count == expected.count else { return false }
        var difference: UInt8 = 0
        for index in expected.indices { difference |= expected[index] ^ given[index] }
        return difference == 0
    }
}

/// Gives every answer an `X-Request-ID` (the client's when it is valid, else a new one), as
/// imgproxy does: `/health`, `/metrics` and unrouted paths too. Answers that already carry one
/// (the image proxy's, which logs and traces the same id) keep it.
struct RequestIDMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        if response.headers[ImageService.requestIDField] == nil {
            response.headers[ImageService.requestIDField] = RequestID.accept(request.headers[ImageService.requestIDField])
        }
        return response
    }
}
