import Alcedo
import Foundation
import Vapor

/// The app's own route on Alcedo's library: `GET /thumbnails/NAME?size=N&format=webp|jpeg|png`
/// answers a thumbnail of one of the app's images, decoded at the smallest scale that covers
/// the size, cached in memory by Alcedo's ``ImageManager``, and encoded as asked.
public struct ThumbnailRoute: Sendable {
    /// The folder the images are read from (default: the images bundled with the app).
    public let folder: URL
    /// The manager that loads, processes and caches the images (default: a manager of its own
    /// with memory caching only).
    public let manager: ImageManager

    /// A route serving the images in `folder`.
    public init(folder: URL? = nil, manager: ImageManager? = nil) {
        self.folder = folder ?? Bundle.module.resourceURL!.appendingPathComponent("Images")
        self.manager = manager ?? ImageManager(cache: ImageCache(name: "thumbnails"))
    }

    /// Adds `GET /thumbnails/:name` to `routes`.
    public func mount(on routes: any RoutesBuilder) {
        routes.get("thumbnails", ":name") { request in try await self.thumbnail(request) }
    }

    func thumbnail(_ request: Request) async throws -> Response {
        let name = request.parameters.get("name") ?? ""
        // Only a plain file name in the folder: no `..`, no subfolders, no hidden files.
        guard !name.isEmpty, !name.hasPrefix("."), !name.contains("/") else { throw Abort(.notFound) }
        let size = min(max(request.query[Int.self, at: "size"] ?? 256, 16), 2048)
        let format: ImageFormat
        switch request.query[String.self, at: "format"] ?? "jpeg" {
        case "jpeg", "jpg": format = .jpeg
        case "png": format = .png
        case "webp": format = .webp
        default: throw Abort(.badRequest, reason: "format is jpeg, png or webp")
        }
        let file = folder.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: file.path) else { throw Abort(.notFound) }
        let processor = DownsamplingImageProcessor(size: PixelSize(width: size, height: size))
        let result: RetrieveImageResult
        do {
            result = try await manager.retrieveImage(with: .provider(LocalFileImageDataProvider(fileURL: file)),
                                                     options: [.processor(processor), .cacheMemoryOnly])
        } catch {
            throw Abort(.unprocessableEntity, reason: error.localizedDescription)
        }
        let bytes = try ImageCodecRegistry.shared.encode(result.image, as: format)
        var headers = HTTPHeaders()
        headers.contentType = HTTPMediaType(type: "image", subType: format.rawValue)
        headers.add(name: "X-Image-Cache", value: "\(result.cacheType)")
        headers.cacheControl = .init(isPublic: true, maxAge: 86_400)
        return Response(status: .ok, headers: headers, body: .init(data: bytes))
    }
}
