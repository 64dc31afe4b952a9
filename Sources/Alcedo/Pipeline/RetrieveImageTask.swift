import Synchronization

/// One caller's request made with a callback form: cancel it, or ask whether it was.
///
/// Cancelling removes this caller only: its completion handler gets
/// ``RequestErrorReason/cancelled`` (exactly once, like every completion), and the shared
/// work (download, decode, processing) stops only when no other caller waits for it.
public final class RetrieveImageTask: Sendable {
    private let task: Mutex<Task<Void, Never>?>
    private let cancelled = Mutex(false)

    /// The previews of a progressive JPEG as it downloads, in order, for a request made with
    /// ``AlcedoOptionsInfoItem/progressiveJPEG(_:)`` (see ``ImageProgressive``). The sequence
    /// ends before the completion handler is called (or at once without the option), and
    /// when the task is cancelled: no preview comes after either. Only the newest preview
    /// not yet read is kept (a slower reader skips previews, as the decoder skips scans), so a
    /// stream nobody reads holds one image at most; iterate it from one place only.
    ///
    /// ```swift
    /// let task = manager.retrieveImage(with: url, options: [.progressiveJPEG(.default)]) { result in … }
    /// for await preview in task.progressiveImages { show(preview) }
    /// ```
    public let progressiveImages: AsyncStream<AlcedoImage>
    let previewContinuation: AsyncStream<AlcedoImage>.Continuation

    init() {
        task = Mutex(nil)
        (progressiveImages, previewContinuation) = AsyncStream.makeStream(of: AlcedoImage.self,
                                                                          bufferingPolicy: .bufferingNewest(1))
    }

    /// Attaches the task running the request; cancels it at once if ``cancel()`` came first.
    func attach(_ running: Task<Void, Never>) {
        let alreadyCancelled = task.withLock { task in
            task = running
            return cancelled.withLock { $0 }
        }
        if alreadyCancelled { running.cancel() }
    }

    /// Cancels this caller's request; calling it again does nothing.
    public func cancel() {
        let running: Task<Void, Never>? = task.withLock { task in
            cancelled.withLock { $0 = true }
            return task
        }
        previewContinuation.finish()
        running?.cancel()
    }

    /// `true` once ``cancel()`` was called.
    public var isCancelled: Bool { cancelled.withLock { $0 } }

    /// Kingfisher's `isInitialized` (of its `DownloadTask`): whether the task can cancel its
    /// request. Always `true`: the request is attached before the call that returns the task
    /// returns, and a ``cancel()`` that comes first is applied when it starts.
    public var isInitialized: Bool { true }
}
