import Foundation
import Testing
@testable import Alcedo

/// Kingfisher's per-downloader settings, changed on a live downloader.
@Suite("Downloader settings")
struct DownloaderSettingsTests {
    @Test func downloadTimeoutAppliesToNewRequests() async throws {
        try await withDownloader { server, downloader in
            server.route("/slow.jpg", TestHTTPServer.Response.ok(TestImages.jpeg()).delayed(by: .seconds(2)))
            #expect(downloader.downloadTimeout == 30)
            downloader.downloadTimeout = 0.2
            #expect(downloader.configuration.timeout == .milliseconds(200))
            do throws(AlcedoError) {
                _ = try await downloader.downloadData(with: server.url("/slow.jpg"))
                Issue.record("a 2 s response should time out under a 0.2 s download timeout")
            } catch {
                guard case .responseError(.URLSessionError(NetworkErrorReason.timedOut(_, let limit))) = error else {
                    Issue.record("unexpected \(String(reflecting: error))")
                    return
                }
                #expect(limit == .milliseconds(200))
            }
            downloader.downloadTimeout = 30
            let data = try await downloader.downloadData(with: server.url("/slow.jpg"))
            #expect(data.data == TestImages.jpeg())
        }
    }

    @Test func perHostLimitChangesWhileRequestsWait() async throws {
        try await withDownloader(.init(maximumConcurrentRequestsPerHost: 1, timeout: .seconds(30))) { server, downloader in
            for index in 0..<3 {
                server.route("/\(index).jpg", .ok(TestImages.jpeg(seed: index)))
                server.hold("/\(index).jpg")
            }
            let tasks = (0..<3).map { index in
                Task { try await downloader.downloadData(with: server.url("/\(index).jpg")) }
            }
            #expect(await eventually { server.requestLog.count == 1 })
            let load = downloader.hostLimiter.load("http://127.0.0.1:\(server.port)")
            #expect(load.running == 1)
            #expect(await eventually { downloader.hostLimiter.load("http://127.0.0.1:\(server.port)").waiting == 2 })
            // Raising the limit lets the waiting requests go at once, before the first ends.
            downloader.maximumConcurrentRequestsPerHost = 3
            #expect(await eventually { server.requestLog.count == 3 })
            for index in 0..<3 { server.release("/\(index).jpg") }
            for task in tasks { _ = try await task.value }
            #expect(downloader.configuration.maximumConcurrentRequestsPerHost == 3)
        }
    }

    @Test func settingsAreSafeToChangeFromManyTasks() async throws {
        try await withDownloader { server, downloader in
            server.route("/a.jpg", .ok(TestImages.jpeg()))
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<20 {
                    group.addTask { downloader.downloadTimeout = Double(10 + index % 5) }
                    group.addTask { downloader.maximumBodySize = 1 << 20 }
                    group.addTask { _ = try? await downloader.downloadData(with: server.url("/a.jpg")) }
                }
            }
            // Both changes survive: neither read-modify-write lost the other's.
            #expect((10...14).contains(downloader.downloadTimeout))
            #expect(downloader.maximumBodySize == 1 << 20)
        }
    }

    @Test func connectTimeoutAndHeadersReachTheBuiltInLoader() async throws {
        try await withDownloader { server, downloader in
            server.route("/h.jpg", .ok(TestImages.jpeg()))
            downloader.connectTimeout = 3
            #expect(downloader.configuration.connectTimeout == .seconds(3))
            let loader = try #require(downloader.loader as? HTTPImageLoader)
            #expect(loader.configuration.connectTimeout == .seconds(3))
            downloader.defaultHeaders["X-Client"] = "alcedo-tests"
            _ = try await downloader.downloadData(with: server.url("/h.jpg"))
            #expect(server.requests("/h.jpg").first?.headers["X-Client"] == ["alcedo-tests"])
        }
    }
}
