import Foundation
import Testing
@testable import Alcedo

/// Keep-alive connections that the server closes while idle, without `Connection: close`: the
/// next request on such a connection finds it closed before any response byte arrives.
@Suite("Stale keep-alive connections")
struct StaleConnectionRetryTests {
    @Test("a redirect chain over connections the server closes when reused completes: each GET is sent once more on a fresh connection")
    func redirectChainOverStaleConnections() async throws {
        try await withDownloader { server, downloader in
            let png = try samplePNG()
            server.route("/a", .redirect(to: "/b"))
            server.route("/b", .redirect(to: "/c"))
            server.route("/c", .ok(png, contentType: "image/png"))
            server.route("/warm", .ok(png, contentType: "image/png"))
            server.closeReusedConnections(true)
            // A complete download leaves its connection idle in the pool: the chain starts on it.
            _ = try await downloader.downloadData(with: server.url("/warm"))
            // No retry strategy: the downloader itself would report the first failure.
            let data = try await downloader.downloadData(with: server.url("/a")).data
            #expect(data == png)
            #expect(server.requestCount("/a") == 1 && server.requestCount("/b") == 1 && server.requestCount("/c") == 1)
            #expect(server.droppedRequests >= 1, "the test did not exercise a reused connection")
        }
    }

    @Test("consecutive downloads reuse pooled connections the server has closed, and all succeed")
    func consecutiveDownloadsOverStaleConnections() async throws {
        try await withDownloader { server, downloader in
            let png = try samplePNG()
            for index in 0..<5 { server.route("/\(index).png", .ok(png, contentType: "image/png")) }
            server.closeReusedConnections(true)
            for index in 0..<5 {
                #expect(try await downloader.downloadData(with: server.url("/\(index).png")).data == png)
            }
            #expect(server.droppedRequests >= 1)
        }
    }

    @Test("a server that closes every connection before answering fails after one retry, not in a loop")
    func retriedOnlyOnce() async throws {
        try await withDownloader { server, downloader in
            var drop = TestHTTPServer.Response()
            drop.dropsConnection = true
            server.route("/gone", drop)
            await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: server.url("/gone")) }
            #expect(server.requestCount("/gone") == 2, "one request and one retry")
        }
    }
}
