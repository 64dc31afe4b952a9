import Alcedo
import AlcedoServer
import Foundation
import HTTPTypes
import Hummingbird

/// The app: `GET /thumbnails/{name}?size=N&format=jpeg|png|webp` made with Alcedo's library,
/// and Alcedo's image proxy (imgproxy's URLs) under `/proxy`, in one Hummingbird router.
///
/// - Parameters:
///   - host: the address to listen on (default `127.0.0.1`).
///   - port: the port (default 8080; 0 picks a free one).
///   - proxy: the proxy's configuration (default: imgproxy's defaults, unsigned URLs).
///   - images: the folder thumbnails are made from (default: the images bundled with the app).
/// - Returns: the application and the proxy's service, whose `shutdown()` the caller runs
///   after the application returns.
public func buildApplication(host: String = "127.0.0.1", port: Int = 8080,
                             proxy: ImageServerConfiguration = ImageServerConfiguration(),
                             images: URL? = nil) -> (some ApplicationProtocol, ImageService) {
    let service = ImageService(configuration: proxy)
    let router = Router()
    // The proxy first: it answers GET and HEAD under /proxy and passes everything else on.
    router.add(middleware: ImageProxyMiddleware(service: service, prefix: "/proxy"))
    router.get("/hello") { _, _ in "Hello from Hummingbird with Alcedo\n" }
    let thumbnails = Thumbnails(folder: images ?? Bundle.module.resourceURL!.appendingPathComponent("Images"))
    router.get("/thumbnails/{name}") { request, context in try await thumbnails.respond(request, context: context) }
    let application = Application(router: router, configuration: .init(address: .hostname(host, port: port)))
    return (application, service)
}

/// Thumbnails of the images in one folder, through an ``ImageManager`` of their own
/// (memory cache only).
struct Thumbnails: Sendable {
    let folder: URL
    let manager = ImageManager(cache: ImageCache(name: "thumbnails"))

    func respond(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = context.parameters.get("name") ?? ""
        // Only a plain file name in the folder: no `..`, no subfolders, no hidden files.
        guard !name.isEmpty, !name.hasPrefix("."), !name.contains("/") else { throw HTTPError(.notFound) }
        let query = request.uri.queryParameters
        let size = min(max(query.get("size", as: Int.self) ?? 256, 16), 2048)
        let format: ImageFormat
        switch query.get("format") ?? "jpeg" {
        case "jpeg", "jpg": format = .jpeg
        case "png": format = .png
        case "webp": format = .webp
        default: throw HTTPError(.badRequest, message: "format is jpeg, png or webp")
        }
        let file = folder.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: file.path) else { throw HTTPError(.notFound) }
        let result: RetrieveImageResult
        do {
            result = try await manager.retrieveImage(
                with: .provider(LocalFileImageDataProvider(fileURL: file)),
                options: [.processor(DownsamplingImageProcessor(size: PixelSize(width: size, height: size))), .cacheMemoryOnly])
        } catch {
            throw HTTPError(.unprocessableContent, message: error.localizedDescription)
        }
        let bytes = try ImageCodecRegistry.shared.encode(result.image, as: format)
        var headers = HTTPFields()
        headers[.contentType] = format.mimeType
        headers[.cacheControl] = "public, max-age=86400"
        headers[HTTPField.Name("X-Image-Cache")!] = "\(result.cacheType)"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
