import Foundation

/// Runs the `alcedo` executable built next to the test bundle, as a user would.
enum AlcedoProcess {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        /// `true` when the process ended by a signal (a crash), not by exit.
        let crashed: Bool
    }

    /// The built `alcedo` executable: it sits in the same build folder as the test resources.
    static var executable: URL {
        Bundle.module.bundleURL.deletingLastPathComponent().appendingPathComponent("alcedo")
    }

    /// Runs `alcedo` with `arguments` and waits for it (standard input is empty).
    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both pipes before waiting, so a large output cannot fill a pipe and block the child.
        let group = DispatchGroup()
        nonisolated(unsafe) var errData = Data()
        group.enter()
        DispatchQueue.global().async {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Result(status: process.terminationStatus,
                      stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData, as: UTF8.self),
                      crashed: process.terminationReason == .uncaughtSignal)
    }
}
