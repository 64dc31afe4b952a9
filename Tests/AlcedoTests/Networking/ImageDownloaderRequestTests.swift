import Foundation
import Testing
@testable import Alcedo

@Suite("ImageDownloader requests")
struct ImageDownloaderRequestTests {
    private static let shortTimeout = ImageDownloader.Configuration(timeout: .milliseconds(300))

    @Test func slowServerTimesOut() async throws {
        try await withDownloader(Self.shortTimeout) { server, downloader in
            server.route("/slow", TestHTTPServer.Response.ok(pngLikeData(count: 100)).delayed(by: .seconds(3)))
            let error = await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: server.url("/slow")) }
            guard case .responseError(.URLSessionError(NetworkErrorReason.timedOut(_, let limit))) = error else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            #expect(limit == .milliseconds(300))
        }
    }

    @Test func stallInTheMiddleOfTheBodyTimesOut() async throws {
        try await withDownloader(Self.shortTimeout) { server, downloader in
            var response = TestHTTPServer.Response.ok(pngLikeData(count: 20_000))
            response.stallAfter = 5000
            server.route("/stall", response)
            let error = await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: server.url("/stall")) }
            guard case .responseError(.URLSessionError(NetworkErrorReason.timedOut)) = error else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            // The stalled connection is closed by the client.
            #expect(await eventually { server.abortedCount("/stall") == 1 })
        }
    }

    @Test func followsRedirects() async throws {
        try await withDownloader { server, downloader in
            let png = try samplePNG()
            server.route("/start", .redirect(to: "/middle", status: 301))
            server.route("/middle", .redirect(to: server.url("/final.png").absoluteString, status: 307))
            server.route("/final.png", .ok(png))
            let result = try await downloader.downloadData(with: server.url("/start"))
            #expect(result.data == png)
            #expect(result.url == server.url("/start"))
            #expect(result.response.url == server.url("/final.png"))
            #expect(result.response.originalURL == server.url("/start"))
        }
    }

    @Test func credentialsDoNotFollowARedirectToAnotherOrigin() async throws {
        try await withDownloader { server, downloader in
            let other = try await TestHTTPServer.start()
            defer { other.stop() }
            other.route("/img.png", .ok(pngLikeData(count: 64)))
            server.route("/same.png", .ok(pngLikeData(count: 64)))
            server.route("/away", .redirect(to: other.url("/img.png").absoluteString))
            server.route("/here", .redirect(to: "/same.png"))
            let signed = DownloadOptions(requestModifier: HeaderFieldsModifier(["Authorization": "Bearer t", "Cookie": "c=1"]))
            _ = try await downloader.downloadData(with: server.url("/away"), options: signed)
            _ = try await downloader.downloadData(with: server.url("/here"), options: signed)
            let crossed = try #require(other.requests("/img.png").first)
            #expect(!crossed.headers.contains(name: "Authorization") && !crossed.headers.contains(name: "Cookie"))
            let kept = try #require(server.requests("/same.png").first)
            #expect(kept.headers.first(name: "Authorization") == "Bearer t")
        }
    }

    @Test func redirectLoopIsDetected() async throws {
        try await withDownloader { server, downloader in
            server.route("/a", .redirect(to: "/b"))
            server.route("/b", .redirect(to: "/a"))
            let error = await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: server.url("/a")) }
            guard case .requestError(.invalidURL(.redirectLoop(let url))) = error else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            #expect(url == server.url("/a"))
            #expect(server.requestCount("/a") == 1)
        }
    }

    @Test func tooManyRedirectsStop() async throws {
        var configuration = ImageDownloader.Configuration(timeout: .seconds(30))
        configuration.maximumRedirects = 3
        try await withDownloader(configuration) { server, downloader in
            server.route("/hop") { request in
                let n = Int(request.uri.split(separator: "=").last ?? "0") ?? 0
                return .redirect(to: "/hop?n=\(n + 1)")
            }
            let error = await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: server.url("/hop?n=0")) }
            guard case .requestError(.invalidURL(.tooManyRedirects(_, 3))) = error else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            #expect(server.requestCount("/hop") == 4)
        }
    }

    @Test func redirectWithoutLocationIsInvalid() async throws {
        try await withDownloader { server, downloader in
            server.route("/r", .status(302))
            let error = await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: server.url("/r")) }
            guard case .requestError(.invalidURL(.invalidRedirect(_, nil))) = error else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
        }
    }

    @Test func redirectHandlerCanRewriteOrStop() async throws {
        try await withDownloader { server, downloader in
            server.route("/r", .redirect(to: "/elsewhere"))
            server.route("/elsewhere", .status(404))
            server.route("/chosen.png", .ok(pngLikeData(count: 64)))
            let seen = Collected<Int>()
            let rewrite = AnyRedirectHandler { response, request in
                seen.append(response.statusCode)
                var request = request
                request.url = server.url("/chosen.png")
                return request
            }
            let result = try await downloader.downloadData(with: server.url("/r"), options: .init(redirectHandler: rewrite))
            #expect(result.response.url == server.url("/chosen.png"))
            #expect(seen.values == [302])

            let stop = AnyRedirectHandler { _, _ in nil }
            let error = await #expect(throws: AlcedoError.self) {
                try await downloader.downloadData(with: server.url("/r"), options: .init(redirectHandler: stop))
            }
            guard case .responseError(.invalidHTTPStatusCode(let response)) = error, response.statusCode == 302 else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
        }
    }

    @Test func requestModifierAddsHeadersAndCanRefuse() async throws {
        try await withDownloader { server, downloader in
            server.route("/private.png") { request in
                request.headers.first(name: "Authorization") == "Bearer s3cret"
                    ? .ok(pngLikeData(count: 64)) : .status(401)
            }
            let modifier = AnyModifier { request in
                var request = request
                request.setBearerToken("s3cret")
                return request
            }
            let result = try await downloader.downloadData(with: server.url("/private.png"), options: .init(requestModifier: modifier))
            #expect(result.data.count == 64)

            let refuse = AnyModifier { _ in nil }
            let error = await #expect(throws: AlcedoError.self) {
                try await downloader.downloadData(with: server.url("/private.png"), options: .init(requestModifier: refuse))
            }
            guard case .requestError(.emptyRequest) = error else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            #expect(server.requestCount("/private.png") == 1)
        }
    }

    @Test func defaultHeadersAuthenticateEveryRequest() async throws {
        var configuration = ImageDownloader.Configuration(timeout: .seconds(30))
        var request = DownloadRequest(url: URL(string: "http://unused")!)
        request.setBasicAuthorization(username: "alice", password: "pw")
        configuration.defaultHeaders["Authorization"] = request.headers["Authorization"]
        try await withDownloader(configuration) { server, downloader in
            server.route("/a.png", .ok(pngLikeData(count: 64)))
            _ = try await downloader.downloadData(with: server.url("/a.png"))
            let sent = try #require(server.requests("/a.png").first)
            #expect(sent.headers.first(name: "Authorization") == "Basic YWxpY2U6cHc=")
        }
    }

    @Test func delegateCanRejectOrRewriteTheBody() async throws {
        struct Unwrap: ImageDownloaderDelegate {
            func imageDownloader(_ downloader: ImageDownloader, didDownload data: Data,
                                 with response: DownloadResponse) async throws(AlcedoError) -> Data {
                guard data.starts(with: Data("WRAP".utf8)) else {
                    throw .responseError(reason: .rejected(response.url, message: "not wrapped"))
                }
                return data.dropFirst(4)
            }
        }
        var configuration = ImageDownloader.Configuration(timeout: .seconds(30))
        configuration.delegate = Unwrap()
        try await withDownloader(configuration) { server, downloader in
            server.route("/wrapped", .ok(Data("WRAP".utf8) + pngLikeData(count: 100)))
            server.route("/plain", .ok(pngLikeData(count: 100)))
            let result = try await downloader.downloadData(with: server.url("/wrapped"))
            #expect(result.data == pngLikeData(count: 100))
            let error = await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: server.url("/plain")) }
            guard case .responseError(.invalidURLResponse(.rejected(_, "not wrapped"))) = error else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
        }
    }

    @Test func progressReportsReceivedAndExpectedBytes() async throws {
        try await withDownloader { server, downloader in
            var response = TestHTTPServer.Response.ok(pngLikeData(count: 40_000)).chunked(10_000, every: .milliseconds(5))
            server.route("/known", response)
            response.contentLength = .none
            server.route("/unknown", response)

            let known = Collected<DownloadProgress>()
            _ = try await downloader.downloadData(with: server.url("/known"), progressBlock: { known.append(DownloadProgress(receivedSize: $0, totalSize: $1)) })
            #expect(known.values.last == DownloadProgress(receivedBytes: 40_000, expectedBytes: 40_000))
            #expect(known.values.map(\.receivedBytes) == known.values.map(\.receivedBytes).sorted())
            #expect(known.values.allSatisfy { $0.expectedBytes == 40_000 })
            #expect(known.values.count >= 2)

            let unknown = Collected<DownloadProgress>()
            _ = try await downloader.downloadData(with: server.url("/unknown"), progressBlock: { unknown.append(DownloadProgress(receivedSize: $0, totalSize: $1)) })
            #expect(unknown.values.last?.receivedBytes == 40_000)
            #expect(unknown.values.allSatisfy { $0.expectedBytes == nil && $0.fractionCompleted == nil })
        }
    }

    @Test func progressAsAnAsyncSequence() async throws {
        try await withDownloader { server, downloader in
            server.route("/p", TestHTTPServer.Response.ok(pngLikeData(count: 30_000)).chunked(10_000, every: .milliseconds(20)))
            let done = Collected<Bool>()
            let task = downloader.downloadData(with: server.url("/p")) { result in done.append((try? result.get()) != nil) }
            var last: DownloadProgress?
            for await progress in task.progress { last = progress }
            #expect(last?.receivedBytes == 30_000)
            #expect(last?.fractionCompleted == 1)
            #expect(await eventually { done.values == [true] })
        }
    }

    @Test func lowPriorityWaitsBehindNormalAndHigh() async throws {
        var configuration = ImageDownloader.Configuration(timeout: .seconds(30))
        configuration.maximumConcurrentRequestsPerHost = 1
        try await withDownloader(configuration) { server, downloader in
            for path in ["/first", "/low", "/normal", "/high"] { server.route(path, .ok(pngLikeData(count: 32))) }
            server.hold("/first")
            let first = Task { try await downloader.downloadData(with: server.url("/first")) }
            #expect(await eventually { server.requestCount("/first") == 1 })
            let host = try #require(ImageDownloader.hostKey(server.url("/")))
            var tasks: [Task<ImageDataResult, any Error>] = []
            for (index, (path, priority)) in [("/low", DownloadPriority.low), ("/normal", .normal), ("/high", .high)].enumerated() {
                tasks.append(Task { try await downloader.downloadData(with: server.url(path), options: .init(priority: priority)) })
                #expect(await eventually { downloader.hostLimiter.load(host).waiting == index + 1 })
            }
            server.release("/first")
            _ = try await first.value
            for task in tasks { _ = try await task.value }
            #expect(server.requestLog == ["/first", "/high", "/normal", "/low"])
        }
    }

    @Test func perHostLimitCapsConcurrentRequests() async throws {
        var configuration = ImageDownloader.Configuration(timeout: .seconds(30))
        configuration.maximumConcurrentRequestsPerHost = 2
        try await withDownloader(configuration) { server, downloader in
            for i in 0..<5 { server.route("/\(i)", .ok(pngLikeData(count: 32))) }
            for i in 0..<5 { server.hold("/\(i)") }
            let tasks = (0..<5).map { i in Task { try await downloader.downloadData(with: server.url("/\(i)")) } }
            let host = try #require(ImageDownloader.hostKey(server.url("/")))
            #expect(await eventually { downloader.hostLimiter.load(host) == (2, 3) })
            #expect(await eventually { server.requestLog.count == 2 })
            for i in 0..<5 { server.release("/\(i)") }
            for task in tasks { _ = try await task.value }
            #expect(server.requestLog.count == 5)
        }
    }
}
