import Foundation
import Synchronization
import Testing
@testable import Alcedo

/// Many concurrent callers: work is done exactly once per stage, every caller hears back once.
@Suite("Pipeline stress")
struct PipelineStressTests {
    private static let urlCount = 50
    private static let processorCount = 3

    @Test func thousandRetrievesOverFiftyURLsAndThreeProcessors() async throws {
        try await withPipeline(maximumConcurrentRequestsPerHost: 64) { h in
            for index in 0..<Self.urlCount {
                h.server.route("/s\(index).jpg", .ok(TestImages.jpeg(width: 8, height: 8, seed: index)))
                h.server.hold("/s\(index).jpg")
            }
            let runs = Counter()
            let processors = (0..<Self.processorCount).map { InvertingCountingProcessor(name: "p\($0)", runs: runs) }
            let manager = h.manager
            let results = Collected<Result<RetrieveImageResult, AlcedoError>>()
            for call in 0..<1000 {
                let url = h.server.url("/s\(call % Self.urlCount).jpg")
                let processor = processors[(call / Self.urlCount) % Self.processorCount]
                manager.retrieveImage(with: url, options: [.processor(processor)]) { results.append($0) }
            }
            // Everyone has joined one of the 150 runs (and every run waits on its URL's download)
            // before the server answers: work cannot be repeated by a late caller.
            #expect(await eventually() { manager.pipelines.inFlightCount == Self.urlCount * Self.processorCount })
            #expect(await eventually() { h.server.requestLog.count == Self.urlCount })
            for index in 0..<Self.urlCount { h.server.release("/s\(index).jpg") }

            #expect(await eventually() { results.values.count == 1000 })
            // A late duplicate would come from work still in flight: wait until none is.
            #expect(await eventually() { manager.pipelines.inFlightCount == 0 })
            #expect(results.values.count == 1000)
            #expect(results.values.allSatisfy { (try? $0.get()) != nil })
            #expect(h.server.requestLog.count == Self.urlCount)
            #expect(runs.count == Self.urlCount * Self.processorCount)
            #expect(manager.pipelines.inFlightCount == 0)

            // A second wave is served from memory: no download, no processing.
            let again = try await manager.retrieveImage(with: h.server.url("/s3.jpg"), options: [.processor(processors[1])])
            #expect(again.cacheType == .memory)
            #expect(runs.count == Self.urlCount * Self.processorCount)
        }
    }

    @Test func asyncCallersWithoutHoldingStillShareWork() async throws {
        try await withPipeline(maximumConcurrentRequestsPerHost: 64) { h in
            for index in 0..<10 { h.server.route("/a\(index).jpg", .ok(TestImages.jpeg(width: 8, height: 8, seed: index))) }
            let runs = Counter()
            let processor = InvertingCountingProcessor(name: "async", runs: runs)
            let manager = h.manager
            let outcomes = try await withThrowingTaskGroup(of: CacheType.self) { group in
                for call in 0..<200 {
                    let url = h.server.url("/a\(call % 10).jpg")
                    group.addTask { try await manager.retrieveImage(with: url, options: [.processor(processor)]).cacheType }
                }
                var types: [CacheType] = []
                for try await type in group { types.append(type) }
                return types
            }
            #expect(outcomes.count == 200)
            // Callers that came after a run ended found its result in memory: never a second run.
            #expect(h.server.requestLog.count == 10)
            #expect(runs.count == 10)
        }
    }

    @Test func cancellationStorm() async throws {
        try await withPipeline(maximumConcurrentRequestsPerHost: 64) { h in
            for index in 0..<20 {
                h.server.route("/c\(index).jpg", .ok(TestImages.jpeg(width: 8, height: 8, seed: index)))
                h.server.hold("/c\(index).jpg")
            }
            let manager = h.manager
            let results = Mutex<[Int: Result<RetrieveImageResult, AlcedoError>]>([:])
            let duplicates = Counter()
            var tasks: [RetrieveImageTask?] = []
            for call in 0..<600 {
                let url = h.server.url("/c\(call % 20).jpg")
                let processor = DownsamplingImageProcessor(size: PixelSize(width: 4 + call % 3, height: 4))
                tasks.append(manager.retrieveImage(with: url, options: [.processor(processor)]) { result in
                    results.withLock { results in
                        if results[call] != nil { duplicates.increment() }
                        results[call] = result
                    }
                })
            }
            // Cancel every caller of the first ten URLs (their downloads must stop), and every
            // other caller of the rest, in no particular order.
            for call in (0..<600).shuffled() where call % 20 < 10 || call % 2 == 0 { tasks[call]?.cancel() }
            #expect(await eventually() { (0..<10).allSatisfy { h.downloader.networkCallerCount(for: h.server.url("/c\($0).jpg")) == 0 } })
            for index in 0..<20 { h.server.release("/c\(index).jpg") }
            #expect(await eventually() { results.withLock { $0.count } == 600 })
            // A duplicate callback would come from work still in flight: wait until none is.
            #expect(await eventually() { manager.pipelines.inFlightCount == 0 })
            #expect(duplicates.count == 0)
            let final = results.withLock { $0 }
            for call in 0..<600 {
                let cancelled = call % 20 < 10 || call % 2 == 0
                switch final[call] {
                case .success: #expect(!cancelled, "call \(call) was cancelled but succeeded")
                case .failure(let error): #expect(cancelled && error.isCancellation, "call \(call): \(error)")
                case nil: Issue.record("call \(call) never called back")
                }
            }
            #expect(manager.pipelines.inFlightCount == 0)
            // Fully cancelled URLs left nothing in the caches.
            #expect(h.cache.imageCachedType(forKey: h.server.url("/c0.jpg").cacheKey,
                                                  processorIdentifier: DownsamplingImageProcessor(size: PixelSize(width: 4, height: 4)).identifier) == .none)
        }
    }
}
