import AlcedoTestSupport
import AlcedoURLSession
import Foundation
import Testing
@testable import Alcedo

@Suite("URLSessionImageLoader")
struct URLSessionImageLoaderTests {
    private func withURLSessionDownloader(_ body: (TestHTTPServer, ImageDownloader) async throws -> Void) async throws {
        let server = try await TestHTTPServer.start()
        let downloader = ImageDownloader(name: "urlsession", configuration: .init(timeout: .seconds(30)),
                                         loader: URLSessionImageLoader())
        defer { server.stop() }
        try await body(server, downloader)
        await downloader.shutdown()
    }

    @Test func downloadsFollowsRedirectsAndRevalidates() async throws {
        try await withURLSessionDownloader { server, downloader in
            let png = try samplePNG()
            var response = TestHTTPServer.Response.ok(png, contentType: "image/png").chunked(300)
            response.etag = "\"u1\""
            server.route("/a.png", response)
            server.route("/go", .redirect(to: "/a.png"))
            let progress = Collected<DownloadProgress>()
            let result = try await downloader.downloadData(with: server.url("/go"), progressBlock: { progress.append(DownloadProgress(receivedSize: $0, totalSize: $1)) })
            #expect(result.data == png)
            #expect(result.response.url == server.url("/a.png"))
            #expect(result.cacheInfo.etag == "\"u1\"")
            #expect(progress.values.last?.receivedBytes == png.count)
            // Redirects are followed by the downloader, one request each.
            #expect(server.requestCount("/go") == 1)

            let outcome = try await downloader.revalidateData(with: server.url("/a.png"), validators: result.cacheInfo)
            guard case .notModified = outcome else {
                Issue.record("expected 304, got \(outcome)")
                return
            }
        }
    }

    @Test func errorsAndCancellation() async throws {
        try await withURLSessionDownloader { server, downloader in
            server.route("/missing", .status(404))
            var cut = TestHTTPServer.Response.ok(pngLikeData(count: 5000))
            cut.closeAfter = 1000
            server.route("/cut.png", cut)
            var stall = TestHTTPServer.Response.ok(pngLikeData(count: 5000))
            stall.stallAfter = 1000
            server.route("/stall.png", stall)

            let missing = await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: server.url("/missing")) }
            guard case .responseError(.invalidHTTPStatusCode(let response)) = missing, response.statusCode == 404 else {
                Issue.record("unexpected \(String(describing: missing))")
                return
            }
            await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: server.url("/cut.png")) }

            let task = Task { try await downloader.downloadData(with: server.url("/stall.png")) }
            #expect(await eventually { server.requestCount("/stall.png") == 1 })
            task.cancel()
            let cancelled = await #expect(throws: AlcedoError.self) { try await task.value }
            #expect(cancelled?.isCancellation == true)
            #expect(await eventually { server.abortedCount("/stall.png") == 1 })
        }
    }

    /// A refused connection is named as the AsyncHTTPClient loader names it, so that retry
    /// strategies and `isConnectionFailure` read both loaders alike.
    @Test func refusedConnectionIsNamed() async throws {
        let url = URL(string: "http://127.0.0.1:\(try LoopbackPort.free())/a.png")!
        let downloader = ImageDownloader(name: "urlsession-refused", configuration: .init(timeout: .seconds(30)),
                                         loader: URLSessionImageLoader())
        let error = await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: url) }
        guard case .connectionRefused(let refused)? = error?.networkReason else {
            Issue.record("expected a refused connection, got \(String(describing: error))")
            await downloader.shutdown()
            return
        }
        #expect(refused == url)
        #expect(error?.isConnectionFailure == true)
        await downloader.shutdown()
    }
}
