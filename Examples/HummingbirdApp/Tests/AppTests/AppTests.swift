import Alcedo
import AlcedoServer
import App
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// The app on a real port: its own thumbnail route, and the proxy fetching from the app
/// itself over HTTP.
@Suite struct AppTests {
    func withLiveApp(_ body: @escaping @Sendable (any TestClientProtocol, Int) async throws -> Void) async throws {
        var proxy = ImageServerConfiguration()
        proxy.allowPrivateNetworks = true   // the origin is this app, on 127.0.0.1
        let (application, service) = buildApplication(port: 0, proxy: proxy)
        do {
            try await application.test(.live) { client in
                let port = try #require(client.port)
                try await body(client, port)
            }
        } catch {
            await service.shutdown()
            throw error
        }
        await service.shutdown()
    }

    @Test func thumbnailRouteServesADownsampledImage() async throws {
        try await withLiveApp { client, _ in
            try await client.execute(uri: "/thumbnails/valley.jpg?size=100&format=webp", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "image/webp")
                let info = try ImageCodecRegistry.shared.info(for: Data(buffer: response.body))
                #expect(info.format == .webp)
                // Fitted inside 100x100, the aspect ratio kept.
                #expect(max(info.width, info.height) == 100)
                #expect(min(info.width, info.height) < 100)
            }
            try await client.execute(uri: "/thumbnails/valley.jpg?size=100&format=png", method: .get) { response in
                #expect(response.headers[HTTPField.Name("X-Image-Cache")!] == "memory")
            }
            for name in ["..%2FPackage.swift", ".hidden", "missing.jpg"] {
                try await client.execute(uri: "/thumbnails/" + name, method: .get) { response in
                    #expect(response.status == .notFound, "\(name)")
                }
            }
        }
    }

    @Test func proxyAnswersImgproxyURLsUnderItsPrefix() async throws {
        try await withLiveApp { client, port in
            let source = "http://127.0.0.1:\(port)/thumbnails/valley.jpg?size=900&format=jpeg"
            let path = "/proxy/insecure/rs:fill:160:160/f:webp/plain/"
                + source.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            var etag = ""
            try await client.execute(uri: path, method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "image/webp")
                let info = try ImageCodecRegistry.shared.info(for: Data(buffer: response.body))
                #expect(info.width == 160 && info.height == 160)
                etag = response.headers[.eTag] ?? ""
            }
            #expect(!etag.isEmpty)
            try await client.execute(uri: path, method: .get, headers: [.ifNoneMatch: etag]) { response in
                #expect(response.status == .notModified)
            }
            try await client.execute(uri: "/hello", method: .get) { response in
                #expect(String(buffer: response.body) == "Hello from Hummingbird with Alcedo\n")
            }
            try await client.execute(uri: "/proxy/insecure/rs:fit:abc/plain/x", method: .get) { response in
                #expect((400..<500).contains(response.status.code))
            }
        }
    }
}
