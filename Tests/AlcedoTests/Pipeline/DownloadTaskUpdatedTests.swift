import Foundation
import Synchronization
import Testing
@testable import Alcedo

/// Kingfisher's `retrieveImage(with:options:downloadTaskUpdated:completionHandler:)`: the caller is
/// told of the task of each alternative source tried, and can cancel it.
@Suite("ImageManager downloadTaskUpdated")
struct DownloadTaskUpdatedTests {
    /// Calls the callback form and waits for its completion.
    private static func retrieve(_ manager: ImageManager, _ source: Source, alternatives: [Source],
                                 updated: @escaping @Sendable (DownloadTask?) -> Void) async -> Result<RetrieveImageResult, AlcedoError> {
        await withCheckedContinuation { continuation in
            manager.retrieveImage(with: source, options: [.alternativeSources(alternatives)], downloadTaskUpdated: updated) {
                continuation.resume(returning: $0)
            }
        }
    }

    @Test func eachAlternativeSourceTriedIsReportedBeforeTheCompletion() async throws {
        try await withPipeline { h in
            h.server.route("/gone.jpg", .status(404))
            h.server.route("/mirror.jpg", .ok(TestImages.jpeg()))
            let reported = Collected<String>()
            let provider = Base64ImageDataProvider(base64String: "!!!", cacheKey: "bad")
            let result = await Self.retrieve(
                h.manager, h.server.url("/gone.jpg").convertToSource(),
                alternatives: [.provider(provider), h.server.url("/mirror.jpg").convertToSource()]
            ) { task in
                reported.append(task?.url.path ?? "provider")
            }
            let found = try result.get()
            #expect(found.source.url?.path == "/mirror.jpg")
            // The first source is the returned task's; each alternative tried is reported once.
            #expect(reported.values == ["provider", "/mirror.jpg"])
        }
    }

    @Test func cancellingAReportedTaskEndsTheRetrieval() async throws {
        try await withPipeline { h in
            h.server.route("/gone.jpg", .status(404))
            h.server.route("/slow.jpg", .ok(TestImages.jpeg()))
            h.server.route("/last.jpg", .ok(TestImages.jpeg()))
            h.server.hold("/slow.jpg")
            defer { h.server.release("/slow.jpg") }
            let reported = Collected<DownloadTask>()
            let result = await Self.retrieve(
                h.manager, h.server.url("/gone.jpg").convertToSource(),
                alternatives: [h.server.url("/slow.jpg").convertToSource(), h.server.url("/last.jpg").convertToSource()]
            ) { task in
                guard let task else { return }
                reported.append(task)
                task.cancel()
            }
            guard case .failure(let error) = result else {
                Issue.record("expected a cancellation, got \(result)")
                return
            }
            #expect(error.isTaskCancelled)
            #expect(reported.values.map(\.url.path) == ["/slow.jpg"])
            #expect(reported.values.first?.isCancelled == true)
            #expect(h.server.requestCount("/last.jpg") == 0, "no source is tried after a cancelled one")
        }
    }

    @Test func theReturnedTaskCanCancelFromTheStart() async throws {
        try await withPipeline { h in
            h.server.route("/held.jpg", .ok(TestImages.jpeg()))
            h.server.hold("/held.jpg")
            defer { h.server.release("/held.jpg") }
            let done = Collected<Result<RetrieveImageResult, AlcedoError>>()
            let returned = h.manager.retrieveImage(
                with: h.server.url("/held.jpg").convertToSource(), options: [.alternativeSources([])],
                downloadTaskUpdated: { _ in }, completionHandler: { done.append($0) })
            let task = try #require(returned)
            #expect(task.isInitialized)
            task.cancel()
            for _ in 0..<200 where done.count == 0 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(done.count == 1)
            #expect(done.values.first.map { (try? $0.get()) == nil } == true)
        }
    }
}
