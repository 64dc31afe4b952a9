import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Runs CPU-heavy synchronous work (decoding, processing) on Dispatch threads, at most one
/// job per core at a time, so the cooperative thread pool is never blocked by a long C call.
final class BlockingWorkPool: Sendable {
    /// The pool shared by every downloader.
    static let shared = BlockingWorkPool(width: ProcessInfo.processInfo.activeProcessorCount)

    private let limiter: PriorityLimiter
    private let queue = DispatchQueue(label: "alcedo.blocking-work", qos: .userInitiated, attributes: .concurrent)

    init(width: Int) {
        limiter = PriorityLimiter(limit: width)
    }

    /// Jobs running and jobs waiting for a place.
    var load: (running: Int, waiting: Int) { limiter.load("work") }

    /// Runs `work` on a pool thread when a place is free; waiting ends early with
    /// `.cancelled` when the task is cancelled, but started work runs to its end.
    func run<T: Sendable>(priority: DownloadPriority,
                          _ work: @escaping @Sendable () -> Result<T, AlcedoError>) async -> Result<T, AlcedoError> {
        do {
            try await limiter.acquire("work", ticket: PriorityTicket(priority: priority))
        } catch {
            return .failure(.requestError(reason: .cancelled))
        }
        defer { limiter.release("work") }
        return await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: work()) }
        }
    }
}
