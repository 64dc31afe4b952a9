import Foundation
import Testing
@testable import Alcedo

@Suite("ImagePrefetcher failures")
struct ImagePrefetcherErrorTests {
    @Test func eachFailedSourceComesWithItsError() async throws {
        try await withPipeline { h in
            h.server.route("/ok.jpg", .ok(TestImages.jpeg()))
            h.server.route("/gone.jpg", .status(404))
            h.server.route("/text.jpg", .ok(Data("hello".utf8), contentType: "text/plain"))
            let urls = [h.server.url("/ok.jpg"), h.server.url("/gone.jpg"), h.server.url("/text.jpg")]
            let progress = Collected<ImagePrefetcher.Result>()
            let completion = Collected<ImagePrefetcher.Result>()
            let prefetcher = ImagePrefetcher(urls: urls, manager: h.manager, progress: { progress.append($0) }) { result in
                completion.append(result)
            }
            let result = await prefetcher.prefetch()
            #expect(await eventually { completion.values.count == 1 })

            let reasons = Dictionary(uniqueKeysWithValues: result.failures.map { ($0.source.cacheKey, $0.error) })
            #expect(reasons.count == 2)
            guard case .responseError(.invalidHTTPStatusCode(let response))? = reasons[urls[1].cacheKey], response.statusCode == 404 else {
                Issue.record("404 reported as \(String(describing: reasons[urls[1].cacheKey]))")
                return
            }
            guard case .processorError(.processingFailed(_, .data))? = reasons[urls[2].cacheKey] else {
                Issue.record("text reported as \(String(describing: reasons[urls[2].cacheKey]))")
                return
            }
            #expect(result.failed.map(\.cacheKey).sorted() == [urls[1].cacheKey, urls[2].cacheKey].sorted())
            #expect(result.completed.map(\.cacheKey) == [urls[0].cacheKey])
            // Progress saw the errors as they came, the completion saw them all.
            #expect(progress.values.count == 3)
            #expect(progress.values.last?.failures.count == 2)
            #expect(completion.values.first?.failures.map(\.error.description).sorted() == result.failures.map(\.error.description).sorted())
        }
    }

    @Test func stoppedSourcesFailAsCancelled() async throws {
        try await withPipeline { h in
            h.server.route("/held.jpg", .ok(TestImages.jpeg()))
            h.server.hold("/held.jpg")
            let prefetcher = ImagePrefetcher(urls: [h.server.url("/held.jpg")], manager: h.manager, completion: nil)
            prefetcher.start()
            #expect(await eventually { h.server.requestCount("/held.jpg") == 1 })
            prefetcher.stop()
            let result = await prefetcher.prefetch()
            h.server.release("/held.jpg")
            #expect(result.failures.count == 1)
            #expect(result.failures.first?.error.isCancellation == true)
        }
    }
}
