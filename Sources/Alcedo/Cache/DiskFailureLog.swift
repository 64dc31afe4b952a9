import Logging
import Synchronization

/// Reports the disk failures of one ``ImageCache`` through its logger: the first failure as a
/// warning (the disk tier is not working: a cache folder that is a file or a dangling link, a
/// full or read-only disk), the later ones at debug level, so a batch of thousands of images
/// says it once. The memory tier keeps working either way.
final class DiskFailureLog: Sendable {
    private let warned = Mutex(false)

    /// Logs `error`, raised by `operation` on the folder `folder`.
    func record(_ error: AlcedoError, operation: String, folder: String, logger: Logger) {
        let first = warned.withLock { warned in
            defer { warned = true }
            return !warned
        }
        let metadata: Logger.Metadata = ["folder": "\(folder)", "operation": "\(operation)"]
        if first {
            logger.warning("disk cache not working, continuing with the memory cache only: \(error)", metadata: metadata)
        } else {
            logger.debug("disk cache \(operation) failed: \(error)", metadata: metadata)
        }
    }
}
