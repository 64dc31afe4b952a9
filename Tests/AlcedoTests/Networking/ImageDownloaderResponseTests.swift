import Foundation
import Testing
@testable import Alcedo

@Suite("ImageDownloader responses")
struct ImageDownloaderResponseTests {
    @Test func downloadsBytesWithResponseAndCacheInfo() async throws {
        try await withDownloader { server, downloader in
            let png = try samplePNG()
            server.route("/a.png", TestHTTPServer.Response.ok(png, contentType: "image/png")
                .header("Cache-Control", "max-age=60").header("ETag", "\"v1\""))
            let result = try await downloader.downloadData(with: server.url("/a.png"))
            #expect(result.data == png)
            #expect(result.format == .png)
            #expect(result.url == server.url("/a.png"))
            #expect(result.response.statusCode == 200)
            #expect(result.response.headers["content-type"] == "image/png")
            #expect(result.cacheInfo.maxAge == 60)
            #expect(result.cacheInfo.etag == "\"v1\"")
            #expect(result.cacheInfo.contentType == "image/png")
            let request = try #require(server.requests("/a.png").first)
            #expect(request.headers.first(name: "User-Agent") == "Alcedo")
            #expect(request.headers.first(name: "Accept")?.hasPrefix("image/") == true)
        }
    }

    @Test(arguments: [404, 500, 403])
    func badStatusIsAnErrorWithTheCode(status: Int) async throws {
        try await withDownloader { server, downloader in
            server.route("/x", .status(status, body: "nope"))
            let error = await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: server.url("/x")) }
            guard case .responseError(.invalidHTTPStatusCode(let response)) = error else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            #expect(response.statusCode == status)
            #expect(response.url == server.url("/x"))
            #expect(error?.description.contains("\(status)") == true)
        }
    }

    @Test func acceptableStatusCodesCanBeCustomised() async throws {
        var configuration = ImageDownloader.Configuration(timeout: .seconds(30))
        configuration.acceptableStatusCodes = [200, 203]
        try await withDownloader(configuration) { server, downloader in
            server.route("/203", .init(status: 203, body: pngLikeData(count: 100)))
            server.route("/206", .init(status: 206, body: pngLikeData(count: 100)))
            let accepted = try await downloader.downloadData(with: server.url("/203"))
            #expect(accepted.response.statusCode == 203)
            await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: server.url("/206")) }
        }
    }

    @Test func nonImageBodyIsAnErrorThatSaysWhatArrived() async throws {
        try await withDownloader { server, downloader in
            // Claims to be a PNG; the bytes say otherwise. Kingfisher's processor error on the data.
            let body = Data("<!DOCTYPE html><html><body>Sign in</body></html>".utf8)
            server.route("/page", .ok(body, contentType: "image/png"))
            let error = await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: server.url("/page")) }
            guard case .processorError(.processingFailed(let processor, .data(let data))) = error else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            #expect(processor.identifier == DefaultImageProcessor.default.identifier)
            #expect(data == body)
            #expect(error?.description.contains(#"48 bytes, not an image: "<!DOCTYPE html>"#) == true, "\(String(describing: error))")
        }
    }

    @Test func binaryNonImageIsShownAsHex() async throws {
        try await withDownloader { server, downloader in
            server.route("/bin", .ok(Data([0x00, 0x01, 0xFE, 0xFF, 0x10])))
            let error = await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: server.url("/bin")) }
            #expect(error?.description.contains("00 01 fe ff 10") == true)
        }
    }

    @Test func largeNonImageBodyStopsEarly() async throws {
        try await withDownloader { server, downloader in
            var response = TestHTTPServer.Response.ok(Data(repeating: 0x41, count: 8192), contentType: "text/plain")
            response.chunkSize = 4096
            response.stallAfter = 4096  // the rest never comes: only the early sniff can end this
            server.route("/text", response)
            let error = await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: server.url("/text")) }
            guard case .processorError(.processingFailed(_, .data(let data))) = error else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            // The bytes received when the downloader stopped.
            #expect(data.count == 4096)
        }
    }

    @Test func emptyBodyIsNotAnImage() async throws {
        try await withDownloader { server, downloader in
            server.route("/empty", .ok(Data()))
            let error = await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: server.url("/empty")) }
            #expect(error?.description.contains("data (empty)") == true)
        }
    }

    @Test func declaredBodyOverTheLimitFailsBeforeReading() async throws {
        var configuration = ImageDownloader.Configuration(timeout: .seconds(30))
        configuration.maximumBodySize = 1000
        try await withDownloader(configuration) { server, downloader in
            server.route("/big", .ok(pngLikeData(count: 5000)))
            let error = await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: server.url("/big")) }
            guard case .responseError(.invalidURLResponse(.bodyTooLarge(_, let limit, let received))) = error else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            #expect(limit == 1000)
            #expect(received == 0)
        }
    }

    @Test func undeclaredBodyOverTheLimitStopsWhileStreaming() async throws {
        var configuration = ImageDownloader.Configuration(timeout: .seconds(30))
        configuration.maximumBodySize = 10_000
        try await withDownloader(configuration) { server, downloader in
            var response = TestHTTPServer.Response.ok(pngLikeData(count: 100_000))
            response.contentLength = .none
            response.chunkSize = 4000
            server.route("/big", response)
            let error = await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: server.url("/big")) }
            guard case .responseError(.invalidURLResponse(.bodyTooLarge(_, 10_000, let received))) = error else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            #expect(received > 10_000 && received <= 12_000)
        }
    }

    @Test func bodyCutShortIsALengthMismatch() async throws {
        try await withDownloader { server, downloader in
            var response = TestHTTPServer.Response.ok(pngLikeData(count: 10_000))
            response.closeAfter = 3000
            server.route("/cut", response)
            let error = await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: server.url("/cut")) }
            guard case .responseError(.invalidURLResponse(.lengthMismatch(_, let expected, let received))) = error else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            #expect(expected == 10_000)
            #expect(received == 3000)
        }
    }

    @Test func contentLengthLargerThanTheBodyIsALengthMismatch() async throws {
        try await withDownloader { server, downloader in
            var response = TestHTTPServer.Response.ok(pngLikeData(count: 500))
            response.contentLength = .value(800)
            response.closeAfter = 500
            server.route("/lie", response)
            let error = await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: server.url("/lie")) }
            guard case .responseError(.invalidURLResponse(.lengthMismatch(_, 800, 500))) = error else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
        }
    }

    @Test func contentLengthSmallerThanTheBodyYieldsOnlyTheAnnouncedBytes() async throws {
        try await withDownloader { server, downloader in
            // HTTP/1.1 frames the body by Content-Length: the surplus is not part of the response.
            var response = TestHTTPServer.Response.ok(pngLikeData(count: 900))
            response.contentLength = .value(600)
            server.route("/lie", response)
            let result = try await downloader.downloadData(with: server.url("/lie"))
            #expect(result.data.count == 600)
        }
    }

    @Test func chunkedBodyWithoutContentLengthDownloads() async throws {
        try await withDownloader { server, downloader in
            var response = TestHTTPServer.Response.ok(pngLikeData(count: 50_000))
            response.contentLength = .none
            response.chunkSize = 7000
            server.route("/chunked", response)
            let result = try await downloader.downloadData(with: server.url("/chunked"))
            #expect(result.data == pngLikeData(count: 50_000))
            #expect(result.response.expectedContentLength == nil)
        }
    }

    @Test func invalidURLIsRefused() async throws {
        try await withDownloader { _, downloader in
            let error = await #expect(throws: AlcedoError.self) {
                try await downloader.downloadData(with: URL(string: "ftp://example.com/a.png")!)
            }
            guard case .requestError(.invalidURL) = error else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
        }
    }

    @Test func refusedConnectionIsRetriable() async throws {
        let server = try await TestHTTPServer.start()
        let url = server.url("/gone.png")
        try await server.shutdown()
        let downloader = ImageDownloader(name: "test")
        let error = await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: url) }
        await downloader.shutdown()
        guard case .responseError(.URLSessionError(NetworkErrorReason.connectionRefused(let failedURL))) = error else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        #expect(failedURL == url)
        #expect(error?.isRetriable == true)
    }
}
