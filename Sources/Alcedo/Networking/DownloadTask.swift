#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// One caller's download, returned by the callback forms of ``ImageDownloader``.
///
/// Cancelling it removes this caller only: its completion handler gets
/// ``RequestErrorReason/cancelled``, and the network request stops when no other caller of the
/// same URL is left.
public final class DownloadTask: Sendable {
    /// The URL being downloaded.
    public let url: URL
    /// The body's progress as it streams (the newest value is kept for a slow reader); the
    /// sequence ends when the download finishes, fails or is cancelled.
    public let progress: AsyncStream<DownloadProgress>

    private let cancelAction: @Sendable () -> Void
    private let cancelled = Mutex(false)
    private let started: StartFlag

    init(url: URL, progress: AsyncStream<DownloadProgress>, started: StartFlag = StartFlag(started: true),
         cancel: @escaping @Sendable () -> Void) {
        self.url = url
        self.progress = progress
        self.started = started
        self.cancelAction = cancel
    }

    /// Kingfisher's `isInitialized`: `false` from the call that returned this task until its
    /// response starts to arrive (or the download ends) when the request modifier is an
    /// ``AsyncImageDownloadRequestModifier`` (Kingfisher's task has no network request while such
    /// a modifier runs, and gives the one it starts to ``AsyncImageDownloadRequestModifier/onDownloadTaskStarted``);
    /// `true` otherwise. Alcedo's task can cancel its download either way.
    public var isInitialized: Bool { started.isStarted }

    /// Whether a download's network request is known to have started.
    final class StartFlag: Sendable {
        private let value: Mutex<Bool>

        init(started: Bool) {
            value = Mutex(started)
        }

        var isStarted: Bool { value.withLock { $0 } }

        func markStarted() {
            value.withLock { $0 = true }
        }
    }

    /// Cancels this caller's download; calling it again does nothing.
    public func cancel() {
        let first = cancelled.withLock { state in
            defer { state = true }
            return !state
        }
        if first { cancelAction() }
    }

    /// `true` once ``cancel()`` was called.
    public var isCancelled: Bool { cancelled.withLock { $0 } }
}
