import Synchronization

/// The state a target keeps for the binding: which request is current, and its task.
///
/// Give each target its own: `let imageBinding = ImageBinding()`. Every change of the
/// displayed image goes through this object's lock, so a result can never be shown after a
/// newer request began, and the target's ``ImageDisplaying/display(_:)`` is never called
/// concurrently for one target.
public final class ImageBinding: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var source: Source?
        var task: RetrieveImageTask?
        /// The current request has ended (its result, if any, is shown): no preview may follow.
        var finished = false
        /// The request that ``cancelCurrent()`` cancelled last, if any.
        var cancelledGeneration: UInt64?
    }

    private let state = Mutex(State())

    public init() {}

    /// The source of the current request, `nil` when none was set or it was set to `nil`.
    public var currentSource: Source? { state.withLock { $0.source } }

    /// `true` when `generation` is still the current request.
    func isCurrent(_ generation: UInt64) -> Bool { state.withLock { $0.generation == generation } }

    /// Starts a request and shows `initial` (when given) on `target`. The previous request is
    /// not cancelled (as in Kingfisher, its download and caching go on; its result is not shown).
    /// Call ``cancelCurrent()`` first to stop it.
    /// - Returns: the new request's generation.
    func begin(_ source: Source?, showing initial: AlcedoImage??, on target: some ImageDisplaying) -> UInt64 {
        state.withLock { state -> UInt64 in
            state.generation &+= 1
            state.source = source
            state.finished = false
            state.task = nil
            if let initial { target.display(initial) }
            return state.generation
        }
    }

    /// Records the task of request `generation`, unless a newer one began or it already ended.
    func attach(_ task: RetrieveImageTask, generation: UInt64, finished: Bool) {
        state.withLock { state in
            if state.generation == generation && !finished { state.task = task }
        }
    }

    /// Ends request `generation`: when it is still current, shows `image` (when given) and
    /// returns `true`; otherwise changes nothing and returns `false`.
    func finish(_ generation: UInt64, showing image: AlcedoImage??, on target: some ImageDisplaying) -> Bool {
        state.withLock { state in
            guard state.generation == generation else { return false }
            state.task = nil
            state.finished = true
            if let image { target.display(image) }
            return true
        }
    }

    /// Shows a progressive preview of request `generation` while it is current and has not
    /// ended: a preview never replaces the final image nor a newer request's.
    @discardableResult
    func showPreview(_ generation: UInt64, image: AlcedoImage, on target: some ImageDisplaying) -> Bool {
        state.withLock { state in
            guard state.generation == generation, !state.finished else { return false }
            target.display(image)
            return true
        }
    }

    /// Cancels the current request's task, if any.
    func cancelCurrent() {
        let task = state.withLock { state -> RetrieveImageTask? in
            if state.task != nil { state.cancelledGeneration = state.generation }
            return state.task
        }
        task?.cancel()
    }

    /// `true` when request `generation` was stopped by ``cancelCurrent()``: its completion
    /// handler gets the cancellation itself even if a newer request began since.
    func wasCancelled(_ generation: UInt64) -> Bool {
        state.withLock { $0.cancelledGeneration == generation }
    }
}
