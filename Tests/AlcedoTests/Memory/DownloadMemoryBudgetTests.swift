@testable import Alcedo
import Foundation
import Synchronization
import Testing

/// Downloads under ``ImageDownloader/Configuration/memoryBudget``: each body is counted while
/// it arrives, so many large downloads at once wait for memory instead of exceeding it.
@Suite("MemoryBudget: download bodies counted while they arrive")
struct DownloadMemoryBudgetTests {
    func configuration(_ budget: MemoryBudget, timeout: Duration = .seconds(60)) -> ImageDownloader.Configuration {
        ImageDownloader.Configuration(timeout: timeout, memoryBudget: budget)
    }

    @Test func manyLargeDownloadsWaitForMemoryInsteadOfExceedingIt() async throws {
        // Six 1 MiB bodies, each sent in 64 KiB pieces 10 ms apart, into a 3 MiB budget.
        let budget = MemoryBudget(capacity: 3 << 20)
        try await withDownloader(configuration(budget)) { server, downloader in
            for index in 0..<6 {
                server.route("/big\(index).png", TestHTTPServer.Response.ok(pngLikeData(count: 1 << 20)).chunked(64 << 10, every: .milliseconds(10)))
            }
            let peak = Mutex(0)
            let done = Atomic<Bool>(false)
            let watcher = Task {
                while !done.load(ordering: .relaxed) {
                    let reserved = budget.snapshot.reserved
                    peak.withLock { $0 = max($0, reserved) }
                    try? await Task.sleep(for: .milliseconds(2))
                }
            }
            let sizes = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<6 {
                    group.addTask { try await downloader.downloadData(with: server.url("/big\(index).png")).data.count }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            done.store(true, ordering: .relaxed)
            await watcher.value
            #expect(sizes == Array(repeating: 1 << 20, count: 6))
            let after = budget.snapshot
            // At most three bodies were held at once; the others waited for memory.
            #expect(peak.withLock { $0 } <= 3 << 20)
            #expect(peak.withLock { $0 } >= 1 << 20)
            #expect(after.waitedForMemoryTotal >= 1)
            #expect(after.reserved == 0 && after.waiting == 0 && after.grantedTotal == 6)
            // Downloads hold memory, not a place under the count of jobs.
            #expect(after.running == 0)
        }
    }

    @Test func aBodyWithoutLengthIsCountedAsItGrows() async throws {
        let budget = MemoryBudget(capacity: 64 << 20)
        try await withDownloader(configuration(budget, timeout: .seconds(300))) { server, downloader in
            var response = TestHTTPServer.Response.ok(pngLikeData(count: 4 << 20)).chunked(256 << 10)
            response.contentLength = .none
            response.stallAfter = 2 << 20
            server.route("/stalls.png", response)
            let download = Task { try await downloader.downloadData(with: server.url("/stalls.png")) }
            // 2 MiB arrived and wait for the rest: the reservation has grown past them.
            #expect(await eventually { budget.snapshot.reserved >= 2 << 20 })
            #expect(budget.snapshot.running == 0)
            // The stalled download is cancelled; its memory is given back.
            download.cancel()
            await #expect(throws: AlcedoError.self) { try await download.value }
            #expect(await eventually { budget.snapshot.reserved == 0 })
        }
    }

    @Test func aBodyThatCouldNeverFitIsRefusedBeforeItIsRead() async throws {
        let budget = MemoryBudget(capacity: 1 << 20)
        try await withDownloader(configuration(budget)) { server, downloader in
            server.route("/huge.png", .ok(pngLikeData(count: 2 << 20)))
            let error = await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: server.url("/huge.png")) }
            guard case .neverFits(let what, let bytes, _, _) = error?.memoryBudgetReason else {
                Issue.record("expected a never-fits refusal, got \(String(describing: error))")
                return
            }
            #expect(bytes == 2 << 20 && what.contains("/huge.png"))
            #expect(budget.snapshot.reserved == 0 && budget.snapshot.refusedTotal == 1)
        }
    }

    @Test func memoryOnlyReservationsPassJobsThatWaitForAPlace() async throws {
        let budget = MemoryBudget(capacity: 100, maximumConcurrent: 1)
        let job = try await budget.reserve(10)
        // A second job waits for the one place…
        let waitingJob = Task { try await budget.reserve(10) }
        try await waitUntil { budget.snapshot.waiting == 1 }
        // …and memory alone is granted behind it: a download does not wait for a processing slot.
        let body = try await budget.reserveMemory(30, for: "a body")
        #expect(budget.snapshot.reserved == 40 && budget.snapshot.running == 1)
        // Growing never waits, even past the budget.
        body.grow(to: 95)
        #expect(budget.snapshot.reserved == 105)
        // Now memory is short: the next memory-only reservation waits.
        let waitingBody = Task { try await budget.reserveMemory(20, for: "another body") }
        try await waitUntil { budget.snapshot.waitingForMemory >= 1 }
        body.release()
        let second = try await waitingBody.value
        job.release()
        let third = try await waitingJob.value
        #expect(budget.snapshot.reserved == 30 && budget.snapshot.running == 1)
        second.release()
        third.release()
        #expect(budget.snapshot.reserved == 0 && budget.snapshot.running == 0)
    }

    func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(300)
        // Checked once more after the deadline (a stalled machine must not fail a condition met meanwhile).
        while true {
            if condition() { return }
            if ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("condition not met within 300 s")
    }
}
