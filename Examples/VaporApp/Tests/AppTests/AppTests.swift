import Alcedo
import AlcedoServer
import App
import Foundation
import Testing
import Vapor
import VaporTesting

/// The app on a real port: its own thumbnail route, and the mounted proxy fetching from the
/// app itself over HTTP.
@Suite struct AppTests {
    /// Starts the app on a free loopback port, runs `body` with its base URL, and stops it.
    func withRunningApp(_ body: (Application, String) async throws -> Void) async throws {
        var proxyConfiguration = ImageServerConfiguration()
        proxyConfiguration.allowPrivateNetworks = true   // the origin is this app, on 127.0.0.1
        try await withApp(configure: { app in
            let proxy = try configure(app, proxy: proxyConfiguration)
            app.lifecycle.use(ProxyShutdown(proxy: proxy))
        }) { app in
            try await app.server.start(address: .hostname("127.0.0.1", port: 0))
            let port = try #require(app.http.server.shared.localAddress?.port)
            do { try await body(app, "http://127.0.0.1:\(port)") } catch {
                await app.server.shutdown()
                throw error
            }
            await app.server.shutdown()
        }
    }

    @Test func thumbnailRouteServesADownsampledImage() async throws {
        try await withRunningApp { app, base in
            let response = try await app.client.get(URI(string: base + "/thumbnails/dusk.jpg?size=120&format=webp"))
            #expect(response.status == .ok)
            #expect(response.headers.contentType?.description == "image/webp")
            let body = try #require(response.body)
            let info = try ImageCodecRegistry.shared.info(for: Data(buffer: body))
            #expect(info.format == .webp)
            // Fitted inside 120x120, the aspect ratio kept.
            #expect(max(info.width, info.height) == 120)
            #expect(min(info.width, info.height) < 120)
            // A second request is answered from the manager's memory cache.
            let again = try await app.client.get(URI(string: base + "/thumbnails/dusk.jpg?size=120&format=png"))
            #expect(again.headers.first(name: "X-Image-Cache") == "memory")
        }
    }

    @Test func thumbnailRouteRefusesPathsOutsideItsFolder() async throws {
        try await withRunningApp { app, base in
            for name in ["..%2FPackage.swift", ".hidden", "missing.jpg"] {
                let response = try await app.client.get(URI(string: base + "/thumbnails/" + name))
                #expect(response.status == .notFound, "\(name)")
            }
            let bad = try await app.client.get(URI(string: base + "/thumbnails/dusk.jpg?format=bmp"))
            #expect(bad.status == .badRequest)
        }
    }

    @Test func mountedProxyAnswersImgproxyURLs() async throws {
        try await withRunningApp { app, base in
            let source = base + "/thumbnails/dusk.jpg?size=800&format=jpeg"
            let path = "/proxy/insecure/rs:fit:300:200/f:png/plain/" + source.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let response = try await app.client.get(URI(string: base + path))
            #expect(response.status == .ok)
            #expect(response.headers.contentType?.description == "image/png")
            let body = try #require(response.body)
            let info = try ImageCodecRegistry.shared.info(for: Data(buffer: body))
            #expect(info.format == .png)
            #expect(info.width <= 300 && info.height <= 200)
            #expect(info.width == 300 || info.height == 200)
            // The proxy's ETag revalidates to a 304 with no body.
            let etag = try #require(response.headers.first(name: .eTag))
            let revalidated = try await app.client.get(URI(string: base + path), headers: ["If-None-Match": etag])
            #expect(revalidated.status == .notModified)
            // Paths outside the prefix stay the app's; malformed proxy URLs are the proxy's 4xx.
            let hello = try await app.client.get(URI(string: base + "/hello"))
            #expect(hello.body.map { String(buffer: $0) } == "Hello from Vapor with Alcedo\n")
            let malformed = try await app.client.get(URI(string: base + "/proxy/insecure/rs:fit:abc/plain/x"))
            #expect((400..<500).contains(malformed.status.code))
        }
    }
}

/// Stops the proxy's service with the app.
struct ProxyShutdown: LifecycleHandler {
    let proxy: ImageProxyMount
    func shutdownAsync(_ application: Application) async { await proxy.shutdown() }
}
