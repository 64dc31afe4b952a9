#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// Turns the body of one download, chunk by chunk, into previews of a progressive JPEG for
/// one caller (``AlcedoOptionsInfoItem/progressiveJPEG(_:)``).
///
/// ``receive(_:)`` is called with each progress report, in arrival order, on the thread that
/// reads the body: it only queues the new bytes (no copy of the body so far) and, when no
/// worker runs, starts one on the ``BlockingWorkPool``. The worker feeds the queued bytes to
/// a ``ProgressiveJPEGScanner`` and renders a preview when a scan completes, one step per
/// pool job: at most one preview decode is in flight. ``close()`` stops it: no decode starts
/// and nothing is delivered after it (a decode already running is discarded).
final class ProgressivePreviewer: Sendable {
    private struct State {
        var pending: [Data] = []
        /// The offset in the body the next chunk must start at.
        var nextOffset = 0
        var running = false
        var closed = false
        /// The body cannot give previews (not a progressive JPEG, a decode failed, chunks
        /// missing, a retry restarted it). A caller that joins a download under way is given
        /// the body so far first (see ``RequestCoalescer``), so it starts at offset 0 too.
        var stopped = false
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// What only the worker touches (one worker at a time; the lock is never contended).
    private struct Work {
        var scanner: ProgressiveJPEGScanner?
        var lastRenderedScan = 0
        var lastPreview: ContinuousClock.Instant?
    }

    private enum Step {
        case preview(AlcedoImage)
        case idle
        case stop
    }

    private let state = Mutex(State())
    private let work = Mutex(Work())
    private let counts = Mutex((rendered: 0, delivered: 0, rendering: 0, mostRendering: 0))
    private let settings: ImageProgressive
    private let decodingOptions: DecodingOptions
    private let processor: (any ImageProcessor)?
    private let modifier: (any ImageModifier)?
    private let priority: DownloadPriority
    private let deliver: @Sendable (AlcedoImage) -> Void
    private let now: @Sendable () -> ContinuousClock.Instant

    /// - Parameters:
    ///   - settings: the request's ``ImageProgressive``.
    ///   - decodingOptions: what the final decode uses (target size, orientation, colour, limits).
    ///   - processor: run on each preview (`nil`: none).
    ///   - modifier: the request's image modifier, run last.
    ///   - priority: the place of the worker's jobs on the pool.
    ///   - now: the clock ``ImageProgressive/scanInterval`` is measured on.
    ///   - deliver: called with each preview, in order, from a pool thread.
    init(settings: ImageProgressive, decodingOptions: DecodingOptions, processor: (any ImageProcessor)?,
         modifier: (any ImageModifier)?, priority: DownloadPriority,
         now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now },
         deliver: @escaping @Sendable (AlcedoImage) -> Void) {
        self.settings = settings
        self.decodingOptions = decodingOptions
        self.processor = processor
        self.modifier = modifier
        self.priority = priority
        self.now = now
        self.deliver = deliver
    }

    /// Previews rendered (decoded) and delivered so far.
    var renderedCount: Int { counts.withLock { $0.rendered } }
    var deliveredCount: Int { counts.withLock { $0.delivered } }
    /// The most preview decodes that were ever in flight at once (1 by construction).
    var mostConcurrentRenders: Int { counts.withLock { $0.mostRendering } }

    /// Takes the bytes of one progress report (its ``DownloadProgress/chunk``).
    func receive(_ progress: DownloadProgress) {
        guard let chunk = progress.chunk, !chunk.isEmpty else { return }
        let offset = progress.receivedBytes - chunk.count
        let starts = state.withLock { state -> Bool in
            guard !state.closed, !state.stopped else { return false }
            guard offset == state.nextOffset else {
                state.stopped = true
                state.pending = []
                return false
            }
            state.nextOffset += chunk.count
            state.pending.append(chunk)
            guard !state.running else { return false }
            state.running = true
            return true
        }
        if starts { launch() }
    }

    /// Stops previewing: nothing more is decoded or delivered.
    func close() {
        state.withLock { state in
            state.closed = true
            state.pending = []
        }
    }

    /// Waits until no worker runs (for tests: every byte received so far has been handled).
    func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                if state.running {
                    state.idleWaiters.append(continuation)
                    return false
                }
                return true
            }
            if idle { continuation.resume() }
        }
    }

    private func launch() {
        Task { [self] in
            while true {
                let step = await BlockingWorkPool.shared.run(priority: priority) { () -> Result<Step, AlcedoError> in
                    .success(self.step())
                }
                let more: Bool
                switch step {
                case .success(.preview(let image)):
                    if state.withLock({ !$0.closed }) {
                        counts.withLock { $0.delivered += 1 }
                        deliver(image)
                    }
                    more = true
                case .success(.idle):
                    more = false
                case .success(.stop), .failure:
                    state.withLock { state in
                        state.stopped = true
                        state.pending = []
                    }
                    work.withLock { $0.scanner = nil }
                    more = false
                }
                // Stop, or go on when bytes are waiting (or the last step stopped at a scan).
                let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>]? in
                    if !state.closed && !state.stopped && (more || !state.pending.isEmpty) { return nil }
                    state.running = false
                    defer { state.idleWaiters = [] }
                    return state.idleWaiters
                }
                guard let waiters else { continue }
                for waiter in waiters { waiter.resume() }
                if state.withLock({ $0.closed }) { work.withLock { $0.scanner = nil } }
                return
            }
        }
    }

    /// One job: feeds the queued bytes and advances to the next preview, or until the bytes
    /// run out.
    private func step() -> Step {
        let chunks = state.withLock { state -> [Data]? in
            guard !state.closed else { return nil }
            defer { state.pending = [] }
            return state.pending
        }
        guard let chunks else { return .stop }
        return work.withLock { work -> Step in
            do throws(AlcedoError) {
                if work.scanner == nil { work.scanner = try ProgressiveJPEGScanner(options: decodingOptions) }
                guard let scanner = work.scanner else { return .stop }
                for chunk in chunks { try scanner.append(chunk) }
                while true {
                    switch try scanner.advance() {
                    case .needsData:
                        // The fastest scan: after every byte that has arrived, the newest scan.
                        if settings.isFastestScan, scanner.completedScan > work.lastRenderedScan, isDue(work) {
                            return try render(scanner, &work)
                        }
                        return .idle
                    case .notProgressive, .finished:
                        return .stop
                    case .scanCompleted:
                        // Each scan in turn; a scan too soon after the last preview is skipped.
                        if !settings.isFastestScan, isDue(work) { return try render(scanner, &work) }
                    }
                }
            } catch {
                return .stop
            }
        }
    }

    private func isDue(_ work: Work) -> Bool {
        guard let last = work.lastPreview, settings.scanInterval > 0 else { return true }  // NaN too
        // Past a billion seconds (infinity included, which Duration cannot hold): never again.
        guard settings.scanInterval < 1e9 else { return false }
        return now() - last >= .seconds(settings.scanInterval)
    }

    /// The preview of the newest complete scan: decoded, processed, blurred, modified.
    private func render(_ scanner: ProgressiveJPEGScanner, _ work: inout Work) throws(AlcedoError) -> Step {
        if state.withLock({ $0.closed }) { return .stop }
        counts.withLock { counts in
            counts.rendered += 1
            counts.rendering += 1
            counts.mostRendering = max(counts.mostRendering, counts.rendering)
        }
        defer { counts.withLock { $0.rendering -= 1 } }
        let scan = scanner.completedScan
        var image = try scanner.render()
        work.lastRenderedScan = scan
        work.lastPreview = now()
        if let processor {
            do throws(AlcedoError) {
                image = try processor.process(image)
            } catch {
                return .idle  // this preview only; the final image reports the processor's error
            }
        }
        let radius = settings.blurRadius(forScan: scan)
        if radius > 0, let blurred = try? BlurImageProcessor(blurRadius: radius).process(image) { image = blurred }
        if let modifier { image = modifier.modify(image) }
        return .preview(image)
    }
}
