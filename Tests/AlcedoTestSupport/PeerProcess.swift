import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The start-up wait and the stop shared by the reference peers the tests run (moto, thumbor).
public enum PeerProcess {
    /// Waits until `port` accepts connections (up to 30 s); kills `process` and throws with the
    /// end of its log when it does not, or when it exits first.
    public static func waitForPort(_ port: Int, of process: Process, name: String, log: URL) async throws {
        for _ in 0..<600 {
            if LoopbackPort.accepts(port) { return }
            if !process.isRunning { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        kill(process.processIdentifier, SIGKILL)
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        throw MotoS3ServerError("\(name) did not start on port \(port): \(text.suffix(2000))")
    }

    /// Kills the process still held (the peers keep their state in memory: nothing is lost),
    /// waits for it, and removes its folder.
    public static func stop(_ process: borrowing Mutex<Process?>, folder: URL) {
        let running = process.withLock { process -> Process? in
            defer { process = nil }
            return process
        }
        if let running, running.isRunning {
            kill(running.processIdentifier, SIGKILL)
            running.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: folder)
    }
}
