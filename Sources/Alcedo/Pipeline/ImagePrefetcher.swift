#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// Loads images into the caches ahead of need: a list of URLs, resources or sources, a few at
/// a time, at low priority.
///
/// ```swift
/// let prefetcher = ImagePrefetcher(urls: urls, options: [.processor(thumbnail)]) { skipped, failed, completed in
///     print("\(completed.count) fetched, \(skipped.count) already cached, \(failed.count) failed")
/// }
/// prefetcher.start()          // or: let result = await prefetcher.prefetch()
/// ```
///
/// As in Kingfisher, a trailing closure is the completion handler; the progress block is
/// used only when labelled (`progressBlock:`). To learn *why* sources failed, take the
/// ``Result`` instead of the three lists: its ``Result/failures`` pair each failed source with
/// its ``AlcedoError``.
///
/// ```swift
/// ImagePrefetcher(urls: urls, progress: { so_far in … }) { result in
///     for failure in result.failures { print("\(failure.source): \(failure.error)") }
/// }.start()
/// ```
///
/// A source whose processed image is already cached (in memory or on disk) is *skipped* with
/// no load, unless the options hold ``AlcedoOptionsInfoItem/forceRefresh``. The others are
/// retrieved through the manager, at most ``maxConcurrentDownloads`` at a time, with
/// ``DownloadPriority/low`` unless the options name another priority; each ends *completed*
/// or *failed*. The progress block gets the three lists so far after each source, the
/// completion handler gets them once at the end, both on the options'
/// ``AlcedoOptionsInfoItem/callbackQueue(_:)``.
///
/// With ``AlcedoOptionsInfoItem/memoryBudget(_:)`` in the options, each decode also reserves its
/// working set from the budget first: big photos then run fewer at a time than
/// ``maxConcurrentDownloads``, and the prefetch stays within the budget.
///
/// A prefetcher runs once. ``stop()`` cancels the retrievals in flight and starts no more;
/// those cancelled and those never started end *failed*, with ``RequestErrorReason/cancelled``,
/// as in Kingfisher: skipped + failed + completed are always all the sources.
public final class ImagePrefetcher: Sendable {
    /// Called with the resources skipped, failed and completed so far (Kingfisher's element
    /// type, so `completed.map(\.downloadURL)` works); for prefetchers made from URLs or resources.
    public typealias PrefetcherProgressBlock = @Sendable (_ skippedResources: [any Resource], _ failedResources: [any Resource],
                                                          _ completedResources: [any Resource]) -> Void
    /// Called once, when the prefetcher has finished or was stopped, with the final lists of resources.
    public typealias PrefetcherCompletionHandler = @Sendable (_ skippedResources: [any Resource], _ failedResources: [any Resource],
                                                              _ completedResources: [any Resource]) -> Void
    /// Called with the sources skipped, failed and completed so far; for prefetchers made from sources.
    public typealias PrefetcherSourceProgressBlock = @Sendable (_ skipped: [Source], _ failed: [Source], _ completed: [Source]) -> Void
    /// Called once, when the prefetcher has finished or was stopped, with the final lists of sources.
    public typealias PrefetcherSourceCompletionHandler = @Sendable (_ skipped: [Source], _ failed: [Source], _ completed: [Source]) -> Void
    /// Called with the whole ``Result`` (the failures with their errors): after each source
    /// for progress, once at the end for completion.
    public typealias PrefetcherResultBlock = @Sendable (_ result: Result) -> Void

    /// What one prefetch did with each source.
    public struct Result: Sendable {
        /// Already cached: nothing was loaded.
        public var skipped: [Source] = []
        /// Could not be retrieved (or were cancelled by ``ImagePrefetcher/stop()``).
        public var failed: [Source] { failures.map(\.source) }
        /// Each failed source with the error it failed with, in the order they failed.
        public var failures: [SourceFailure] = []
        /// Retrieved and cached.
        public var completed: [Source] = []
    }

    private enum Outcome: Sendable {
        case skipped
        case failed(AlcedoError)
        case completed
    }

    private struct State {
        var maxConcurrentDownloads = 5
        var run: Task<Result, Never>?
        var stopped = false
        var result = Result()
    }

    /// The sources to prefetch, in order.
    public let sources: [Source]
    /// The options of every retrieval, after ``DownloadPriority/low``.
    public let options: AlcedoOptionsInfo
    /// The manager that retrieves and caches.
    public let manager: ImageManager

    private let progressBlock: PrefetcherResultBlock?
    private let completionHandler: PrefetcherResultBlock?
    private let state = Mutex(State())

    /// A prefetcher of `sources` whose blocks get the whole ``Result``, errors included.
    /// - Parameters:
    ///   - sources: the sources to prefetch, in order.
    ///   - options: the options of each retrieval (default `nil`: the manager's defaults),
    ///     with ``DownloadPriority/low`` unless they set a priority.
    ///   - manager: the manager (default ``ImageManager/shared``).
    ///   - progress: called after each source (default `nil`).
    ///   - completion: called once at the end (a trailing closure goes here).
    public init(sources: [Source], options: AlcedoOptionsInfo? = nil, manager: ImageManager = .shared,
                progress: PrefetcherResultBlock? = nil, completion: PrefetcherResultBlock?) {
        self.sources = sources
        self.options = [.downloadPriority(.low)] + (options ?? [])
        self.manager = manager
        self.progressBlock = progress
        self.completionHandler = completion
    }

    /// A prefetcher of resources whose blocks get the whole ``Result`` (see ``init(sources:options:manager:progress:completion:)``).
    public convenience init(resources: [any Resource], options: AlcedoOptionsInfo? = nil, manager: ImageManager = .shared,
                            progress: PrefetcherResultBlock? = nil, completion: PrefetcherResultBlock?) {
        self.init(sources: resources.map { $0.convertToSource() }, options: options, manager: manager,
                  progress: progress, completion: completion)
    }

    /// A prefetcher of URLs whose blocks get the whole ``Result`` (see ``init(sources:options:manager:progress:completion:)``).
    public convenience init(urls: [URL], options: AlcedoOptionsInfo? = nil, manager: ImageManager = .shared,
                            progress: PrefetcherResultBlock? = nil, completion: PrefetcherResultBlock?) {
        self.init(resources: urls, options: options, manager: manager, progress: progress, completion: completion)
    }

    /// A prefetcher of `sources` (Kingfisher's form).
    /// - Parameters:
    ///   - sources: the sources to prefetch, in order.
    ///   - options: the options of each retrieval (default `nil`: the manager's defaults),
    ///     with ``DownloadPriority/low`` unless they set a priority.
    ///   - manager: the manager (default ``ImageManager/shared``).
    ///   - progressBlock: called after each source (default `nil`); used only when labelled.
    ///   - completionHandler: called once at the end (default `nil`).
    public convenience init(sources: [Source], options: AlcedoOptionsInfo? = nil, manager: ImageManager = .shared,
                            progressBlock: PrefetcherSourceProgressBlock? = nil,
                            completionHandler: PrefetcherSourceCompletionHandler? = nil) {
        self.init(sources: sources, options: options, manager: manager,
                  progress: Self.resultBlock(progressBlock), completion: Self.resultBlock(completionHandler))
    }

    /// A block of the three lists of sources as a block of the whole result.
    private static func resultBlock(_ block: PrefetcherSourceProgressBlock?) -> PrefetcherResultBlock? {
        guard let block else { return nil }
        return { result in block(result.skipped, result.failed, result.completed) }
    }

    /// A block of the three lists of resources as a block of the whole result.
    private static func resultBlock(_ block: PrefetcherProgressBlock?) -> PrefetcherResultBlock? {
        guard let block else { return nil }
        return { result in
            block(result.skipped.compactMap(\.asResource), result.failed.compactMap(\.asResource),
                  result.completed.compactMap(\.asResource))
        }
    }

    /// A prefetcher of `sources` with a completion handler: `ImagePrefetcher(sources: sources) { skipped, failed, completed in … }`.
    public convenience init(sources: [Source], options: AlcedoOptionsInfo? = nil, manager: ImageManager = .shared,
                            completionHandler: PrefetcherSourceCompletionHandler?) {
        self.init(sources: sources, options: options, manager: manager, progressBlock: nil, completionHandler: completionHandler)
    }

    /// A prefetcher of resources (Kingfisher's form; see ``init(sources:options:manager:progressBlock:completionHandler:)``);
    /// the blocks get the resources.
    public convenience init(resources: [any Resource], options: AlcedoOptionsInfo? = nil, manager: ImageManager = .shared,
                            progressBlock: PrefetcherProgressBlock? = nil, completionHandler: PrefetcherCompletionHandler? = nil) {
        self.init(sources: resources.map { $0.convertToSource() }, options: options, manager: manager,
                  progress: Self.resultBlock(progressBlock), completion: Self.resultBlock(completionHandler))
    }

    /// A prefetcher of resources with a completion handler: `ImagePrefetcher(resources: resources) { skipped, failed, completed in … }`.
    public convenience init(resources: [any Resource], options: AlcedoOptionsInfo? = nil, manager: ImageManager = .shared,
                            completionHandler: PrefetcherCompletionHandler?) {
        self.init(resources: resources, options: options, manager: manager, progressBlock: nil, completionHandler: completionHandler)
    }

    /// A prefetcher of URLs (Kingfisher's form; see ``init(sources:options:manager:progressBlock:completionHandler:)``).
    public convenience init(urls: [URL], options: AlcedoOptionsInfo? = nil, manager: ImageManager = .shared,
                            progressBlock: PrefetcherProgressBlock? = nil, completionHandler: PrefetcherCompletionHandler? = nil) {
        self.init(resources: urls, options: options, manager: manager,
                  progressBlock: progressBlock, completionHandler: completionHandler)
    }

    /// A prefetcher of URLs with a completion handler: `ImagePrefetcher(urls: urls) { skipped, failed, completed in … }`.
    public convenience init(urls: [URL], options: AlcedoOptionsInfo? = nil, manager: ImageManager = .shared,
                            completionHandler: PrefetcherCompletionHandler?) {
        self.init(urls: urls, options: options, manager: manager, progressBlock: nil, completionHandler: completionHandler)
    }

    /// How many sources are retrieved at the same time (default 5, at least 1). Read when the
    /// prefetch starts.
    public var maxConcurrentDownloads: Int {
        get { state.withLock { $0.maxConcurrentDownloads } }
        set { state.withLock { $0.maxConcurrentDownloads = max(1, newValue) } }
    }

    /// Starts prefetching in the background; calling it again does nothing.
    public func start() {
        _ = runTask()
    }

    /// Prefetches (starting if needed) and returns when every source is done or the
    /// prefetcher was stopped.
    @discardableResult
    public func prefetch() async -> Result {
        await runTask().value
    }

    /// Cancels the retrievals in flight and starts no more. The completion handler is still
    /// called, once.
    public func stop() {
        let run = state.withLock { state in
            state.stopped = true
            return state.run
        }
        run?.cancel()
    }

    /// The lists so far.
    public var result: Result { state.withLock { $0.result } }

    private func runTask() -> Task<Result, Never> {
        state.withLock { state in
            if let run = state.run { return run }
            let run = Task { await self.run() }
            state.run = run
            return run
        }
    }

    private func run() async -> Result {
        let (width, stopped) = state.withLock { ($0.maxConcurrentDownloads, $0.stopped) }
        let parsed = manager.parsedOptions(options)
        var pending = sources.makeIterator()
        if !stopped {
            pending = await withTaskGroup(of: (Source, Outcome).self) { group in
                var pending = pending
                var running = 0
                while running < width, let source = pending.next() {
                    group.addTask { await self.prefetch(source, options: parsed) }
                    running += 1
                }
                while let (source, outcome) = await group.next() {
                    record(source, outcome, callbackQueue: parsed.callbackQueue)
                    if Task.isCancelled || state.withLock({ $0.stopped }) { continue }
                    if let source = pending.next() {
                        group.addTask { await self.prefetch(source, options: parsed) }
                    }
                }
                return pending
            }
        }
        // Stopped: the sources never started count as failed (cancelled), as in Kingfisher, so
        // that skipped + failed + completed are all the sources.
        let notStarted = Array(IteratorSequence(pending))
        let result = state.withLock { state in
            state.result.failures += notStarted.map { SourceFailure(source: $0, error: .requestError(reason: .cancelled)) }
            return state.result
        }
        if let completionHandler {
            parsed.callbackQueue.execute { completionHandler(result) }
        }
        return result
    }

    private func prefetch(_ source: Source, options: AlcedoParsedOptionsInfo) async -> (Source, Outcome) {
        if Task.isCancelled { return (source, .failed(.requestError(reason: .cancelled))) }
        if !options.forceRefresh, let resolved = try? manager.resolved(source, options: options) {
            let request = LoadRequest(source: resolved, options: options, manager: manager)
            // Answered at once (the memory cache, then the disk index): thousands of sources
            // checked at the same time wait for no I/O thread.
            let cached = request.targetCache.imageCachedType(forKey: request.key, processorIdentifier: request.variant,
                                                             forcedExtension: options.forcedExtension)
            if cached.cached {
                // Loading a disk hit stores it in memory.
                if cached == .disk && options.alsoPrefetchToMemory {
                    _ = try? await manager.retrieve(source, options: options, progress: nil)
                }
                return (source, .skipped)
            }
        }
        do throws(AlcedoError) {
            _ = try await manager.retrieve(source, options: options, progress: nil)
            return (source, .completed)
        } catch {
            return (source, .failed(error))
        }
    }

    private func record(_ source: Source, _ outcome: Outcome, callbackQueue: CallbackQueue) {
        let result = state.withLock { state in
            switch outcome {
            case .skipped: state.result.skipped.append(source)
            case .failed(let error): state.result.failures.append(SourceFailure(source: source, error: error))
            case .completed: state.result.completed.append(source)
            }
            return state.result
        }
        if let progressBlock {
            callbackQueue.execute { progressBlock(result) }
        }
    }
}
