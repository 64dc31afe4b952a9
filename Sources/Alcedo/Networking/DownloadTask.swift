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

    init(url: URL, progress: AsyncStream<DownloadProgress>, cancel: @escaping @Sendable () -> Void) {
        self.url = url
        self.progress = progress
        self.cancelAction = cancel
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
