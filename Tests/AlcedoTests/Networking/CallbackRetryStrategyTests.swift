import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Alcedo

/// A custom strategy written in Kingfisher's callback shape (`retry(context:retryHandler:)`),
/// as a Kingfisher app writes one: it waits on a dispatch queue, then calls the handler.
private struct QueueRetryStrategy: RetryStrategy {
    let maxRetryCount: Int
    let seen: Collected<Int>

    func retry(context: RetryContext, retryHandler: @escaping @Sendable (RetryDecision) -> Void) {
        seen.append(context.retriedCount)
        guard context.retriedCount < maxRetryCount else {
            retryHandler(.stop)
            return
        }
        guard case KingfisherError.responseError = context.error else {
            retryHandler(.stop)
            return
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) {
            retryHandler(.retry(userInfo: nil))
            retryHandler(.stop)  // a second call is ignored
        }
    }
}

@Suite("RetryStrategy in Kingfisher's callback shape")
struct CallbackRetryStrategyTests {
    @Test("a callback strategy retries through the pipeline and its first decision counts")
    func retriesThroughThePipeline() async throws {
        try await withPipeline { h in
            h.server.route("/cb.jpg", sequence: [.status(503), .status(500), .ok(TestImages.jpeg())])
            let seen = Collected<Int>()
            let result = try await h.manager.retrieveImage(
                with: h.server.url("/cb.jpg"), options: [.retryStrategy(QueueRetryStrategy(maxRetryCount: 5, seen: seen))])
            #expect(result.image.pixelSize.width > 0)
            #expect(h.server.requestCount("/cb.jpg") == 3)
            #expect(seen.values == [0, 1])
        }
    }

    @Test("a callback strategy that stops gives the error")
    func stopsWithTheError() async throws {
        try await withPipeline { h in
            h.server.route("/cb-stop.jpg", .status(503))
            let seen = Collected<Int>()
            await #expect(throws: AlcedoError.self) {
                _ = try await h.manager.retrieveImage(
                    with: h.server.url("/cb-stop.jpg"), options: [.retryStrategy(QueueRetryStrategy(maxRetryCount: 1, seen: seen))])
            }
            #expect(h.server.requestCount("/cb-stop.jpg") == 2)
            #expect(seen.values == [0, 1])
        }
    }

    @Test("Alcedo's async strategies answer the callback form too, and the context names its source")
    func asyncStrategiesAnswerTheCallbackForm() async {
        let url = URL(string: "http://h/x")!
        let context = RetryContext(url: url, error: .networkError(reason: .timedOut(url, limit: .seconds(1))), retriedCount: 0)
        let decision = Mutex<RetryDecision?>(nil)
        DelayRetryStrategy(maxRetryCount: 2, retryInterval: .seconds(0.5)).retry(context: context) { value in
            decision.withLock { $0 = value }
        }
        #expect(await eventually { decision.withLock { $0 } != nil })
        #expect(decision.withLock { $0 }?.isRetry == true)
        #expect(context.source.url == url)
    }
}
