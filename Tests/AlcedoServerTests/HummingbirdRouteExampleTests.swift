import Alcedo
import AlcedoServer
import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Testing

/// The example of the "Serving images" article: a Hummingbird app of your own that returns
/// a thumbnail through an ImageManager in one route, and mounts the image proxy under
/// `/images`. It is compiled and run here.
@Suite("Hummingbird route example")
struct HummingbirdRouteExampleTests {
    /// Builds the example app's router.
    static func makeRouter(manager: ImageManager, proxy: ImageService) -> Router<BasicRequestContext> {
        let router = Router()
        // The proxy answers everything under /images (imgproxy URLs, /images/info/…).
        router.add(middleware: ImageProxyMiddleware(service: proxy, prefix: "/images"))
        // Your own route: /thumbnail?url=… returns a 128x128 JPEG thumbnail.
        router.get("/thumbnail") { request, _ -> Response in
            guard let text = request.uri.queryParameters.get("url"), let url = URL(string: text) else {
                throw HTTPError(.badRequest, message: "missing url")
            }
            let processor = DownsamplingImageProcessor(size: PixelSize(width: 128, height: 128))
            let result: RetrieveImageResult
            do {
                result = try await manager.retrieveImage(with: url, options: [.processor(processor)])
            } catch {
                throw HTTPError(.badGateway, message: "\(error)")
            }
            let jpeg = try ImageCodecRegistry.shared.encode(result.image, as: .jpeg, options: EncodingOptions(quality: 80))
            var headers = HTTPFields()
            headers[.contentType] = "image/jpeg"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: jpeg)))
        }
        return router
    }

    @Test func theExampleServesThumbnailsAndProxiedImages() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/cat.jpg", .ok(TestImages.jpeg(width: 512, height: 256), contentType: "image/jpeg"))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-hb-example-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = ImageServerConfiguration()
        configuration.allowPrivateNetworks = true
        configuration.cacheDirectory = folder
        // AVIF for clients that list it in Accept (off by default).
        configuration.autoAVIF = true
        let proxy = ImageService(configuration: configuration)
        let manager = ImageManager(downloader: ImageDownloader(name: "example"),
                                   cache: ImageCache(name: "example", cacheDirectoryURL: folder))
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(router: Self.makeRouter(manager: manager, proxy: proxy),
                              configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) })
        // Stopped by a graceful shutdown, as SIGTERM stops it: a cancelled Hummingbird server
        // holding an accepted connection not yet handed to a handler traps in NIO.
        let group = ServiceGroup(configuration: .init(services: [app], logger: Logger(label: "example")))
        Task { try await group.run() }
        defer { Task { await group.triggerGracefulShutdown() } }
        var ports = stream.makeAsyncIterator()
        let port = try #require(await ports.next())
        let client = ServerHarness.sharedClient

        let source = origin.url("/cat.jpg").absoluteString
        let thumbnail = try await client.execute(
            HTTPClientRequest(url: "http://127.0.0.1:\(port)/thumbnail?url=" + source),
            timeout: .seconds(300))
        #expect(thumbnail.status == .ok)
        let thumbnailBytes = try await thumbnail.body.collect(upTo: 1 << 20)
        #expect(try ImageCodecRegistry.shared.decode(Data(thumbnailBytes.readableBytesView)).pixelSize == PixelSize(width: 128, height: 64))

        let proxied = try await client.execute(
            HTTPClientRequest(url: "http://127.0.0.1:\(port)/images/insecure/rs:fill:50:50/plain/\(source)@png"), timeout: .seconds(300))
        #expect(proxied.status == .ok)
        let proxiedBytes = try await proxied.body.collect(upTo: 1 << 20)
        #expect(try ImageCodecRegistry.shared.decode(Data(proxiedBytes.readableBytesView)).pixelSize == PixelSize(width: 50, height: 50))
        // Negotiated from Accept: AVIF, with Vary.
        var negotiated = HTTPClientRequest(url: "http://127.0.0.1:\(port)/images/insecure/rs:fill:50:50/plain/\(source)")
        negotiated.headers.add(name: "Accept", value: "image/avif,image/webp,*/*")
        let avif = try await client.execute(negotiated, timeout: .seconds(300))
        #expect(avif.status == .ok)
        #expect(avif.headers.first(name: "Content-Type") == "image/avif" && avif.headers.first(name: "Vary") == "Accept")
        let avifBytes = try await avif.body.collect(upTo: 1 << 20)
        #expect(ImageFormat.sniff(Data(avifBytes.readableBytesView)) == .avif)
        await manager.downloader.shutdown()
        await proxy.shutdown()
    }
}
