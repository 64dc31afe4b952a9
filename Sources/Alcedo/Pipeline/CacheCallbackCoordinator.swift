import Synchronization

/// Decides when a freshly loaded image is handed to its caller, relative to its cache writes
/// (Kingfisher's internal type of the same name).
///
/// Without ``AlcedoOptionsInfoItem/waitForCache`` the caller gets the image as soon as the
/// writes are started; with it, once the processed image is written and, when the original is
/// kept too (``AlcedoOptionsInfoItem/cacheOriginalImage`` with a processor), once the original is
/// written as well, whichever finishes last. The writer reports each step with
/// ``apply(_:trigger:)``; the step that completes the wait runs `trigger` (the delivery),
/// exactly once, and later steps run nothing.
final class CacheCallbackCoordinator: Sendable {
    /// Where the wait stands.
    enum State: Sendable, Equatable {
        /// Nothing written yet (and, under ``AlcedoOptionsInfoItem/waitForCache``, nothing delivered).
        case idle
        /// The processed image is written; the original is still being written.
        case imageCached
        /// The original is written; the processed image is still being written.
        case originalImageCached
        /// The caller has been given the image.
        case done
    }

    /// A step of the writes.
    enum Action: Sendable {
        /// The writes have been started.
        case cacheInitiated
        /// The processed image (or, without a processor, the image itself) is written.
        case cachingImage
        /// The original kept beside the processed image is written.
        case cachingOriginalImage
    }

    private let shouldWaitForCache: Bool
    private let shouldCacheOriginal: Bool
    private let current = Mutex(State.idle)

    /// Creates a coordinator in the ``State/idle`` state.
    /// - Parameters:
    ///   - shouldWaitForCache: deliver after the writes (``AlcedoOptionsInfoItem/waitForCache``)
    ///     rather than when they start.
    ///   - shouldCacheOriginal: the original is written as well as the processed image, and is
    ///     waited for too.
    init(shouldWaitForCache: Bool, shouldCacheOriginal: Bool) {
        self.shouldWaitForCache = shouldWaitForCache
        self.shouldCacheOriginal = shouldCacheOriginal
    }

    /// The state now.
    var state: State { current.withLock { $0 } }

    /// Records `action` and runs `trigger` when it is the step the delivery waits for. The
    /// change of state is atomic, so steps reported from several threads deliver once;
    /// `trigger` runs outside the lock, on the calling thread.
    func apply(_ action: Action, trigger: () -> Void) {
        let delivers = current.withLock { state -> Bool in
            let (next, delivers) = transition(from: state, on: action)
            state = next
            return delivers
        }
        if delivers { trigger() }
    }

    /// The state after `action` in `state`, and whether the delivery is due.
    private func transition(from state: State, on action: Action) -> (State, Bool) {
        switch (state, action) {
        case (.done, _):
            return (.done, false)
        case (.idle, .cacheInitiated):
            return shouldWaitForCache ? (.idle, false) : (.done, true)
        case (.idle, .cachingImage):
            return shouldCacheOriginal ? (.imageCached, false) : (.done, true)
        case (.idle, .cachingOriginalImage):
            return (.originalImageCached, false)
        case (.imageCached, .cachingOriginalImage), (.originalImageCached, .cachingImage):
            return (.done, true)
        case (.imageCached, _), (.originalImageCached, _):
            // A step reported twice, or the start reported after a write: nothing changes.
            return (state, false)
        }
    }
}
