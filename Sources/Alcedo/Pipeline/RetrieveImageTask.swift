import Synchronization

/// One caller's request made with a callback form: cancel it, or ask whether it was.
///
/// Cancelling removes this caller only: its completion handler gets
/// ``RequestErrorReason/cancelled`` (exactly once, like every completion), and the shared
/// work (download, decode, processing) stops only when no other caller waits for it.
public final class RetrieveImageTask: Sendable {
    private let task: Mutex<Task<Void, Never>?>
    private let cancelled = Mutex(false)

    init() {
        task = Mutex(nil)
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
        running?.cancel()
    }

    /// `true` once ``cancel()`` was called.
    public var isCancelled: Bool { cancelled.withLock { $0 } }
}
