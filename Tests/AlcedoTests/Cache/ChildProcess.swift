import AlcedoTestSupport
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The `alcedo` executable run as a separate process, for the tests that need a second process
/// or one to kill: it is built next to the test bundle. Blocking pipe reads and waits run on
/// threads of their own, never on the cooperative thread pool or a Dispatch worker.
final class ChildProcess: Sendable {
    /// The built `alcedo`, or `nil` when it cannot be found (the tests that need it are skipped).
    static let executableURL: URL? = AlcedoBinary.isAvailable ? AlcedoBinary.url : nil

    static var isAvailable: Bool { executableURL != nil }

    fileprivate struct State {
        let process: Process
        let pipe: Pipe
        var buffer = Data()
    }

    /// The child's process id.
    let processIdentifier: Int32
    /// The process and its output, held by one reader at a time.
    private let state: Mutex<State>

    /// Starts `alcedo arguments…`, with `environment` added to this process's.
    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        guard let url = Self.executableURL else { throw CocoaError(.fileNoSuchFile) }
        let process = Process()
        let pipe = Pipe()
        process.executableURL = url
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try ProcessLaunch.run(process)
        processIdentifier = process.processIdentifier
        state = Mutex(State(process: process, pipe: pipe))
    }

    /// The next line the child prints, or `nil` at end of output.
    func nextLine() async -> String? {
        await withCheckedContinuation { continuation in
            // A thread of its own, not a Dispatch worker (about one per core on Linux): the read
            // blocks until the child prints, and must not starve the cache's I/O queues.
            Thread {
                continuation.resume(returning: self.state.withLock { $0.readLine() })
            }.start()
        }
    }

    /// Every remaining line, after the child exits; and its exit status.
    func finish() async -> (lines: [String], status: Int32) {
        await withCheckedContinuation { continuation in
            Thread {
                let result = self.state.withLock { state -> ([String], Int32) in
                    var lines: [String] = []
                    while let line = state.readLine() { lines.append(line) }
                    state.process.waitUntilExit()
                    return (lines, state.process.terminationStatus)
                }
                continuation.resume(returning: result)
            }.start()
        }
    }

    /// Kills the child with SIGKILL and waits for it.
    func kill() async {
        _ = Glibc.kill(processIdentifier, SIGKILL)
        _ = await finish()
    }

    /// The environment for a child that runs under a file-size limit: its code-coverage profile
    /// (written at exit when the tests run with `--enable-code-coverage`) goes to `folder`
    /// instead of the coverage folder, where the limit would truncate it and make merging
    /// the profiles fail.
    static func limitedFileSizeEnvironment(profileFolder folder: URL) -> [String: String] {
        ["LLVM_PROFILE_FILE": folder.appendingPathComponent("alcedo-limited-%p.profraw").path]
    }

    /// Parses the child's JSON lines.
    static func records(_ lines: [String]) -> [[String: String]] {
        lines.compactMap { try? JSONDecoder().decode([String: String].self, from: Data($0.utf8)) }
    }
}

extension ChildProcess.State {
    /// The next line of output, blocking until it comes; `nil` at end of output.
    mutating func readLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer = Data(buffer[(newline + 1)...])
                return line
            }
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty {
                guard !buffer.isEmpty else { return nil }
                defer { buffer = Data() }
                return String(decoding: buffer, as: UTF8.self)
            }
            buffer.append(chunk)
        }
    }
}
