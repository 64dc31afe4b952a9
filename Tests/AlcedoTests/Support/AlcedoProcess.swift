import AlcedoTestSupport
import Foundation
import Synchronization

/// Runs the `alcedo` executable built next to the test bundle, as a user would.
enum AlcedoProcess {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        /// `true` when the process ended by a signal (a crash), not by exit.
        let crashed: Bool
        /// `true` when the process was killed because it ran past its time bound.
        var timedOut = false
    }

    /// The `alcedo` under test (``AlcedoBinary/url``: the build folder's, linked as shipped).
    static var executable: URL { AlcedoBinary.url }

    /// Runs `alcedo` with `arguments` and waits for it. Standard input is `input`, or empty
    /// when it is `nil` (default); a command given `input` must read all of it. With a
    /// `timeout`, a process still running after it is killed (a bound, not a timing claim).
    /// ``run(_:environment:input:timeout:)`` on a thread of its own, so an async test waits
    /// for the child without blocking a thread of the cooperative pool.
    static func runDetached(_ arguments: [String], environment: [String: String] = [:], input: Data? = nil,
                            timeout: Duration? = nil, executable: URL? = nil) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Swift.Result {
                    try run(arguments, environment: environment, input: input, timeout: timeout, executable: executable)
                })
            }.start()
        }
    }

    /// `executable` runs another copy of the binary (default: the built one).
    static func run(_ arguments: [String], environment: [String: String] = [:], input: Data? = nil,
                    timeout: Duration? = nil, executable: URL? = nil) throws -> Result {
        let process = Process()
        process.executableURL = executable ?? Self.executable
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let stdin = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : stdin
        try ProcessLaunch.run(process)
        if let input {
            // Written from another thread, so a child that does not read cannot block this one.
            // A thread of its own: a blocked write must not hold one of Dispatch's few workers.
            Thread {
                try? stdin.fileHandleForWriting.write(contentsOf: input)
                try? stdin.fileHandleForWriting.close()
            }.start()
        }
        let killed = KillFlag()
        if let timeout {
            let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
            let pid = process.processIdentifier
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [weak process] in
                guard let process, process.isRunning else { return }
                killed.set()
                kill(pid, SIGKILL)
            }
        }
        // Read both pipes before waiting, so a large output cannot fill a pipe and block the child.
        let group = DispatchGroup()
        nonisolated(unsafe) var errData = Data()
        group.enter()
        // A thread of its own, not a Dispatch worker: on Linux the global queue has about one
        // worker per core, and a read that blocks for the child's life would starve the rest.
        Thread {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        var result = Result(status: process.terminationStatus,
                            stdout: String(decoding: outData, as: UTF8.self),
                            stderr: String(decoding: errData, as: UTF8.self),
                            crashed: process.terminationReason == .uncaughtSignal && !killed.isSet)
        result.timedOut = killed.isSet
        return result
    }

    /// Set once, from the timer's thread, when the process was killed for its time bound.
    private final class KillFlag: Sendable {
        private let flag = Mutex(false)
        func set() { flag.withLock { $0 = true } }
        var isSet: Bool { flag.withLock { $0 } }
    }
}
