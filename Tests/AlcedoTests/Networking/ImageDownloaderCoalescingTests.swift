import Foundation
import Testing
@testable import Alcedo

@Suite("ImageDownloader coalescing and cancellation")
struct ImageDownloaderCoalescingTests {
    @Test func hundredCallersOfOneURLMakeOneRequest() async throws {
        try await withDownloader { server, downloader in
            let png = try samplePNG()
            server.route("/shared.png", .ok(png))
            server.hold("/shared.png")
            let url = server.url("/shared.png")
            let results = try await withThrowingTaskGroup(of: Data.self) { group in
                for _ in 0..<100 {
                    group.addTask { try await downloader.downloadData(with: url).data }
                }
                // Release only once every caller has joined the request in flight.
                #expect(await eventually { downloader.networkCallerCount(for: url) == 100 })
                server.release("/shared.png")
                var all: [Data] = []
                for try await data in group { all.append(data) }
                return all
            }
            #expect(results.count == 100)
            #expect(results.allSatisfy { $0 == png })
            #expect(server.requestCount("/shared.png") == 1)
        }
    }

    @Test func cancellingOneCallerLeavesTheOthers() async throws {
        try await withDownloader { server, downloader in
            server.route("/a.png", .ok(pngLikeData(count: 1000)))
            server.hold("/a.png")
            let url = server.url("/a.png")
            let tasks = (0..<3).map { _ in Task { try await downloader.downloadData(with: url) } }
            #expect(await eventually { downloader.networkCallerCount(for: url) == 3 })
            tasks[0].cancel()
            let error = await #expect(throws: AlcedoError.self) { try await tasks[0].value }
            #expect(error?.isCancellation == true)
            #expect(downloader.networkCallerCount(for: url) == 2)
            server.release("/a.png")
            let second = try await tasks[1].value
            let third = try await tasks[2].value
            #expect(second.data.count == 1000 && third.data.count == 1000)
            #expect(server.requestCount("/a.png") == 1)
            #expect(server.abortedCount("/a.png") == 0)
        }
    }

    @Test func cancellingEveryCallerCancelsTheRequest() async throws {
        try await withDownloader { server, downloader in
            var response = TestHTTPServer.Response.ok(pngLikeData(count: 10_000))
            response.stallAfter = 100
            server.route("/a.png", response)
            let url = server.url("/a.png")
            let tasks = (0..<3).map { _ in Task { try await downloader.downloadData(with: url) } }
            #expect(await eventually { downloader.networkCallerCount(for: url) == 3 && server.requestCount("/a.png") == 1 })
            for task in tasks { task.cancel() }
            for task in tasks {
                let error = await #expect(throws: AlcedoError.self) { try await task.value }
                #expect(error?.isCancellation == true)
            }
            // The connection is closed: the server sees its response cut off.
            #expect(await eventually { server.abortedCount("/a.png") == 1 })
            #expect(downloader.dataFetches.inFlightCount == 0)
        }
    }

    @Test func downloadTaskCancelRemovesOnlyThatCaller() async throws {
        try await withDownloader { server, downloader in
            server.route("/a.png", .ok(pngLikeData(count: 500)))
            server.hold("/a.png")
            let url = server.url("/a.png")
            let outcomes = Collected<String>()
            let first = downloader.downloadData(with: url) { result in
                outcomes.append((try? result.get()) == nil ? "first failed" : "first ok")
            }
            let second = downloader.downloadData(with: url) { result in
                outcomes.append((try? result.get()) == nil ? "second failed" : "second ok")
            }
            #expect(second.url == url)
            first.cancel()
            first.cancel()
            #expect(first.isCancelled)
            #expect(outcomes.values == ["first failed"])
            server.release("/a.png")
            #expect(await eventually { outcomes.values.count == 2 })
            #expect(outcomes.values == ["first failed", "second ok"])
        }
    }

    @Test func cancelURLAndCancelAll() async throws {
        try await withDownloader { server, downloader in
            for path in ["/a.png", "/b.png", "/c.png"] {
                server.route(path, .ok(pngLikeData(count: 100)))
                server.hold(path)
            }
            let failures = Collected<String>()
            for path in ["/a.png", "/b.png", "/c.png"] {
                downloader.downloadData(with: server.url(path)) { result in
                    if case .failure(let error) = result, error.isCancellation { failures.append(path) }
                }
            }
            #expect(await eventually { server.requestLog.count == 3 })
            downloader.cancel(url: server.url("/a.png"))
            #expect(failures.values == ["/a.png"])
            downloader.cancelAll()
            #expect(Set(failures.values) == ["/a.png", "/b.png", "/c.png"])
            #expect(await eventually { server.abortedCount("/a.png") + server.abortedCount("/b.png") + server.abortedCount("/c.png") == 3 })
        }
    }

    @Test func alreadyCancelledTaskDoesNotStartARequest() async throws {
        try await withDownloader { server, downloader in
            server.route("/a.png", .ok(pngLikeData(count: 100)))
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await downloader.downloadData(with: server.url("/a.png"))
            }
            let error = await #expect(throws: AlcedoError.self) { try await task.value }
            #expect(error?.isCancellation == true)
            #expect(server.requestCount("/a.png") == 0)
        }
    }

    @Test func aNewRequestStartsAfterTheFirstCompletes() async throws {
        try await withDownloader { server, downloader in
            server.route("/a.png", .ok(pngLikeData(count: 100)))
            _ = try await downloader.downloadData(with: server.url("/a.png"))
            _ = try await downloader.downloadData(with: server.url("/a.png"))
            #expect(server.requestCount("/a.png") == 2)
        }
    }
}
