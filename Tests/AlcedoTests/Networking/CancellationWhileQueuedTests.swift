import Foundation
import Synchronization
import Testing
@testable import Alcedo

/// Cancellation of work that has not started: waiting for a per-host slot, waiting out a retry
/// back-off, waiting for a place in the decode pool. Each test cancels once the wait is in
/// progress, then checks at the point where the cancelled work would have shown itself.
@Suite("Cancellation while queued")
struct CancellationWhileQueuedTests {
    /// A retry strategy that retries after `delay` and counts how often it was asked.
    final class CountingRetry: RetryStrategy {
        let delay: Duration
        let maxRetries: Int
        let asked = Atomic<Int>(0)

        init(delay: Duration, maxRetries: Int = 5) {
            self.delay = delay
            self.maxRetries = maxRetries
        }

        func retry(context: RetryContext) async -> RetryDecision {
            asked.add(1, ordering: .sequentiallyConsistent)
            guard context.retriedCount < maxRetries else { return .stop }
            do {
                try await Task.sleep(for: delay)
            } catch {
                return .stop
            }
            return .retry(userInfo: nil)
        }
    }

    @Test("a request waiting for a per-host slot ends at once when cancelled, and is never sent")
    func cancelWhileWaitingForAHostSlot() async throws {
        try await withDownloader(.init(maximumConcurrentRequestsPerHost: 1, timeout: .seconds(30))) { server, downloader in
            let png = try samplePNG()
            for path in ["/first", "/queued", "/after"] { server.route(path, .ok(png, contentType: "image/png")) }
            server.hold("/first")
            let first = Task { try await downloader.downloadData(with: server.url("/first")) }
            #expect(await eventually { server.requestCount("/first") == 1 })
            let queued = Task { try await downloader.downloadData(with: server.url("/queued")) }
            let host = try #require(ImageDownloader.hostKey(server.url("/queued")))
            #expect(await eventually { downloader.hostLimiter.load(host).waiting == 1 })
            queued.cancel()
            let error = await #expect(throws: AlcedoError.self) { try await queued.value }
            #expect(error?.isCancellation == true)
            #expect(downloader.hostLimiter.load(host).waiting == 0, "the cancelled waiter left the queue")
            // The slot freed by /first goes to the next waiter: had /queued stayed, it would be sent before /after.
            let after = Task { try await downloader.downloadData(with: server.url("/after")) }
            #expect(await eventually { downloader.hostLimiter.load(host).waiting == 1 })
            server.release("/first")
            #expect(try await first.value.data == png)
            #expect(try await after.value.data == png)
            #expect(server.requestCount("/queued") == 0)
            #expect(server.requestLog.filter { $0.contains("/queued") }.isEmpty)
        }
    }

    @Test("cancelling during a retry back-off ends the download, and the retry never fires")
    func cancelDuringRetryBackOff() async throws {
        try await withDownloader { server, downloader in
            server.route("/down", .status(503))
            server.route("/probe", .status(503))
            let backOff = Duration.milliseconds(300)
            let strategy = CountingRetry(delay: backOff)
            let task = Task {
                try await downloader.downloadData(with: server.url("/down"), options: DownloadOptions(retryStrategy: strategy))
            }
            // The strategy was asked after the first attempt: the back-off is under way.
            #expect(await eventually { strategy.asked.load(ordering: .sequentiallyConsistent) == 1 })
            #expect(server.requestCount("/down") == 1)
            task.cancel()
            let error = await #expect(throws: AlcedoError.self) { try await task.value }
            #expect(error?.isCancellation == true)
            // A probe whose back-off of the same length starts later: once its retry has
            // arrived, the cancelled download's retry would have arrived too.
            let probe = CountingRetry(delay: backOff, maxRetries: 1)
            await #expect(throws: AlcedoError.self) {
                try await downloader.downloadData(with: server.url("/probe"), options: DownloadOptions(retryStrategy: probe))
            }
            #expect(server.requestCount("/probe") == 2)
            #expect(server.requestCount("/down") == 1, "the cancelled back-off still fired its retry")
            #expect(strategy.asked.load(ordering: .sequentiallyConsistent) == 1)
        }
    }

    @Test("a job waiting for the decode pool ends with .cancelled when cancelled, and never runs")
    func cancelWhileWaitingForTheDecodePool() async throws {
        let pool = BlockingWorkPool(width: 1)
        let gate = DispatchSemaphore(value: 0)
        let started = Atomic<Bool>(false)
        let ranCancelled = Atomic<Bool>(false)
        let blocker = Task {
            await pool.run(priority: .normal) { () -> Result<Int, AlcedoError> in
                started.store(true, ordering: .sequentiallyConsistent)
                gate.wait()
                return .success(1)
            }
        }
        // The blocker holds the pool's only place from its acquisition on (its work may wait
        // for a Dispatch worker; the place is what matters).
        #expect(await eventually { pool.load.running == 1 })
        let queued = Task {
            await pool.run(priority: .high) { () -> Result<Int, AlcedoError> in
                ranCancelled.store(true, ordering: .sequentiallyConsistent)
                return .success(2)
            }
        }
        #expect(await eventually { pool.load.waiting == 1 })
        queued.cancel()
        guard case .failure(let error) = await queued.value else {
            Issue.record("the cancelled job ran")
            gate.signal()
            return
        }
        #expect(error.isCancellation)
        #expect(pool.load == (running: 1, waiting: 0))
        gate.signal()
        #expect(try await blocker.value.get() == 1)
        #expect(started.load(ordering: .sequentiallyConsistent) == true)
        // The place the blocker frees would go to the cancelled job first: a job after it runs, the cancelled one never.
        #expect(try await pool.run(priority: .low) { () -> Result<Int, AlcedoError> in .success(3) }.get() == 3)
        let ran = ranCancelled.load(ordering: .sequentiallyConsistent)
        #expect(!ran)
        #expect(pool.load == (running: 0, waiting: 0))
    }
}
