import Foundation
import Synchronization
import Testing
@testable import Alcedo

/// Kingfisher's `DownloadTask` shapes of the manager's callback form: `downloadTaskUpdated:`, which
/// tells the caller of the task of each alternative source tried (and lets it cancel it), and the
/// `DownloadTask?` a call typed so returns.
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

    @Test func aDownloadTaskContextGetsKingfishersTaskType() async throws {
        try await withPipeline { h in
            h.server.route("/typed.jpg", .ok(TestImages.jpeg()))
            let url = h.server.url("/typed.jpg")
            let done = Collected<Result<RetrieveImageResult, AlcedoError>>()
            let typed: DownloadTask? = h.manager.retrieveImage(with: url) { done.append($0) }
            let task = try #require(typed)
            #expect(task.url == url)
            var last: DownloadProgress?
            for await value in task.progress { last = value }
            // The stream ends with the retrieval.
            for _ in 0..<200 where done.count == 0 { try await Task.sleep(for: .milliseconds(10)) }
            let result = try #require(done.values.first)
            #expect((try? result.get()) != nil)
            #expect(last?.receivedBytes == TestImages.jpeg().count)
            // Without a `DownloadTask?` context, the call is Alcedo's form.
            let untyped = h.manager.retrieveImage(with: url) { _ in }
            #expect(type(of: untyped) == RetrieveImageTask?.self)
        }
    }

    @Test func eitherReturnedTaskCancelsTheRetrievalFromTheStart() async throws {
        try await withPipeline { h in
            h.server.route("/held.jpg", .ok(TestImages.jpeg()))
            h.server.hold("/held.jpg")
            defer { h.server.release("/held.jpg") }
            let url = h.server.url("/held.jpg")
            let updatedForm = Collected<Result<RetrieveImageResult, AlcedoError>>()
            let returned = h.manager.retrieveImage(with: url.convertToSource(), options: [.alternativeSources([])],
                                                   downloadTaskUpdated: { _ in }, completionHandler: { updatedForm.append($0) })
            let task = try #require(returned)
            #expect(task.isInitialized)
            task.cancel()
            let typedForm = Collected<Result<RetrieveImageResult, AlcedoError>>()
            let typed: DownloadTask? = h.manager.retrieveImage(with: url) { typedForm.append($0) }
            #expect(typed?.isInitialized == true)
            typed?.cancel()
            for done in [updatedForm, typedForm] {
                for _ in 0..<200 where done.count == 0 { try await Task.sleep(for: .milliseconds(10)) }
                guard case .failure(let error)? = done.values.first else {
                    Issue.record("expected a cancellation, got \(done.values)")
                    continue
                }
                #expect(error.isTaskCancelled)
                #expect(done.count == 1)
            }
        }
    }
}
