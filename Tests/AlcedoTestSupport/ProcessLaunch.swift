import Foundation
import Synchronization

/// Starts child processes one at a time.
///
/// Foundation's `Process.run()` on Linux is not safe to call from several threads at once: a
/// launch racing another one crashed inside `run()` while copying its spawn arguments, and the
/// test suites run in parallel. Every test that starts a process goes through this lock. Only
/// the launch is serialised: the children run, and are waited for, concurrently.
public enum ProcessLaunch {
    private static let lock = Mutex(())

    /// Runs `process.run()` under the launch lock.
    public static func run(_ process: Process) throws {
        try lock.withLock { _ in try process.run() }
    }
}
