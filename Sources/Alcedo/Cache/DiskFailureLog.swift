import Logging
import Synchronization

/// Reports the state of one ``ImageCache``'s disk tier through its logger, one line per change:
/// the first failure as a warning (the disk tier is not working: a full or read-only disk, a
/// cache folder that is a file or a dangling link), the first successful write after failures
/// as a notice (writable again: caching on disk resumes). Failures in between are logged at
/// debug level, so a batch of thousands of images, or a server under load on a full disk,
/// says it once. The memory tier keeps working either way.
final class DiskFailureLog: Sendable {
    private let failing = Mutex(false)

    /// Whether the last write failed.
    var isFailing: Bool { failing.withLock { $0 } }

    /// Logs `error`, raised by `operation` on the folder `folder`.
    func record(_ error: AlcedoError, operation: String, folder: String, logger: Logger) {
        let changed = failing.withLock { failing in
            defer { failing = true }
            return !failing
        }
        let metadata: Logger.Metadata = ["folder": "\(folder)", "operation": "\(operation)"]
        if changed {
            logger.warning("disk cache not working, continuing without it (answers are not cached on disk): \(error)",
                           metadata: metadata)
        } else {
            logger.debug("disk cache \(operation) failed: \(error)", metadata: metadata)
        }
    }

    /// Notes a successful write to `folder`: logged once after failures.
    func recordSuccess(folder: String, logger: Logger) {
        // Read first without writing: the common case (no failure) takes the lock only to look.
        guard isFailing else { return }
        let changed = failing.withLock { failing in
            defer { failing = false }
            return failing
        }
        if changed {
            logger.notice("disk cache writable again, caching on disk resumes", metadata: ["folder": "\(folder)"])
        }
    }
}
