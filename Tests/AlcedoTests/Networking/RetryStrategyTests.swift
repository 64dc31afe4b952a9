import Foundation
import Testing
@testable import Alcedo

@Suite("RetryStrategy")
struct RetryStrategyTests {
    private static let response = DownloadResponse(url: URL(string: "http://h/x")!, originalURL: URL(string: "http://h/x")!,
                                                   statusCode: 500, headers: [:], cacheInfo: HTTPCacheInfo())

    private static func statusError(_ code: Int, headers: HTTPHeaderFields = [:]) -> AlcedoError {
        var response = Self.response
        response.statusCode = code
        response.headers = headers
        return .responseError(reason: .invalidHTTPStatusCode(response: response))
    }

    private static func context(_ error: AlcedoError, retried: Int = 0) -> RetryContext {
        RetryContext(url: URL(string: "http://h/x")!, error: error, retriedCount: retried)
    }

    @Test func intervals() async {
        let fixed = DelayRetryStrategy(maxRetryCount: 3, retryInterval: .seconds(2))
        #expect(fixed.delay(for: Self.context(Self.statusError(500), retried: 2)) == .seconds(2))
        #expect(fixed.delay(for: Self.context(Self.statusError(500), retried: 3)) == nil)
        #expect(await fixed.retry(context: Self.context(Self.statusError(500), retried: 3)).isRetry == false)
        let growing = DelayRetryStrategy(maxRetryCount: 5, retryInterval: .accumulated(0.5))
        #expect(growing.delay(for: Self.context(Self.statusError(503), retried: 2)) == .milliseconds(1500))
        let custom = DelayRetryStrategy(maxRetryCount: 5, retryInterval: .custom(block: { Double($0) * 0.1 }))
        #expect(custom.delay(for: Self.context(Self.statusError(502), retried: 3)) == .milliseconds(300))
    }

    @Test("the strategy waits its delay before it answers retry")
    func retryWaitsTheDelay() async {
        let strategy = DelayRetryStrategy(maxRetryCount: 3, retryInterval: .seconds(0.2))
        let clock = ContinuousClock()
        let start = clock.now
        let decision = await strategy.retry(context: Self.context(Self.statusError(500)))
        #expect(decision.isRetry)
        #expect(clock.now - start >= .milliseconds(200))
    }

    @Test func onlyRetriableErrorsAreRetried() async {
        let strategy = DelayRetryStrategy(maxRetryCount: 3, retryInterval: .seconds(0))
        let url = URL(string: "http://h/x")!
        let retriable: [AlcedoError] = [
            Self.statusError(500), Self.statusError(503), Self.statusError(429), Self.statusError(408),
            .networkError(reason: .timedOut(url, limit: .seconds(1))),
            .networkError(reason: .connectTimedOut(url, limit: .seconds(1))),
            .networkError(reason: .networkFailure(url, underlying: CancellationError())),
            .responseError(reason: .lengthMismatch(url, expected: 10, received: 5)),
        ]
        let final: [AlcedoError] = [
            .requestError(reason: .cancelled), Self.statusError(404), Self.statusError(401),
            .responseError(reason: .lengthMismatch(url, expected: 5, received: 10)),
            .responseError(reason: .bodyTooLarge(url, limit: 1, received: 2)),
            .processorError(reason: .processingFailed(processor: DefaultImageProcessor.default, item: .data(Data([1])))),
            .requestError(reason: .redirectLoop(url)), .requestError(reason: .invalidURL("x")),
        ]
        for error in retriable {
            #expect(error.isRetriable, "\(error)")
            #expect(strategy.delay(for: Self.context(error)) == .zero)
            #expect(await strategy.retry(context: Self.context(error)).isRetry)
        }
        for error in final {
            #expect(!error.isRetriable, "\(error)")
            #expect(strategy.delay(for: Self.context(error)) == nil)
            #expect(await strategy.retry(context: Self.context(error)).isRetry == false)
        }
    }

    @Test func retryAfterIsHonouredWithinTheCap() async {
        let strategy = DelayRetryStrategy(maxRetryCount: 3, retryInterval: .seconds(1), maxRetryAfter: .seconds(30))
        let seconds = Self.statusError(429, headers: ["Retry-After": "7"])
        #expect(strategy.delay(for: Self.context(seconds)) == .seconds(7))
        let tooLong = Self.statusError(503, headers: ["Retry-After": "120"])
        #expect(strategy.delay(for: Self.context(tooLong)) == nil)
        var dated = Self.response
        dated.statusCode = 429
        dated.headers = ["Retry-After": HTTPDate.string(from: dated.cacheInfo.responseDate.addingTimeInterval(12))]
        let date = AlcedoError.responseError(reason: .invalidHTTPStatusCode(response: dated))
        guard let delay = strategy.delay(for: Self.context(date)) else {
            Issue.record("expected a retry")
            return
        }
        #expect(delay > .seconds(10) && delay <= .seconds(12))
    }

    @Test func serverErrorIsRetriedUntilSuccess() async throws {
        try await withDownloader { server, downloader in
            server.route("/flaky.png", sequence: [.status(500), .status(500), .ok(pngLikeData(count: 64))])
            let options = DownloadOptions(retryStrategy: DelayRetryStrategy(maxRetryCount: 5, retryInterval: .seconds(0.01)))
            let result = try await downloader.downloadData(with: server.url("/flaky.png"), options: options)
            #expect(result.data.count == 64)
            #expect(server.requestCount("/flaky.png") == 3)
        }
    }

    @Test func tooManyRequestsWithRetryAfterIsRetried() async throws {
        try await withDownloader { server, downloader in
            server.route("/busy.png", sequence: [.status(429, headers: [("Retry-After", "0")]), .ok(pngLikeData(count: 64))])
            let options = DownloadOptions(retryStrategy: DelayRetryStrategy(maxRetryCount: 2, retryInterval: .seconds(30)))
            // Retry-After: 0 replaces the 30 s interval.
            _ = try await downloader.downloadData(with: server.url("/busy.png"), options: options)
            #expect(server.requestCount("/busy.png") == 2)
        }
    }

    @Test func notFoundIsNotRetriedAndRetriesStopAtTheLimit() async throws {
        try await withDownloader { server, downloader in
            server.route("/missing", .status(404))
            server.route("/broken", .status(502))
            let options = DownloadOptions(retryStrategy: DelayRetryStrategy(maxRetryCount: 2, retryInterval: .seconds(0)))
            await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: server.url("/missing"), options: options) }
            #expect(server.requestCount("/missing") == 1)
            let error = await #expect(throws: AlcedoError.self) {
                try await downloader.downloadData(with: server.url("/broken"), options: options)
            }
            guard case .responseError(.invalidHTTPStatusCode(let response)) = error, response.statusCode == 502 else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            #expect(server.requestCount("/broken") == 3)
        }
    }

    @Test func cancellationStopsAPendingRetry() async throws {
        try await withDownloader { server, downloader in
            server.route("/down", .status(503))
            let options = DownloadOptions(retryStrategy: DelayRetryStrategy(maxRetryCount: 5, retryInterval: .seconds(30)))
            let task = Task { try await downloader.downloadData(with: server.url("/down"), options: options) }
            #expect(await eventually { server.requestCount("/down") == 1 })
            task.cancel()
            let error = await #expect(throws: AlcedoError.self) { try await task.value }
            #expect(error?.isCancellation == true)
            #expect(server.requestCount("/down") == 1)
        }
    }
}
